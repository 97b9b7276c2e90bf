"""Where one turn states each kind of fact about a person: the spans of names, cities,
addresses, contact details, orders, product codes, amounts and dates the customer gives,
and of the amounts and deadlines the agent commits to (cities: people_cities; the span
type and the words a name is made of: people_hits). Pure.

Each step runs its patterns over the folded turn and keeps a span no earlier step took,
so the steps go from the most certain shapes (an email) to the least (a name).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from collections.abc import Sequence

from gateway.context.common_words import is_common
from gateway.context.first_names import is_first_name
from gateway.context.people_cities import big_city_hits, city_hits
from gateway.context.people_hits import Hit, add_hit, proper
from gateway.context.people_numbers import NUMBERS, compose, number_tokens
from gateway.context.people_patterns import (
    ADDRESS_UNIT,
    ADDRESS_UNIT_SPOKEN,
    CODE,
    CODE_DIGITS,
    COMMIT,
    CUE,
    CUE_KINDS,
    DASH_WORD,
    DEADLINE,
    DIGITS,
    DISTRICT,
    DOOR_FIRST,
    EMAIL,
    EMAIL_CUE,
    ENGLISH,
    HELLO_WORD,
    INTRODUCES,
    NAME,
    NAME_FIRST,
    NAME_HERE,
    NAME_ITS,
    NAME_LEAD,
    NAME_SPEAKING,
    NUMBER_FIRST,
    NUMBER_FIRST_SAID,
    OFFER,
    PHONE,
    POLICY,
    POLICY_BREAK,
    REFERENCE_CUE,
    ROMANCE,
    SAID_EMAIL,
    SAID_EMAIL_SPLIT,
    SAID_SEPARATOR,
    SIGN_OFF,
    SPELLED,
    SPELLED_CODE,
    STREET_FIRST,
    WORD,
)
from gateway.context.people_quantities import amount_spans, date_spans, weekday_day
from gateway.context.people_text import (
    SpanMatch,
    first_matches,
    next_word,
    whole_words,
    word_set,
)
from gateway.context.people_words import (
    AMBIGUOUS_NUMBERS,
    CONNECTORS,
    NOT_PROPER,
    NOT_STREET,
    NOT_WEEKDAY,
    SENT_WORDS,
    SIGN_OFF_WORDS,
    UNITS,
    clause_ends,
)
from gateway.context.places import is_city

# Digits read one at a time with no cue before them: a code (an order, a protocol), as
# a customer reads one out on a call; fewer are a count, 8 or more a phone.
READ_OUT_DIGITS = 5
# Ten digits or more read out with dashes between are a phone ("four one five dash five
# five five dash zero one nine nine"), fewer a code ("two six dash zero four four...").
PHONE_DIGITS = 10
# An agent's reference follows its word closely: "protocolo: RES-...", "your job reference
# is PV-31174", "o protocolo da sua reclamação é dois zero dois...".
REFERENCE_GAP = 40


def is_english(folded: str) -> bool:
    """Whether a turn reads as English rather than Portuguese or Spanish: "um", "once" and
    "oh" are numbers in one and words in the other."""
    return sum(1 for _ in first_matches(ENGLISH, folded)) > sum(
        1 for _ in first_matches(ROMANCE, folded)
    )


def _cue_before(folded: str, start: int, within: int = 60) -> str:
    """The kind the last cue word in the `within` characters before `start` names, or ""."""
    last, begin = "", max(0, start - within)
    for m in CUE.finditer(folded[begin:start]):
        if _named_thing(folded, begin + m.start(), begin + m.end()):
            continue
        last = next(k for i, k in enumerate(CUE_KINDS, 1) if m.group(i) is not None)
    return last


def _named_thing(text: str, start: int, end: int) -> bool:
    """Whether a cue word is a piece of a service's or a file's name ("[orders-api]",
    "/app/orders/views.py"), as in a pasted log: it names no number after it."""
    return (start > 0 and text[start - 1] in "[/_-") or text[end : end + 1] == "/"


def _names(folded: str, hits: list[Hit]) -> None:
    for m in first_matches(NAME, folded):
        strong = m.group(1) is not None
        if strong and _someone_elses(folded, m.start(1), m.group(1) or ""):
            continue
        span = proper(folded, m.start(2), m.end(2), not strong, strong)
        introduced = _INTRODUCED.search(folded[m.start() : m.start(2)].lower()) is not None
        if span and (
            strong or given_name(folded, *span) or (introduced and full_name(folded, *span))
        ):
            add_hit(hits, "name", *span, cue=m.start())
    for pattern in (NAME_HERE, NAME_SPEAKING, NAME_LEAD, NAME_ITS, SIGN_OFF):
        found = pattern.search(folded)
        span = proper(folded, found.start(1), found.end(1), True, False) if found else None
        if not found or not span or HELLO_WORD.search(folded[slice(*span)].lower()):
            continue
        if pattern is NAME_HERE and _introduced_after(folded, found.end(), hits):
            continue  # "boa tarde wesley aqui é a rosângela": the agent greeted, then "aqui é"
        listed = pattern is NAME_SPEAKING or pattern is NAME_LEAD
        if not given_name(folded, *span, listed=listed):
            continue
        # "it's" names someone only when the whole run is a name ("hey it's Apple Pay
        # that failed" names no one)
        if pattern is not NAME_ITS or span == (found.start(1), found.end(1)):
            add_hit(hits, "name", *span, cue=found.start())


@functools.lru_cache(maxsize=256)
def own_names(agent_said: str) -> frozenset[str]:
    """The names an agent's message gives as its own ("meu nome é Wesley", "I'm Laura",
    "Ryan speaking"), lowercased: what a customer greets it by."""
    hits: list[Hit] = []
    _names(agent_said, hits)
    return frozenset(agent_said[h.start : h.end].lower() for h in hits)


def _introduced_after(folded: str, end: int, hits: list[Hit]) -> bool:
    """Whether the "aqui" ending at `end` opens "aqui é <name>", a name heard there."""
    return INTRODUCES.match(folded, end) is not None and any(
        h.kind == "name" and h.start >= end for h in hits
    )


# Whose a bare "name is" / "name's" may be when it is not the speaker's ("his name is
# Champ", "the names, though"), and the words that may stand between ("her first name is").
_OTHERS = word_set(
    "his her their its your our whose the a an that this which what whats what's one "
    "someone somebody everyone everybody"
)
_NAME_WORDS = word_set("first last full middle real nick user screen pet")
# Whose name it may be, said without the apostrophe in a hurried chat ("my sisters name
# is julia").
_KIN = word_set(
    "mom mother dad father sister brother son daughter wife husband friend boyfriend "
    "girlfriend dog cat boss kid baby cousin aunt uncle grandma grandpa niece nephew "
    "partner neighbor neighbour"
)


def _someone_elses(folded: str, cue: int, said: str) -> bool:
    """Whether a bare name cue (no "my") is about someone else's name: after "his",
    "their", "the", or a "'s" ("my dog's name is Champ", "his name's Amadeus", "my
    sisters name is julia")."""
    if said[:4].lower() != "name":
        return False
    before = [w.lower() for w in folded[max(0, cue - 40) : cue].split()][-3:]
    while before and before[-1] in _NAME_WORDS:
        before.pop()
    last = before[-1] if before else ""
    return last in _OTHERS or last.endswith(("'s", "s'")) or last[:-1] in _KIN


def given_name(folded: str, start: int, end: int, listed: bool = False) -> bool:
    """Whether a name a weak cue introduced reads as one: a first name people are given
    however written ("i'm kevin", "sou a ana-clara", not "i'm petty upset"), or any other
    word capitalised as written unless it is an everyday word ("I'm Deandra", not "Same
    here", "I'm Frozen"); `listed`: only a given first name."""
    first = folded[start:end].split(None, 1)[0] if end > start else ""
    given = is_first_name(first.split("-", 1)[0]) or ("-" in first and is_first_name(first))
    return given or (not listed and first[:1].isupper() and not is_common(first))


# A weak cue that introduces a person ("sou a", "aqui é o", "soy la", "sou eu,"), not
# one that may describe the speaker ("i'm lactose intolerant", "sou muito grata").
_INTRODUCED = re.compile(r"(?:\b(?:[ao]|el|la|eu|yo)\W*|\baqui\s+\w+\s*)$")


def full_name(folded: str, start: int, end: int) -> bool:
    """Whether a name a weak cue introduced, written all in lowercase as speech is
    transcribed and chats are typed, reads as a full name: two or three words, none an
    everyday word ("aqui é a rosângela tavares mendonça", "sou eu, everton luiz paiva";
    not "i'm kinda lost", "sou a mesma pessoa")."""
    words = folded[start:end].split()
    return (
        len(words) >= 2
        and all(w.islower() and w.isalpha() and len(w) >= 3 for w in words)
        and not any(is_common(w) for w in words)
    )


def _street(folded: str, start: int, end: int, trim: bool) -> int | None:
    """Where a street name starts in folded[start:end]: when `trim`, past the last common
    word and the numbers after it ("deliver to oak avenue", "ship to park road"); None
    when it has a common word ("2 days on the way")."""
    words = [
        (start + m.start(), (m.group(0) or "").lower()) for m in WORD.finditer(folded[start:end])
    ]
    if trim:
        cut = max((i + 1 for i, (_, w) in enumerate(words) if w in NOT_STREET), default=0)
        words = list(itertools.dropwhile(lambda w: w[1] in NOT_PROPER, words[cut:]))
    named = [w for _, w in words if w not in CONNECTORS and not w.isdigit() and len(w) > 1]
    if not named or any(w in NOT_STREET for w in named):
        return None
    return words[0][0]


def _addresses(folded: str, hits: list[Hit]) -> None:
    """A street and its number, and the door when given ("apto 302"); a number said in
    words only if more than "um", "one" ("rua augusta um tempo"), and no number followed by
    a unit ("drive 2 hours")."""
    patterns = (
        (STREET_FIRST, False),
        (NUMBER_FIRST, False),
        (NUMBER_FIRST_SAID, False),
        (NAME_FIRST, True),
    )
    for pattern, trim in patterns:
        for m in first_matches(pattern, folded):
            said = (m.group(2) or "").lower() if pattern in (STREET_FIRST, NAME_FIRST) else ""
            if said in AMBIGUOUS_NUMBERS or next_word(folded, m.end()) in UNITS:
                continue
            if pattern is NUMBER_FIRST and _two_is_to(folded, m.start(), m.end()):
                continue  # "ship it 2 High Street 681": the street follows "to"
            begin = _street(folded, m.start(1), m.end(1), trim)
            if begin is not None:
                after = folded[m.end() : m.end() + 60]
                unit = ADDRESS_UNIT_SPOKEN.search(after)  # a lowercase door letter too...
                if unit and not clause_ends(after, unit.end()):  # ...only ending the clause
                    unit = ADDRESS_UNIT.search(after)
                if unit and _lone_ambiguous(after[: unit.end()]):
                    unit = None  # "apto um pouco escuro": "um" is "a"
                end = m.end() + unit.end() if unit else m.end()
                while end > m.start() and folded[end - 1] in " \t,.;":
                    end -= 1  # "4127 Bryant Ave S in": the side is matched with what follows
                end += _district(folded, end)
                start = begin if trim else m.start()
                if pattern is NUMBER_FIRST:  # "Flat 3, 18 Cotham Grove": the door first
                    door = DOOR_FIRST.search(folded[max(0, start - 24) : start])
                    start -= len(door.group(0) or "") if door else 0
                add_hit(hits, "address", start, end)


_NO_DISTRICT = NOT_PROPER | SIGN_OFF_WORDS


def _district(folded: str, end: int) -> int:
    """How far the address goes on past `end` with its district (0: none): not a big
    city (the city), a common word, a sign-off or a first name."""
    found = DISTRICT.search(folded[end : end + 48])
    if found is None:
        return _district_before_city(folded, end)
    name = found.group(1) or ""
    first = name.split()[0] if name else ""
    if not first or is_city(name) or first.lower() in _NO_DISTRICT:
        return 0  # the city, or a word that is no place ("..., Obrigada.", "..., Regards.")
    if is_first_name(first):
        return 0  # a signature ("Rua Augusta 1500, Mariana.")
    return found.end(1)


# A district typed or transcribed in lowercase, with no comma before it, then the city:
# "rua marechal deodoro 89 kalilandia, feira de santana". Group 1 the district, group 2
# what follows the comma up to the clause's end.
_LOWER_DISTRICT = re.compile(
    r"[ \t]+([a-z]{4,}(?:[ \t]+(?:(?:de|da|do|dos|das)[ \t]+)?[a-z]{4,}){0,2})[ \t]*,[ \t]*"
    r"([^,.;!?\n]{3,40}?)[ \t]*(?:[,.;!?\n]|$)"
)


# Words that open a district's name ("jardim europa", "vila madalena", "barrio norte").
_DISTRICTS = word_set("jardim vila parque setor bairro conjunto residencial barrio colonia villa")


def _district_before_city(folded: str, end: int) -> int:
    """How far a lowercase district reaches past `end`, when a big city follows it: not a
    common word, nor a city itself."""
    found = _LOWER_DISTRICT.match(folded[end : end + 96])
    if found is None or not is_city(found.group(2)):
        return 0
    name = found.group(1)
    first = name.split()[0]
    if is_city(name) or first in _NO_DISTRICT or (is_common(first) and first not in _DISTRICTS):
        return 0
    return found.end(1)


def _lone_ambiguous(unit: str) -> bool:
    """A door said as one number word that is also a word ("um", "one", "uno"); not the
    last word of a number ("trezentos e um")."""
    words = unit.lower().split()
    joined = len(words) >= 3 and words[-2] in ("e", "y", "and") and words[-3] in NUMBERS
    return (
        len(words) >= 2
        and words[-1] in AMBIGUOUS_NUMBERS
        and not words[-2].isdigit()
        and not joined
    )


def _two_is_to(folded: str, start: int, end: int) -> bool:
    """Whether the number at `start` is a "2" written for "to": after a word of sending,
    with the street's own number after it ("ship it 2 High Street 681", not "ship it 2
    High Street")."""
    if not folded.startswith("2 ", start):
        return False
    before = folded[max(0, start - 16) : start].split()
    numbered = folded[end : end + 8].lstrip(" ,.")[:1].isdigit()
    return numbered and bool(before) and before[-1].lower() in SENT_WORDS


def _emails(folded: str, hits: list[Hit]) -> None:
    for m in first_matches(EMAIL, folded):
        add_hit(hits, "email", *whole_words(folded, m.start(), m.end()))
    for m in first_matches(SAID_EMAIL, folded):
        if _said_email(folded, m):
            add_hit(hits, "email", m.start(), m.end())
    for m in first_matches(SAID_EMAIL_SPLIT, folded):
        if EMAIL_CUE.search(folded[max(0, m.start() - 40) : m.start()]) is not None:
            add_hit(hits, "email", m.start(), m.end())


def _said_email(folded: str, m: SpanMatch) -> bool:
    """ "arroba", or a name read with "dot"/"underscore" in it, is an address; "at" after
    one common word ("I ordered at shop dot com"), with or without numbers read out ("I
    bought one at target dot com"), only after a cue ("my email is")."""
    rest = m.group(2) or ""
    if (m.group(3) or "").lower() == "arroba" or SAID_SEPARATOR.search(rest):
        return True
    word = (m.group(1) or "").lower()
    common = word in NOT_PROPER or word.endswith("ing") or (len(word) >= 7 and word.endswith("ed"))
    return not common or EMAIL_CUE.search(folded[max(0, m.start() - 40) : m.start()]) is not None


def _amounts(folded: str, hits: list[Hit], english: bool, agent: bool = False) -> None:
    for start, end in amount_spans(folded, english):
        if not agent:
            add_hit(hits, "amount", start, end)
        elif _offered(folded, start, end):
            add_hit(hits, "promise", start, end)


def _offered(folded: str, start: int, end: int) -> bool:
    """An amount the agent offers: a word of giving money back near it, in its own
    sentence or line (a bill read out line by line, "Crédito por indisponibilidade: R$
    0,00" then "Total: R$ 159,90", offers neither the total nor the other lines; nor
    "Crédito de R$ 10,00 aplicado. Total: R$ 89,90" its total), or in the line before
    when the amount's line holds little else ("vamos estornar:\nR$ 45,90 na fatura"),
    and not nothing."""
    if {c for c in folded[start:end] if c.isdigit()} == {"0"}:
        return False
    begin, stop = _sentence(folded, start, end)
    if OFFER.search(folded[max(begin, start - 80) : min(stop, end + 40)]):
        return True
    line_start = folded.rfind("\n", 0, start) + 1
    if line_start == 0 or len(folded[line_start:start].split()) > 2:
        return False  # no line before, or the amount's line says more than a label
    above = folded[: line_start - 1].rstrip("\n")
    above = above[above.rfind("\n") + 1 :]
    return OFFER.search(above[-120:]) is not None and not any(amount_spans(above, False))


_SENTENCE_END = re.compile(r"[.!?](?=\s)|\n")


def _sentence(folded: str, start: int, end: int) -> tuple[int, int]:
    """The bounds of the sentence or line a span stands in ("R$ 1.234,56" holds no end)."""
    begin = 0
    for m in _SENTENCE_END.finditer(folded, max(0, start - 200), start):
        begin = m.end()
    after = _SENTENCE_END.search(folded, end)
    return begin, after.start() if after else len(folded)


def _dates(folded: str, hits: list[Hit]) -> None:
    for start, end in date_spans(folded):
        add_hit(hits, "date", start, end)


def _deadlines(folded: str, hits: list[Hit]) -> None:
    """What the agent commits to for this case; not policy ("Refunds are processed within
    10 business days", "Las devoluciones se aceptan hasta 30 días"): a clause with a
    generic subject or a word of habit, and no first or second person before the deadline."""
    breaks: list[int] | None = None
    for m in first_matches(DEADLINE, folded):
        span = weekday_day(folded, m.start(), m.end())  # "for Saturday 10 am": no day 10
        if span is None or next_word(folded, span[1]) in NOT_WEEKDAY:  # "até segunda ordem"
            continue
        breaks = [b.end() for b in POLICY_BREAK.finditer(folded)] if breaks is None else breaks
        at = bisect.bisect_right(breaks, m.start())
        start = breaks[at - 1] if at else 0
        end = breaks[at] if at < len(breaks) else len(folded)
        policy = POLICY.search(folded[start:end]) and not COMMIT.search(folded[start : m.end()])
        if not policy:
            add_hit(hits, "deadline", *span)


def _phones(folded: str, hits: list[Hit]) -> None:
    """A number shaped like a phone's, unless a cue says order; digits in any grouping
    ("600 12 34 56") after a phone cue or after a country code ("+34 615 304 135",
    "+44 7911 123456": each country groups its numbers its own way; see `_dialled`)."""
    for pattern in (PHONE, DIGITS):
        for m in first_matches(pattern, folded):
            cue = _cue_before(folded, m.start())
            if pattern is DIGITS and cue != "phone" and not _dialled(m.group(0) or ""):
                continue
            if 8 <= sum(c.isdigit() for c in m.group(0) or "") <= 13 and cue != "block":
                add_hit(hits, cue if cue in ("order", "sku") else "phone", m.start(), m.end())


def _dialled(number: str) -> bool:
    """A number written with its country code, as phones are ("+34 615 304 135"): ten
    digits or more, not a count in thousands ("+12.000.000 de visualizações", "+1,250,000")
    nor a run of signed figures ("+10 -20 -30")."""
    if not number.startswith("+") or " -" in number or sum(c.isdigit() for c in number) < 10:
        return False
    groups = number[1:].replace(",", ".").split(".")
    return not (len(groups) > 1 and all(len(g) == 3 for g in groups[1:]))


# A time of day as written in pt and es ("16h30", "9h15min", "14hs"), or "10am": never
# a code, whatever cue comes before ("o pedido era pra chegar até 16h30").
_CLOCK_TIME = re.compile(r"(?:[01]?\d|2[0-4])(?:h(?:[0-5]\d)?(?:min|m|s)?|[ap]m)", re.IGNORECASE)


def _code_kind(token: str, cue: str) -> str:
    digits = sum(c.isdigit() for c in token)
    letters = sum(c.isalpha() for c in token)
    if len(token) > 32 or cue == "block" or _CLOCK_TIME.fullmatch(token):
        return ""
    if digits < 3:
        # few digits: a product's code in capitals, two digits or said to be a code
        return "sku" if _product_code(token) and (digits >= 2 or cue == "sku") else ""
    if token.upper().startswith("SKU"):
        return "sku"
    if cue == "phone":
        # "o celular é o SM-A556-128-AZ": a device's model after the word for phone
        model = 0 < letters < digits  # not a word spelled on the keypad ("1-800-FLOWERS")
        return "phone" if 8 <= digits <= 13 and not letters else "sku" if model else ""
    if cue == "file":  # "the claim was 865": a sum; "claim 4471203", "claim CL-883": codes
        coded = digits >= CODE_DIGITS or letters > 0
    else:
        coded = bool(cue) or token.startswith("#")
        coded = coded or (0 < letters <= 6 and any(c.isupper() for c in token))
    return ("order" if cue in ("", "file") else cue) if coded else ""


def _locator(folded: str, start: int, token: str) -> bool:
    """A booking's locator typed in capitals right after its word ("localizador KXT4PZ",
    "booking QZ7M2L"): five to eight capitals and one or two digits, letters and digits
    mixed (not a word and its number: "ROOM12", "IPHONE15", "COVID19")."""
    letters = sum(c.isalpha() for c in token)
    shaped = 5 <= len(token) <= 8 and token.isalnum() and token.isupper() and letters >= 3
    if not shaped or _WORD_NUMBER.fullmatch(token):
        return False
    return LOCATOR_CUE.search(folded[max(0, start - 24) : start]) is not None


# A word and its number, either way round ("ROOM12", "5STAR"): a name, not a locator.
_WORD_NUMBER = re.compile(r"[A-Z]+\d+|\d+[A-Z]+")
LOCATOR_CUE = re.compile(
    r"\b(?:localizador|reserva|booking(?:\s+(?:ref(?:erence)?|code|number|no\.?))?|pnr"
    r"|record\s+locator|reservation(?:\s+(?:code|number))?|confirmation\s+(?:code|number))"
    r"\W{0,3}(?:(?:is|es|e|é|:)\W{0,3})?$",
    re.IGNORECASE,
)


def _product_code(token: str) -> bool:
    """A code of few digits is a product's when typed in capitals in three parts or more
    ("AVON-3S-SAGE", "CP-A55-TRANSP", "EQ-PRO-12"; not "COVID-19" nor "mp3")."""
    parts = token.split("-")
    return len(parts) >= 3 and all(parts) and token.upper() == token and len(token) >= 6


def _codes(folded: str, hits: list[Hit]) -> None:
    """A code and its kind; a product code keeps the word "sku" said right before it
    ("item sku aa64-26" states "sku aa64-26", as the customer wrote it)."""
    for m in first_matches(CODE, folded):
        token = (m.group(0) or "").rstrip("-")
        cue = _cue_before(folded, m.start())
        if cue == "file" and _SUM_LEAD.search(folded[max(0, m.start() - 12) : m.start()]):
            continue  # "my claim is for 12500", "o sinistro foi de 40000": a sum
        kind = _code_kind(token, cue)
        if not kind and _locator(folded, m.start(), token):
            kind = "order"
        if kind:
            start = m.start()
            lead = folded[max(0, start - 4) : start]
            # "sku sku pp38-09": the repeat is blanked, the value keeps the "sku" said last
            said_twice = lead == "    " and folded[: start - 4].rstrip().lower().endswith("sku")
            if kind == "sku" and (lead.lower() == "sku " or said_twice):
                start -= 4
            add_hit(hits, kind, start, m.start() + len(token))


def _spelled(folded: str, hits: list[Hit], english: bool) -> None:
    """Identifiers read out in a phone call: "l r three three five seven" after a
    product cue, "nove um dois..." (8+ digits: a phone, unless a cue says order)."""
    for m in first_matches(SPELLED_CODE, folded):
        cue = _cue_before(folded, m.start())
        tokens = number_tokens(folded, m.start(), m.end(), english)
        if _code_cue(cue, tokens):
            kind = "order" if cue == "file" else cue
            add_hit(hits, kind, _first_letter(folded, m.start(), tokens[0][0]), tokens[-1][1])
    for m in first_matches(SPELLED, folded):
        tokens = number_tokens(folded, m.start(), m.end(), english)
        if not tokens:
            continue
        count = len(compose([t[2:] for t in tokens]))
        cue = _cue_before(folded, tokens[0][0])
        code = _code_cue(cue, tokens)
        kind = ("order" if cue == "file" else cue) if code else "phone" if count >= 8 else ""
        dashed = DASH_WORD.search(folded[m.start() : m.end()]) is not None
        if kind == "phone" and not cue and dashed and count < PHONE_DIGITS:
            kind = "order"  # a dash said between 8-9 digits: a code read out, no phone
        if not kind and not cue and count >= READ_OUT_DIGITS and _digit_by_digit(tokens):
            kind = "order"  # "aí o pedindo então é nove três um seis zero cinco"
        if kind and cue != "block":
            add_hit(hits, kind, tokens[0][0], tokens[-1][1])


# What comes right before a sum, not a code, after a word for a file ("for", "de").
_SUM_LEAD = re.compile(
    r"\b(?:for|of|about|around|de|do|da|por|em|en|de\s+unos|cerca\s+de)\s*[$€£]?\s*$",
    re.IGNORECASE,
)


def _code_cue(cue: str, tokens: Sequence[tuple[int, int, str, int]]) -> bool:
    """Whether number words after a cue read out its code: two words or more ("a
    million questions" is none), three digits or more; after a word for a file that
    also has sums, five digits or more read one at a time ("the claim was eight
    sixty-five", "twelve thousand five hundred" are sums)."""
    if cue not in ("order", "sku", "file") or len(tokens) < 2:
        return False
    if cue == "file":  # "a disputa é de vinte e cinco mil": a sum, read as one number
        return _digit_by_digit(tokens) and len(compose([t[2:] for t in tokens])) >= CODE_DIGITS
    return len(compose([t[2:] for t in tokens])) >= 3


def _first_letter(folded: str, start: int, digits: int) -> int:
    """Where a code read out letter by letter starts: an "a" said before its one other
    letter is its first ("the item code is a c nine three", "é a p seis oito"), as no
    article or preposition comes before a lone letter."""
    lone = len(folded[start:digits].split()) == 1
    before = folded[max(0, start - 3) : start].lower()
    return start - 2 if lone and before[-2:] == "a " and not before[:-2].strip() else start


def _digit_by_digit(tokens: Sequence[tuple[int, int, str, int]]) -> bool:
    """Number words read one digit at a time ("nove três um seis zero cinco"), as only a
    code is read: no tens, hundreds or thousands."""
    return all(role in ("unit", "repeat") for _, _, role, _ in tokens)


def customer_hits(folded: str, english: bool) -> list[Hit]:
    """In order of confidence: a span one step took is not offered to the next (the
    digits of an address are not an order, a date is not a phone)."""
    hits: list[Hit] = []
    _emails(folded, hits)
    _addresses(folded, hits)
    _amounts(folded, hits, english)
    _dates(folded, hits)
    _phones(folded, hits)
    _codes(folded, hits)
    _spelled(folded, hits, english)
    _names(folded, hits)
    city_hits(folded, hits)
    big_city_hits(folded, hits)
    return hits


def agent_hits(folded: str, english: bool) -> list[Hit]:
    """What the agent committed to: an amount said near an offer, a deadline, and the
    number it gave the customer to quote (a protocol, a case, a booking)."""
    hits: list[Hit] = []
    _amounts(folded, hits, english, agent=True)
    _deadlines(folded, hits)
    _references(folded, hits, english)
    return hits


def _references(folded: str, hits: list[Hit], english: bool) -> None:
    """A code right after the agent's word for a protocol, case, ticket, booking or order
    ("Protocolo: RES-2026-058214", "your job reference is PV-31174", "caso RC-90215"),
    typed or read out on a call. Only after such a word: an agent's other codes are error
    codes, models and its own phone numbers, not the customer's facts."""
    for m in first_matches(CODE, folded):
        token = (m.group(0) or "").rstrip("-")
        digits = sum(c.isdigit() for c in token)
        letters = any(c.isalpha() for c in token)
        if not (digits >= 5 or (digits >= 4 and letters)) or not _quoted(folded, m.start()):
            continue
        if _CLOCK_TIME.fullmatch(token):  # "pedido para chegar até 16h30"
            continue
        if letters or not _phone_shaped(folded, m.start(), m.start() + len(token)):
            add_hit(hits, "order", m.start(), m.start() + len(token))
    for m in first_matches(SPELLED, folded):
        tokens = number_tokens(folded, m.start(), m.end(), english)
        if tokens and len(compose([t[2:] for t in tokens])) >= 5 and _quoted(folded, m.start()):
            add_hit(hits, "order", tokens[0][0], tokens[-1][1])


def _quoted(folded: str, start: int) -> bool:
    """Whether the agent's word for a reference comes before `start` in its sentence,
    within REFERENCE_GAP characters, with no word for another kind between ("the case for
    the iPhone 15, model A3090": a model)."""
    found = REFERENCE_CUE.search(folded[max(0, start - REFERENCE_GAP - 24) : start])
    between = (found.group(1) or "") if found else ""
    return found is not None and _cue_before(between, len(between)) in ("", "order", "file")


def _phone_shaped(folded: str, start: int, end: int) -> bool:
    """Whether digits at start:end are part of a phone's run ("11 98765-4321", "07700
    900123", "612 345 678"): groups of at most six digits, apart, 8 to 13 in all. One
    unbroken run, or a longer group, is a protocol's ("2026031012345", "20260311-4471")."""
    for m in first_matches(DIGITS, folded[max(0, start - 20) : end + 20]):
        run = m.group(0) or ""
        groups = re.findall(r"\d+", run)
        if 8 <= sum(map(len, groups)) <= 13 and len(groups) > 1 and max(map(len, groups)) <= 6:
            return True
    return False
