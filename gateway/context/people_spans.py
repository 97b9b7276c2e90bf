"""Where one turn states each kind of fact about a person: the spans of names, cities,
addresses, contact details, orders, product codes, amounts and dates the customer gives,
and of the amounts and deadlines the agent commits to. Pure.

Each step runs its patterns over the folded turn and keeps a span no earlier step took,
so the steps go from the most certain shapes (an email) to the least (a name).
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence
from typing import NamedTuple

from gateway.context.first_names import is_first_name
from gateway.context.people_numbers import compose, number_tokens
from gateway.context.people_patterns import (
    ADDRESS_UNIT,
    CITY,
    CODE,
    COMMIT,
    CUE,
    CUE_KINDS,
    DEADLINE,
    DIGITS,
    EMAIL,
    EMAIL_CUE,
    ENGLISH,
    HELLO_WORD,
    NAME,
    NAME_FIRST,
    NAME_HERE,
    NAME_ITS,
    NAME_LEAD,
    NAME_SPEAKING,
    NUMBER_FIRST,
    OFFER,
    PHONE,
    PLACE_AFTER,
    POLICY,
    POLICY_BREAK,
    ROMANCE,
    SAID_EMAIL,
    SIGN_OFF,
    SPELLED,
    SPELLED_CODE,
    STREET_FIRST,
    TOKEN_WORD,
    WORD,
)
from gateway.context.people_quantities import amount_spans, date_spans
from gateway.context.people_text import MATCHES, SpanMatch, first_matches, next_word
from gateway.context.people_words import (
    ABBREVIATIONS,
    AMBIGUOUS_NUMBERS,
    CONNECTORS,
    CONTRACTIONS,
    GERUND_ENDINGS,
    GERUND_NAMES,
    HOME_TOWN,
    NOT_CITY,
    NOT_FIRST,
    NOT_MINE,
    NOT_PROPER,
    NOT_STREET,
    NOT_WEEKDAY,
    PLACE_WORDS,
    RESUMING_STEMS,
    SENT_WORDS,
    STREET_WORDS,
    SUFFIXES,
    TITLES,
    UNITS,
)
from gateway.context.places import is_city


class Hit(NamedTuple):
    """Where a turn states a fact of one kind (offsets into the folded turn, which are the
    original's)."""

    kind: str
    start: int
    end: int
    cue: int  # where the words that introduce it start (a problem skips past intros)
    correction: bool = False
    # Heard with no cue that says it is the customer's own (a big city's name where
    # something goes): it never replaces a value of its kind already heard.
    weak: bool = False


def free(hits: Sequence[Hit], start: int, end: int) -> bool:
    """Whether no fact but a problem (a sentence, which may hold facts) has this span."""
    return all(end <= h.start or start >= h.end for h in hits if h.kind != "problem")


def _add(hits: list[Hit], kind: str, start: int, end: int, cue: int = -1) -> None:
    if end > start and free(hits, start, end):
        hits.append(Hit(kind, start, end, start if cue < 0 else cue))


def is_english(folded: str) -> bool:
    """Whether a turn reads as English rather than Portuguese or Spanish: "um", "once" and
    "oh" are numbers in one and words in the other."""
    return sum(1 for _ in first_matches(ENGLISH, folded)) > sum(
        1 for _ in first_matches(ROMANCE, folded)
    )


def _cue_before(folded: str, start: int) -> str:
    """The kind the last cue word in the 60 characters before `start` names, or ""."""
    last = ""
    for m in CUE.finditer(folded[max(0, start - 60) : start]):
        last = next(k for i, k in enumerate(CUE_KINDS, 1) if m.group(i) is not None)
    return last


def proper(
    folded: str, start: int, end: int, weak: bool, joins: bool, city: bool = False
) -> tuple[int, int] | None:
    """The span of 1-3 name words at the head of folded[start:end]: stops at a common word,
    at a sentence's end, and at a lowercase word after a capitalised one. A "de"/"da"
    joins words when `joins` (else only before a capitalised word: "sou a ana de recife"
    is not one name). A name's title ("Dr.", "Dona") is not part of it."""
    common = NOT_CITY if city else NOT_PROPER
    kept: list[tuple[int, int]] = []
    joined = False
    for m in TOKEN_WORD.finditer(folded[start:end]):
        word, stop = m.group(0) or "", start + m.end()
        low = word.lower()
        if (not kept and not city and low in TITLES) or (kept and not joined and low in CONNECTORS):
            joined = bool(kept)
            continue
        first = folded[kept[0][0]] if kept else ""
        if not _fits(word, first, joined and not joins, weak, common):
            break
        kept.append((start + m.start(), stop))
        joined = False
        if len(kept) == 3 or (folded[stop : stop + 1] == "." and low not in ABBREVIATIONS):
            break
    if not kept or (len(kept) == 1 and not city and _verb(folded[slice(*kept[0])].lower())):
        return None
    return kept[0][0], kept[-1][1]


def _verb(low: str) -> bool:
    """Whether a name of one word is a verb: "retomando", "following" (not "Fernando"
    nor "Sterling"; "Xiaoming Wang" is two words; a city may be "Reading")."""
    gerund = len(low) >= 5 and low.endswith(GERUND_ENDINGS) and low not in GERUND_NAMES
    return gerund or low.startswith(RESUMING_STEMS)


def _fits(word: str, first: str, capital: bool, weak: bool, common: frozenset[str]) -> bool:
    """Whether a word continues a name that starts with `first` (a letter, or "": then
    the word opens it, and "frustrated" or "pequena" may not)."""
    if (first.isupper() or capital) and not word[0].isupper():
        return False
    if not first and word.lower() in NOT_FIRST:
        return False
    return _name_like(word, weak, common)


def _name_like(word: str, weak: bool, common: frozenset[str]) -> bool:
    low = word.lower().strip("'-")
    if len(low) < 2 or low in common or low.endswith(CONTRACTIONS):
        return False
    return not (weak and word.islower() and len(low) >= 6 and low.endswith(SUFFIXES))


def _names(folded: str, hits: list[Hit]) -> None:
    for m in first_matches(NAME, folded):
        strong = m.group(1) is not None
        span = proper(folded, m.start(2), m.end(2), not strong, strong)
        if span and (strong or given_name(folded, *span)):
            _add(hits, "name", *span, cue=m.start())
    for pattern in (NAME_HERE, NAME_SPEAKING, NAME_LEAD, NAME_ITS, SIGN_OFF):
        found = pattern.search(folded)
        span = proper(folded, found.start(1), found.end(1), True, False) if found else None
        if not found or not span or HELLO_WORD.search(folded[slice(*span)].lower()):
            continue
        listed = pattern is NAME_SPEAKING or pattern is NAME_LEAD
        if not given_name(folded, *span, listed=listed):
            continue
        # "it's" names someone only when the whole run is a name ("hey it's Apple Pay
        # that failed" names no one)
        if pattern is not NAME_ITS or span == (found.start(1), found.end(1)):
            _add(hits, "name", *span, cue=found.start())


def given_name(folded: str, start: int, end: int, listed: bool = False) -> bool:
    """Whether a name a weak cue introduced reads as one: capitalised as written, or in
    lowercase a first name people are given ("i'm kevin", "sou a ana-clara", not "i'm
    petty upset"); `listed`: a given first name however written."""
    first = folded[start:end].split(None, 1)[0] if end > start else ""
    given = is_first_name(first) or is_first_name(first.split("-", 1)[0])
    return given or (not listed and first[:1].isupper())


def _cities(folded: str, hits: list[Hit]) -> None:
    """Each search resumes after the city it found, not after the words its cue took
    ("envió a Bogotá pero vivo en Cali" states both)."""
    pos = 0
    for _ in range(MATCHES):
        m = CITY.search(folded, pos)
        if m is None:
            return
        span = proper(folded, m.start(4), m.end(4), m.group(1) is None, True, city=True)
        span = _city_words(folded, *span) if span else None
        pos = span[1] if span else m.start(4)
        if not span or (m.group(3) is not None and folded[span[0]].islower()):
            continue  # "Ana from Recife", never "Ana from accounts"
        place = folded[span[0] : span[1]].lower() not in PLACE_WORDS
        if place and next_word(folded, span[1]) not in STREET_WORDS:  # "to Baker Street"
            _add(hits, "city", *span, cue=span[0] if m.group(2) else m.start())


_CITY_WORDS = 4  # "sao jose dos campos"


def _big_cities(folded: str, hits: list[Hit]) -> None:
    """A big city's name where no cue said it is the customer's (PLACE_AFTER): the most
    words after the cue that name one, capitalised unless a word for city came before;
    not where a capitalised word or "'s" follows ("Paris Hilton", "Columbia Records",
    "in Jackson's case"), nor before a street word ("to Boston Avenue"), nor after words
    about a parcel or someone else ("stuck in Memphis", "my mom lives in Chicago"), nor
    "cidade natal" (home town). Weak: it never replaces a city already heard."""
    for m in first_matches(PLACE_AFTER, folded):
        at = m.end()
        rest = folded[at : at + 80]
        if not rest or (m.group(2) is None and not rest[0].isupper()):
            continue  # "going to split the payment", "vai pra loja": no city
        words = list(itertools.islice(TOKEN_WORD.finditer(rest), _CITY_WORDS))
        first = (words[0].group(0) or "").lower() if words else ""
        if not words or words[0].start() != 0 or first in NOT_CITY or first in HOME_TOWN:
            continue
        ends = _phrase_ends(rest, words)
        end = next((e for e in reversed(ends) if is_city(rest[:e])), None)
        if end is None or rest.startswith("'s", end) or _capitalised_next(rest, end):
            continue
        said_two = (m.group(0) or "").rstrip().endswith("2")
        if said_two and rest[end : end + 1] not in ("", ",", ".", "!", "?", ";", "\n"):
            continue  # "ship 2 Victoria chairs" is two chairs; "shippign 2 Boston." is to
        before = folded[max(0, m.start() - 40) : m.start()].split()[-5:]
        if next_word(rest, end) in STREET_WORDS or any(w.lower() in NOT_MINE for w in before):
            continue
        if free(hits, at, at + end):
            hits.append(Hit("city", at, at + end, m.start(), weak=True))


def _capitalised_next(rest: str, end: int) -> bool:
    """Whether a capitalised word follows with only a blank between ("Paris Hilton")."""
    after = rest[end : end + 2]
    return len(after) == 2 and after[0] == " " and after[1].isupper()


def _phrase_ends(folded: str, words: Sequence[SpanMatch]) -> list[int]:
    """Where each of the first words ends while only blanks lie between them ("Belo
    Horizonte", not "Boston, Mass")."""
    ends: list[int] = []
    for word in words:
        if ends and not folded[ends[-1] : word.start()].isspace():
            break
        ends.append(word.end())
    return ends


def _city_words(folded: str, start: int, end: int) -> tuple[int, int]:
    """A city in lowercase of three words, the last not after a "de", is one of two and
    the verb after it ("the delivery to porto seguro never happened"), unless its last
    word says city ("new york city"); "são josé dos campos" stays whole."""
    words = list(TOKEN_WORD.finditer(folded[start:end]))
    said = [(m.group(0) or "").lower() for m in words]
    named = [w for w in said if w not in CONNECTORS]
    if folded[start].isupper() or len(named) != 3 or said[-2] in CONNECTORS:
        return start, end
    return (start, end) if said[-1] in PLACE_WORDS else (start, start + words[-2].end())


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
    for pattern, trim in ((STREET_FIRST, False), (NUMBER_FIRST, False), (NAME_FIRST, True)):
        for m in first_matches(pattern, folded):
            said = (m.group(2) or "").lower() if pattern is not NUMBER_FIRST else ""
            if said in AMBIGUOUS_NUMBERS or next_word(folded, m.end()) in UNITS:
                continue
            if pattern is NUMBER_FIRST and _two_is_to(folded, m.start(), m.end()):
                continue  # "ship it 2 High Street 681": the street follows "to"
            begin = _street(folded, m.start(1), m.end(1), trim)
            if begin is not None:
                unit = ADDRESS_UNIT.search(folded[m.end() : m.end() + 60])
                end = m.end() + (unit.end() if unit else 0)
                _add(hits, "address", begin if trim else m.start(), end)


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
        _add(hits, "email", m.start(), m.end())
    for m in first_matches(SAID_EMAIL, folded):
        if _said_email(folded, m):
            _add(hits, "email", m.start(), m.end())


def _said_email(folded: str, m: SpanMatch) -> bool:
    """ "arroba", or a name read with "dot"/"underscore" in it, is an address; "at" after
    one common word ("I ordered at shop dot com") only after a cue ("my email is")."""
    if (m.group(3) or "").lower() == "arroba" or m.group(2):
        return True
    word = (m.group(1) or "").lower()
    common = word in NOT_PROPER or word.endswith("ing") or (len(word) >= 7 and word.endswith("ed"))
    return not common or EMAIL_CUE.search(folded[max(0, m.start() - 40) : m.start()]) is not None


def _amounts(folded: str, hits: list[Hit], english: bool, agent: bool = False) -> None:
    for start, end in amount_spans(folded, english):
        if not agent:
            _add(hits, "amount", start, end)
        elif OFFER.search(folded[max(0, start - 80) : end + 40]):
            _add(hits, "promise", start, end)


def _dates(folded: str, hits: list[Hit]) -> None:
    for start, end in date_spans(folded):
        _add(hits, "date", start, end)


def _deadlines(folded: str, hits: list[Hit]) -> None:
    """What the agent commits to for this case; not policy ("Refunds are processed within
    10 business days", "Las devoluciones se aceptan hasta 30 días"): a clause with a
    generic subject or a word of habit, and no first or second person before the deadline."""
    breaks: list[int] | None = None
    for m in first_matches(DEADLINE, folded):
        if next_word(folded, m.end()) in NOT_WEEKDAY:  # "até segunda ordem"
            continue
        breaks = [b.end() for b in POLICY_BREAK.finditer(folded)] if breaks is None else breaks
        at = bisect.bisect_right(breaks, m.start())
        start = breaks[at - 1] if at else 0
        end = breaks[at] if at < len(breaks) else len(folded)
        policy = POLICY.search(folded[start:end]) and not COMMIT.search(folded[start : m.end()])
        if not policy:
            _add(hits, "deadline", m.start(), m.end())


def _phones(folded: str, hits: list[Hit]) -> None:
    """A number shaped like a phone's, unless a cue says order; digits in any grouping
    ("600 12 34 56") after a phone cue."""
    for pattern in (PHONE, DIGITS):
        for m in first_matches(pattern, folded):
            cue = _cue_before(folded, m.start())
            if pattern is DIGITS and cue != "phone":
                continue
            if 8 <= sum(c.isdigit() for c in m.group(0) or "") <= 13 and cue != "block":
                _add(hits, cue if cue in ("order", "sku") else "phone", m.start(), m.end())


def _code_kind(token: str, cue: str) -> str:
    digits = sum(c.isdigit() for c in token)
    letters = sum(c.isalpha() for c in token)
    if digits < 3 or len(token) > 32 or cue == "block":
        return ""
    if token.upper().startswith("SKU"):
        return "sku"
    if cue == "phone":
        return "phone" if 8 <= digits <= 13 and not letters else ""
    if cue or token.startswith("#"):
        return cue or "order"
    return "order" if 0 < letters <= 6 and any(c.isupper() for c in token) else ""


def _codes(folded: str, hits: list[Hit]) -> None:
    """A code and its kind; a product code keeps the word "sku" said right before it
    ("item sku aa64-26" states "sku aa64-26", as the customer wrote it)."""
    for m in first_matches(CODE, folded):
        token = (m.group(0) or "").rstrip("-")
        kind = _code_kind(token, _cue_before(folded, m.start()))
        if kind:
            start = m.start()
            if kind == "sku" and folded[max(0, start - 4) : start].lower() == "sku ":
                start -= 4
            _add(hits, kind, start, m.start() + len(token))


def _spelled(folded: str, hits: list[Hit], english: bool) -> None:
    """Identifiers read out in a phone call: "l r three three five seven" after a
    product cue, "nove um dois..." (8+ digits: a phone, unless a cue says order)."""
    for m in first_matches(SPELLED_CODE, folded):
        cue = _cue_before(folded, m.start())
        tokens = number_tokens(folded, m.start(), m.end(), english)
        if cue in ("order", "sku") and len(compose([t[2:] for t in tokens])) >= 3:
            _add(hits, cue, m.start(), tokens[-1][1])
    for m in first_matches(SPELLED, folded):
        tokens = number_tokens(folded, m.start(), m.end(), english)
        if not tokens:
            continue
        count = len(compose([t[2:] for t in tokens]))
        cue = _cue_before(folded, tokens[0][0])
        kind = cue if cue in ("order", "sku") and count >= 3 else "phone" if count >= 8 else ""
        if kind and cue != "block":
            _add(hits, kind, tokens[0][0], tokens[-1][1])


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
    _cities(folded, hits)
    _big_cities(folded, hits)
    return hits


def agent_hits(folded: str, english: bool) -> list[Hit]:
    """What the agent committed to: an amount said near an offer, and a deadline."""
    hits: list[Hit] = []
    _amounts(folded, hits, english, agent=True)
    _deadlines(folded, hits)
    return hits
