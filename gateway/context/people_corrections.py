"""A turn that corrects ("actually", "na verdade", "quise decir"): what it states after
the cue supersedes an earlier value, the customer's or the agent's. Pure.
"""

from __future__ import annotations

import itertools

from gateway.context.common_words import is_common
from gateway.context.first_names import is_first_name
from gateway.context.people_answers import is_laugh
from gateway.context.people_conversation import WORD_KINDS, Conversation
from gateway.context.people_hits import Hit, free, proper
from gateway.context.people_patterns import (
    ADDITION,
    BARE_CODE,
    BARE_PROPER,
    BARE_SLIP,
    BARE_START,
    BARE_VALUE,
    CODE_DIGITS,
    CORRECTION,
    CORRECTION_ANYWHERE,
    DENIAL_ANYWHERE,
    KIND_CUE,
    MID_CORRECTION,
    PHONE,
    RESTATED,
    RESTATING,
    RUN_ON_WORDS,
    SENTENCE_END,
    STRONG_CUE,
    TOKEN_WORD,
)
from gateway.context.people_quantities import amount_spans, date_spans
from gateway.context.people_text import SpanMatch, first_matches, next_word, word_set
from gateway.context.people_words import CENTS_JOINERS, OTHERS
from gateway.context.places import is_city

# What a bare corrected number can be, by its shape.
_DIGIT_KINDS = ("order", "sku", "phone", "amount")
_CODE_KINDS = ("order", "sku")
PHONE_DIGITS = 8  # the fewest digits a phone number has
RESTATED_CHARS = 160  # how far after an agent's correction cue the value it restates may be
RESTATING_WORDS = 6  # between a cue said mid-sentence and the value it restates, at most
# After a name, words that say it is someone else's: "no it's Ana Lima who placed it".
_RELATIVE = word_set("who whom that which que quem quien qual cual")


def corrections(
    folded: str, hits: list[Hit], seen: Conversation, english: bool, agent: bool = False
) -> None:
    """A turn that corrects ("actually", "na verdade", "quise decir"): what it states
    after the cue supersedes the newest earlier value of its kind. A customer's bare value
    ("scratch that, Austin") takes the kind a word of its sentence says ("city", "name"),
    else the kind `_bare_correction` reads from the value; an agent's amount or date is
    the promise or deadline it restates, and in a call's run-on speech a cue may open it
    mid-sentence. A customer's cue said mid-sentence ("vou viajar na verdade e Belo
    Horizonte digitei errado") corrects only a kind already heard, or a name or city an
    earlier conversation gave (`elsewhere`). After a cue that says
    a value was wrong ("scratch that", "o correto é") a bare value may run on into the
    turn ("scratch that boston and another thing"), and a capitalised one may run on when
    the fewest words say nothing ("errei o certo é Thiago Costa liguei ontem"); after a
    weak one ("actually", "no, it's") or mid-sentence it must end its clause or be
    followed by words of a slip ("digitei errado"), unless a list names it (`_listed`: "wait
    no it's atlanta and like my wife...", a big city or a first name and surname), and
    then it corrects only a kind already heard. Mid-sentence cues are read in turn until
    one corrects. "actually" said of someone else ("the amount you actually paid")
    corrects nothing. An agent's cues are read in turn until one restates a value: "Não
    é essa a experiência que queremos" opens many replies and corrects nothing."""
    if agent:
        mid = _mid_sentence(folded, english)
        for cue in [*first_matches(CORRECTION, folded), *([mid] if mid else [])]:
            if _corrected(folded, cue, hits, seen, english, agent=True):
                return
        return
    opening = CORRECTION.search(folded)
    if opening is not None:
        _corrected(folded, opening, hits, seen, english)
        return
    # Said mid-sentence: the first few cues in turn, until one corrects ("what actually
    # happened ... and also correction austin").
    for cue in first_matches(CORRECTION_ANYWHERE, folded):
        if _said_of_others(folded, cue.start(), cue.end()):
            continue
        if _corrected(folded, cue, hits, seen, english, anywhere=True):
            return
    # A denial run on into the turn ("for exactly this reason wait no it's Toronto
    # honestly"): only a value a list names.
    for cue in first_matches(DENIAL_ANYWHERE, folded):
        if _corrected(folded, cue, hits, seen, english, anywhere=True, listed_only=True):
            return


