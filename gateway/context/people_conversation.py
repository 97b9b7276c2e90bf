"""What a turn means for the conversation so far: a correction ("actually", "na
verdade", "quise decir") supersedes an earlier value, the customer's or the agent's, and
the problem the customer came with is the first sentence that says something. Pure.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from gateway.context.first_names import is_first_name
from gateway.context.people_hits import Hit, free, proper
from gateway.context.people_patterns import (
    ADDITION,
    BARE_PROPER,
    BARE_SLIP,
    BARE_VALUE,
    CLAUSE_END,
    CORRECTION,
    CORRECTION_ANYWHERE,
    HELP,
    KIND_CUE,
    MID_CORRECTION,
    NEW_PROBLEM,
    NONSPACE,
    OPENER,
    PHONE,
    RESTATED,
    RESTATING,
    SENTENCE_END,
    STRONG_CUE,
    TOPIC_CHANGE,
    WORD,
)
from gateway.context.people_quantities import amount_spans, date_spans
from gateway.context.people_text import FOLD, SpanMatch
from gateway.context.people_words import CENTS_JOINERS, FILLER, HELP_WITH, OTHERS
from gateway.context.places import is_city

PROBLEM_WORDS = 18  # of its sentence: the problem is a line of the facts block, not a turn
# The customer introducing themselves: a problem is looked for past these.
_INTRO_KINDS = frozenset({"name", "city", "phone", "email", "address"})
INTRO_LEAD_WORDS = 2  # words before an introduction in its sentence that it skips too
# What a bare corrected value ("scratch that, Austin") can be, by its shape.
WORD_KINDS = ("name", "city")  # what a bare corrected word may be ("scratch that, Boston")
_DIGIT_KINDS = ("order", "sku", "phone", "amount")
PHONE_DIGITS = 8  # the fewest digits a phone number has
# Cues that also open a sentence that corrects nothing ("Actually, my order 55123 never
# came"): the clause corrects only a value of a kind the conversation already has.
_DISCOURSE = ("actually", "na verdade", "en realidad")
RESTATED_CHARS = 160  # how far after an agent's correction cue the value it restates may be
RESTATING_WORDS = 6  # between a cue said mid-sentence and the value it restates, at most


@dataclass
class Conversation:
    """What one call has read so far: which kinds came last, and whether the problem is
    known (one per conversation, unless the customer brings "outra coisa")."""

    recent: list[str] = field(default_factory=list)
    problem: bool = False
    # The words of the names and cities heard so far, by kind: "o correto é Beatriz
    # Pereira" corrects the name "Beatriz", not the city said after it.
    words: dict[str, set[str]] = field(default_factory=dict)

    def last_of(self, kinds: Sequence[str]) -> str:
        return next((k for k in reversed(self.recent) if k in kinds), "")

    def heard(self, kind: str, value: str) -> None:
        self.recent.append(kind)
        self.lend(kind, value)

    def lend(self, kind: str, value: str) -> None:
        """Keep a name's or city's words, for `sharing`, without making its kind heard."""
        if kind in WORD_KINDS:
            self.words.setdefault(kind, set()).update(value_words(value))

    def sharing(self, value: str) -> str:
        """The one kind of WORD_KINDS whose values heard so far share a word with value."""
        said = value_words(value)
        kinds = [k for k in WORD_KINDS if said & self.words.get(k, set())]
        return kinds[0] if len(kinds) == 1 else ""


def value_words(value: str) -> set[str]:
    """Folded as the turn is: "Tânia" (stored as said) shares a word with "Tania"."""
    return {w for w in value.translate(FOLD).casefold().split() if len(w) >= 3}


def _after_opener(folded: str, pos: int) -> int:
    """Past greetings and fillers ("oi, boa tarde, tudo bem?") from pos."""
    for _ in range(40):
        m = OPENER.search(folded[pos : pos + 80])
        if m is None or m.end() == 0 or _inside_word(folded, pos + m.end()):
            break
        pos += m.end()
    return pos


def _inside_word(folded: str, end: int) -> bool:
    """An opener that ends on an apostrophe inside a word: "there" of "there's a charge"
    is no greeting (FOLD makes a curly apostrophe straight)."""
    return folded[end - 1 : end] == "'" and folded[end : end + 1].isalpha()


def _asked(folded: str, pos: int, stop: int) -> int:
    """Past a request for help that says not with what ("preciso de ajuda", "I need some
    help do you...", "necesito ayuda con algo el paquete..."), else pos: one followed by a
    word of HELP_WITH ("tengo un problema con la factura") is the problem itself."""
    asked = HELP.search(folded[pos:stop])
    if asked is None:
        return pos
    end = pos + asked.end()
    following = folded[end:stop].split(maxsplit=1)
    if folded[end : end + 1].isspace() and following and following[0].lower() in HELP_WITH:
        return pos
    return end


def _words(folded: str, start: int, end: int, hits: Sequence[Hit]) -> Iterator[str]:
    """The words of folded[start:end], less the customer introducing themselves (their
    name, city or contact details and the words that say so), read as they are asked for."""
    skip = [(h.cue, h.end) for h in hits if h.kind in _INTRO_KINDS]
    for m in WORD.finditer(folded[start:end]):
        if not any(s <= start + m.start() < e for s, e in skip):
            yield (m.group(0) or "").lower().strip("'.-")


def _says(words: Iterable[str], least: int = 1) -> bool:
    """At least `least` words, one of them saying something (not a filler): read only as
    far as it takes, so a long message costs what its first words do."""
    says = False
    for count, w in enumerate(words, 1):
        says = says or (len(w) >= 3 and w not in FILLER)
        if says and count >= least:
            return True
    return False


def _span_end(folded: str, pos: int) -> int:
    """Up to PROBLEM_WORDS words from pos, ending at a sentence's end once there are 5;
    a sentence longer than that ends at its last comma past the 8th word, if any; and
    before a change of subject ("e outra coisa", "anyway") past the 3rd word."""
    window = folded[pos : pos + PROBLEM_WORDS * 40]
    end = comma = pos
    for count, m in enumerate(NONSPACE.finditer(window), 1):
        word, end = m.group(0) or "", pos + m.end()
        comma = end if word[-1] == "," and count >= 8 else comma
        if count >= 5 and word[-1] in ".!?":
            break
        if count == PROBLEM_WORDS:
            end = comma if comma > pos else end
            break
    change = TOPIC_CHANGE.search(window)
    if change and pos + change.start() < end and len(window[: change.start()].split()) >= 3:
        end = pos + change.start()
    while end > pos and folded[end - 1] in ".,;:!?-":
        end -= 1
    return end


def _corrected(folded: str, pos: int, stop: int, hits: Sequence[Hit], seen: Conversation) -> int:
    """Past a clause that opens with a correction cue up to the value it corrects and the
    end of that value's clause ("correction danderson at hotmail dot com and then..."),
    else pos: a customer correcting a detail is not stating the problem."""
    after = [h for h in hits if h.kind != "problem" and pos <= h.start < stop]
    value = min(after, key=lambda h: h.start, default=None)
    cue = CORRECTION.search(folded[pos:stop]) if value else None
    if value is None or cue is None or cue.start() > 0:
        return pos
    said = " ".join((cue.group(0) or "").lower().split())
    known = [*seen.recent, *(h.kind for h in hits if h.start < pos)]
    if any(d in said for d in _DISCOURSE) and value.kind not in known:
        return pos
    clause = CLAUSE_END.search(folded[value.end : stop])
    return value.end + clause.end() if clause else stop


def _lead(text: str) -> bool:
    """A word or two before an introduction, in the same clause: no clause mark."""
    return len(text.split()) <= INTRO_LEAD_WORDS and not any(c in ",;:" for c in text)


def _problem(
    folded: str, pos: int, hits: Sequence[Hit], seen: Conversation
) -> tuple[int, int] | None:
    """The first sentence from pos that says something (3+ words, one not filler), from
    the first clause that does: past greetings, the customer introducing themselves,
    asking for help without saying with what ("preciso de ajuda") and filler clauses, a
    run of these at a clause's start skipped too where nothing punctuates them."""
    intros = [(h.cue, h.end) for h in hits if h.kind in _INTRO_KINDS]
    ahead = [(h.cue, h.end) for h in hits if h.kind in _INTRO_KINDS and not h.correction]
    for _ in range(40):
        pos = _after_opener(folded, pos)
        found = SENTENCE_END.search(folded[pos : pos + 2000])
        stop = pos + found.end() if found else len(folded)
        # an introduction under way, or one a word or two on in this clause ("boa trade
        # aqui quem fala é Beatriz": a greeting misspelt; not "Reembolso urgente, sou a Ana")
        jump = max(
            [end for cue, end in intros if cue <= pos < end]
            + [end for cue, end in ahead if pos < cue < stop and _lead(folded[pos:cue])],
            default=pos,
        )
        asked = _asked(folded, pos, stop)
        if jump > pos or asked > pos:
            pos = max(jump, asked)
            continue
        if stop <= pos:
            return None
        corrected = _corrected(folded, pos, stop, hits, seen)
        if corrected > pos:
            pos = corrected
            continue
        clause = CLAUSE_END.search(folded[pos:stop])
        cut = pos + clause.end() if clause else stop
        if not _says(_words(folded, pos, cut, hits)):
            pos = cut
            continue
        if _says(_words(folded, pos, stop, hits), least=3):
            return pos, _span_end(folded, pos)
        pos = stop
    return None


def corrections(
    folded: str, hits: list[Hit], seen: Conversation, english: bool, agent: bool = False
) -> None:
    """A turn that corrects ("actually", "na verdade", "quise decir"): what it states
    after the cue supersedes the newest earlier value of its kind. A customer's bare value
    ("scratch that, Austin") takes the kind a word of its sentence says ("city", "name"),
    else the kind `_bare_correction` reads from the value; an agent's amount or date is
    the promise or deadline it restates, and in a call's run-on speech a cue may open it
    mid-sentence. A customer's cue said mid-sentence ("vou viajar na verdade e Belo
    Horizonte digitei errado") corrects only a kind already heard. After a cue that says
    a value was wrong ("scratch that", "o correto é") a bare value may run on into the
    turn ("scratch that boston and another thing"), and a capitalised one may run on when
    the fewest words say nothing ("errei o certo é Thiago Costa liguei ontem"); after a
    weak one ("actually", "no, it's") or mid-sentence it must end its clause or be
    followed by words of a slip ("digitei errado"). "actually" said of someone else ("the
    amount you actually paid") corrects nothing."""
    cue = CORRECTION.search(folded) or (_mid_sentence(folded, english) if agent else None)
    anywhere = cue is None and not agent
    if anywhere:
        cue = CORRECTION_ANYWHERE.search(folded)
    if cue is None or (anywhere and _said_of_others(folded, cue.start(), cue.end())):
        return
    after = folded[cue.end() : cue.end() + 80]
    strong = not anywhere and STRONG_CUE.search(cue.group(0) or "") is not None
    bare = None if agent else (BARE_VALUE if strong else BARE_SLIP).search(after)
    # "actually, I have another order": a second value, not a corrected one; "scratch that
    # boston and another thing" corrects before it adds.
    if ADDITION.search(after[: bare.start(1) if bare else 60]):
        return
    # "errei o certo é Thiago Costa liguei ontem": the fewest words ("certo") say nothing;
    # a capitalised run is the value.
    proper_run = BARE_PROPER.search(after) if strong and not agent else None
    earlier = sorted((h.start, h.kind) for h in hits if h.start < cue.start())
    before = Conversation([*seen.recent, *(kind for _, kind in earlier)], words=seen.words)
    if anywhere:
        _bare_correction(folded, cue, bare, hits, before, known_only=True)
        return
    hits[:] = [h._replace(correction=h.start >= cue.start()) for h in hits]
    if agent:
        _restated(folded, cue, hits, before, english)
        return
    if not _bare_correction(folded, cue, bare, hits, before) and proper_run:
        _bare_correction(folded, cue, proper_run, hits, before)


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
    only a kind already heard. Whether it found one."""
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
    if known_only and kind not in before.recent:
        return False
    if kind and free(hits, start, end):  # the cue introduces it: no problem starts there
        if known_only:
            hits[:] = [h._replace(correction=h.start >= cue.start()) for h in hits]
        hits.append(Hit(kind, start, end, cue.start(), True))
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
    return before.last_of(WORD_KINDS)


def _number_kind(value: str, before: Conversation) -> str:
    """What a bare corrected number is: a phone has 8 digits or more ("na verdade e
    494416" corrects an order, not the phone said last), and one grouped like a phone
    ("en realidad es 667-905-981", not "2024-556678") is the phone once one was given,
    whatever came last;
    else the kind of the latest number that could be it."""
    digits = sum(c.isdigit() for c in value)
    if digits < 2:
        return ""
    if _phone_shaped(value, digits) and "phone" in before.recent:
        return "phone"
    kinds = (
        _DIGIT_KINDS if digits >= PHONE_DIGITS else tuple(k for k in _DIGIT_KINDS if k != "phone")
    )
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
) -> None:
    """The first amount (a promise) or date (a deadline) after an agent's correction cue,
    when only restating words stand between them ("Me enganei antes, o correto é 34,00
    reais"), or the agent gave one of its kind before and it is in the cue's sentence."""
    value = _first_value(folded, cue.end(), english)
    if value is None:
        return
    start, end, kind = value
    lead = folded[cue.end() : cue.end() + start]
    stated = before.last_of((kind,)) == kind and SENTENCE_END.search(lead) is None
    start, end = cue.end() + start, cue.end() + end
    if (stated or RESTATING.search(lead)) and free(hits, start, end):
        hits.append(Hit(kind, start, end, cue.start(), True))


def problems(folded: str, hits: list[Hit], seen: Conversation) -> None:
    """The customer's problem: the first sentence that says something in the first turn
    that has one, and in a later turn only after "outra coisa", "another issue"."""
    if not seen.problem:
        span = _problem(folded, 0, hits, seen)
    else:
        cue = NEW_PROBLEM.search(folded)
        span = _problem(folded, cue.end(), hits, seen) if cue else None
    if span:
        hits.append(Hit("problem", *span, span[0]))
        seen.problem = True