def _corrected(
    folded: str,
    cue: SpanMatch,
    hits: list[Hit],
    seen: Conversation,
    english: bool,
    *,
    agent: bool = False,
    anywhere: bool = False,
    listed_only: bool = False,
) -> bool:
    """`corrections` from one cue; whether a value was taken (a customer's cue that
    opens the turn ends the reading either way)."""
    after = folded[cue.end() : cue.end() + 80]
    strong = not anywhere and STRONG_CUE.search(cue.group(0) or "") is not None
    bare = None if agent or listed_only else (BARE_VALUE if strong else BARE_SLIP).search(after)
    if bare is None and not agent and not listed_only:
        bare = _run_on_code(after)
    listed = None if agent else _listed(folded, cue.end())
    # "actually, I have another order": a second value, not a corrected one; "scratch that
    # boston and another thing" corrects before it adds.
    first = bare.start(1) if bare else listed[0] - cue.end() if listed else 60
    if ADDITION.search(after[:first]):
        return False
    # "errei o certo é Thiago Costa liguei ontem": the fewest words ("certo") say nothing;
    # a capitalised run is the value.
    proper_run = BARE_PROPER.search(after) if strong and not agent else None
    earlier = sorted((h.start, h.kind) for h in hits if h.start < cue.start())
    before = Conversation([*seen.recent, *(kind for _, kind in earlier)], words=seen.words)
    if anywhere:
        return (
            ("amount" in before.recent and _bare_amount(folded, cue, hits, english))
            or _bare_correction(folded, cue, bare, hits, before, known_only=True)
            or _listed_correction(folded, cue, listed, hits, before)
        )
    if agent:
        kind = _restated(folded, cue, hits, before, english)
        if kind:
            _mark(hits, cue, kind)
        return bool(kind)
    taken = (
        _bare_amount(folded, cue, hits, english)
        or _bare_correction(folded, cue, bare, hits, before)
        or bool(proper_run and _bare_correction(folded, cue, proper_run, hits, before))
        or _listed_correction(folded, cue, listed, hits, before)
    )
    _mark(hits, cue)
    return taken


def _bare_amount(folded: str, cue: SpanMatch, hits: list[Hit], english: bool) -> bool:
    """An amount said as people say one, right after a customer's cue: in two parts ("o
    certo é 171 e 90") or in slang ("corrige aí 140 conto"), which only where money is
    spoken of is money; what a cue restates is. Whether it was taken."""
    at = cue.end()
    lead = BARE_START.search(folded[at : at + 80])
    begin = at + (lead.end() if lead else 0)
    span = next(amount_spans(folded[begin : begin + 80], english, money=True), None)
    if span is None or span[0] != 0 or not free(hits, begin, begin + span[1]):
        return False
    hits.append(Hit("amount", begin, begin + span[1], cue.start(), True))
    _mark(hits, cue)
    return True


def _mark(hits: list[Hit], cue: SpanMatch, kind: str = "") -> None:
    """A cue corrects the first value of each kind said after it (of `kind` alone, when
    given: what an agent's cue restates): in "Me enganei antes, o correto é dia 27/10 ...
    em até dez dias úteis" the date is corrected and the later time frame is a value of
    its own, which must not supersede the corrected one."""
    firsts: dict[str, int] = {}
    for h in sorted(hits, key=lambda h: h.start):
        if h.start >= cue.start() and kind in ("", h.kind):
            firsts.setdefault(h.kind, h.start)
    hits[:] = [
        h._replace(correction=firsts.get(h.kind) == h.start) if kind in ("", h.kind) else h
        for h in hits
    ]


def _listed(folded: str, at: int) -> tuple[int, int, str] | None:
    """A value run on into the turn after a cue at `at`, read only where a list says what
    it is ("wait no it's atlanta and like my wife..."): the most words (up to four) that
    name a big city, else a listed first name and at least one more name word that
    `proper` keeps, not followed by "who" or "que" (someone else); (start, end, kind),
    kind "" when the words could be either ("sofia")."""
    m = RUN_ON_WORDS.search(folded[at : at + 80])
    if m is None:
        return None
    start = at + m.start(1)
    ends = [start + w.end() for w in TOKEN_WORD.finditer(m.group(1) or "")]
    city = next((e for e in reversed(ends) if is_city(folded[start:e])), None)
    person = is_first_name(folded[start : ends[0]]) if ends else False
    name = proper(folded, start, ends[-1], True, True) if person else None
    if city is not None and (name is None or name[1] <= city):
        return start, city, "city" if name is None else ""
    if name is None or name[0] != start or len(folded[start : name[1]].split()) < 2:
        return None  # "no, es Juan el que recibe": a first name alone is someone's
    if next_word(folded, name[1]) in _RELATIVE:
        return None  # "no it's Ana Lima who placed the order"
    return start, name[1], "name"


def _listed_correction(
    folded: str,
    cue: SpanMatch,
    listed: tuple[int, int, str] | None,
    hits: list[Hit],
    before: Conversation,
) -> bool:
    """`_listed`'s value corrects the newest value of its kind, which must have been heard
    (in this conversation, or a name or city lent by an earlier one): a run-on guess never
    makes a kind of its own. Whether it was taken."""
    if listed is None:
        return False
    start, end, kind = listed
    kind = kind or _said_kind(folded, cue.start(), start, end) or before.last_of(WORD_KINDS)
    known = kind in before.recent or kind in before.words
    if not kind or not known or not free(hits, start, end):
        return False
    hits.append(Hit(kind, start, end, cue.start(), True))
    _mark(hits, cue)
    return True


def _run_on_code(after: str) -> SpanMatch | None:
    """An identifier run on into the turn after a weak cue ("no, wait, it's 214573 I
    paid for faster shipping"): CODE_DIGITS digits or more."""
    code = BARE_CODE.search(after)
    digits = 0 if code is None else sum(c.isdigit() for c in code.group(1) or "")
    return code if digits >= CODE_DIGITS else None


def _said_of_others(folded: str, start: int, end: int) -> bool:
    """Whether a cue said mid-sentence tells what someone else did: "the amount you
    actually paid", not "thank you actually it's Denver"."""
    before = folded[max(0, start - 12) : start].split()
    restated = RESTATED.search(folded[end : end + 12]) is not None
    return bool(before) and before[-1].lower() in OTHERS and not restated


def _bare_correction(
    folded: str,
    cue: SpanMatch,
    bare: SpanMatch | None,
    hits: list[Hit],
    before: Conversation,
    known_only: bool = False,
) -> bool:
    """The bare value after a customer's correction cue, of the kind its sentence says,
    else of the kind whose heard values share a word with it, else a number's kind by its
    shape and a word's by `_place_or_person`. `known_only` (a cue said mid-sentence):
    only a kind already heard, or a name or city lent from an earlier conversation.
    Whether it found one."""
    if bare is None:
        return False
    start, end = cue.end() + bare.start(1), cue.end() + bare.end(1)
    value, kind = bare.group(1) or "", ""
    if any(c.isdigit() for c in value):
        kind = "" if _in_two_parts(folded, end) else _number_kind(value, before)
    elif proper(folded, start, end, True, True) == (start, end):
        kind = (
            _said_kind(folded, cue.start(), start, end)
            or before.sharing(value)
            or _place_or_person(value, before)
        )
    if known_only and kind not in before.recent and kind not in before.words:
        return False
    if kind and free(hits, start, end):  # the cue introduces it: no problem starts there
        hits.append(Hit(kind, start, end, cue.start(), True))
        if known_only:
            _mark(hits, cue)
        return True
    return False


def _in_two_parts(folded: str, end: int) -> bool:
    """A number ending at `end` that an amount's second part follows ("o certo é 65 e
    50"): no bare value."""
    after = folded[end : end + 16].split()
    return len(after) >= 2 and after[0].lower() in CENTS_JOINERS and after[1][:1].isdigit()


def _place_or_person(value: str, before: Conversation) -> str:
    """A bare corrected word with nothing else to say its kind: a big city's name
    (gateway.context.places) that is no first name people are given is the city ("foi
    mal, o correto é Goiânia"); a first name that is no big city's the name ("o correto
    é Beatriz Pereira", also when no name was heard); either both or neither ("Victoria",
    "Nike"), the kind said last, if any."""
    words = value.split()
    city, person = is_city(value), bool(words) and is_first_name(words[0])
    if city != person:
        return "city" if city else "name"
    if not city and (is_common(words[0]) or is_laugh(words[0])):
        # "I meant Frozen", "quis dizer amanhã": an everyday word, no name; "I mean
        # hahaha": a laugh, neither
        return ""
    return before.last_of(WORD_KINDS)


def _number_kind(value: str, before: Conversation) -> str:
    """What a bare corrected number is: a phone has 8 digits or more ("na verdade e
    494416" corrects an order, not the phone said last), and one grouped like a phone
    ("en realidad es 667-905-981", not "2024-556678") is the phone once one was given,
    whatever came last; one with letters ("ord-961491") is a code, and an integer of
    CODE_DIGITS digits or more no amount while a code or phone could be it, and one too
    short for a phone the order once one was given (a product's code has letters);
    else the kind of the latest number that could be it."""
    digits = sum(c.isdigit() for c in value)
    if digits < 2:
        return ""
    if _phone_shaped(value, digits) and "phone" in before.recent:
        return "phone"
    if any(c.isalpha() for c in value):  # "corrige aí: ord-961491": a code, no amount
        sku = value.upper().startswith("SKU")
        return "sku" if sku else before.last_of(_CODE_KINDS) or "order"
    kinds = (
        _DIGIT_KINDS if digits >= PHONE_DIGITS else tuple(k for k in _DIGIT_KINDS if k != "phone")
    )
    if digits >= CODE_DIGITS and value.isdigit():  # "corrige aí 901205": no sum is said so,
        if digits < PHONE_DIGITS and "order" in before.recent:  # a product's has letters
            return "order"
        return before.last_of(tuple(k for k in kinds if k != "amount")) or before.last_of(kinds)
    return before.last_of(kinds)


def _phone_shaped(value: str, digits: int) -> bool:
    """Grouped as phones are read: three groups or more ("667-905-981"), or the shape
    of PHONE ("91622-9220"); "2024-556678" is a code."""
    if digits < PHONE_DIGITS:
        return False
    shape = PHONE.search(value)
    whole = shape is not None and shape.start() == 0 and shape.end() == len(value)
    return whole or value.strip("-").count("-") >= 2


def _said_kind(folded: str, cue: int, start: int, end: int) -> str:
    """Whether the sentence of a correction says the bare value at folded[start:end] is a
    city or a name: the word of KIND_CUE nearest before it, else the first after it."""
    opened = [m.end() for m in SENTENCE_END.finditer(folded[:cue])]
    begin = opened[-1] if opened else 0
    closed = SENTENCE_END.search(folded, end)
    said = list(KIND_CUE.finditer(folded[begin : closed.start() if closed else len(folded)]))
    ahead = [m for m in said if begin + m.start() < start]
    found = ahead[-1] if ahead else (said[0] if said else None)
    return "" if found is None else "city" if found.group(1) is not None else "name"


def _first_value(folded: str, at: int, english: bool) -> tuple[int, int, str] | None:
    """The first amount (a "promise") or date (a "deadline") in the RESTATED_CHARS from
    `at`, with its offsets from there."""
    after = folded[at : at + RESTATED_CHARS]
    # Restating a promise speaks of money: "o correto é 159 e 99" needs no "reembolso".
    found = [(*span, "promise") for span in amount_spans(after, english, money=True)]
    found += [(*span, "deadline") for span in date_spans(after)]
    return min(found, default=None)


def _mid_sentence(folded: str, english: bool) -> SpanMatch | None:
    """An agent's cue of MID_CORRECTION that an amount or date follows past at most
    RESTATING_WORDS restating words: "we'll make the correction in our system by friday"
    corrects nothing."""
    for m in itertools.islice(MID_CORRECTION.finditer(folded), 8):  # a few cues, not a paste
        value = _first_value(folded, m.end(), english)
        lead = folded[m.end() : m.end() + value[0]] if value else ""
        if value and len(lead.split()) <= RESTATING_WORDS and RESTATING.search(lead):
            return m
    return None


def _restated(
    folded: str, cue: SpanMatch, hits: list[Hit], before: Conversation, english: bool
) -> str:
    """The kind of the first amount (a promise) or date (a deadline) after an agent's
    correction cue, when only restating words stand between them ("Me enganei antes, o
    correto é 34,00 reais"), or the agent gave one of its kind before and it is in the
    cue's sentence; "" when the cue restates none."""
    value = _first_value(folded, cue.end(), english)
    if value is None:
        return ""
    start, end, kind = value
    lead = folded[cue.end() : cue.end() + start]
    stated = before.last_of((kind,)) == kind and SENTENCE_END.search(lead) is None
    if not (stated or RESTATING.search(lead)):
        return ""
    start, end = cue.end() + start, cue.end() + end
    if free(hits, start, end):
        hits.append(Hit(kind, start, end, cue.start(), True))
    return kind
