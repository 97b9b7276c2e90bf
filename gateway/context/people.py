"""Facts about the people in a customer-service conversation, in Portuguese, English and
Spanish: who the customer is (name, city, address, phone, email), what they came for
(the problem, orders, product codes, amounts, dates), and what the agent committed to
(amounts offered, deadlines). Pure: old turns fold out of the window, these stay.

Customers write without capitals or punctuation, and phone transcripts spell numbers
out ("nove um dois..."), so every pattern runs on a folded copy of the text (see
people_text). A value is cut from the original characters, because later code finds a
fact by its value in the transcript and redacts by it.

This module reads the turns and makes the facts; where a turn states them is
people_spans, corrections and the problem people_conversation, the patterns
people_patterns, the word lists people_words, spelled numbers people_numbers.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import itertools
import operator
import re
from collections import Counter
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from gateway.context.people_answers import answer_hits, asked_kinds
from gateway.context.people_conversation import Conversation, problems, value_words
from gateway.context.people_corrections import corrections
from gateway.context.people_dates import resolve
from gateway.context.people_hits import Hit
from gateway.context.people_numbers import (
    MULTIPLIERS,
    NUMBERS,
    alnum_runs,
    cardinals,
    number_groups,
    spelled_number,
)
from gateway.context.people_patterns import MACHINE_STAMP
from gateway.context.people_quantities import amount_spans, date_spans
from gateway.context.people_spans import agent_hits, customer_hits, is_english, own_names
from gateway.context.people_text import FOLD, plain
from gateway.context.prompts import one_line
from gateway.context.types import Fact, fact_kind, last_said
from gateway.messages import message_text

__all__ = [
    "CONTACT",
    "KEEP_PER_KIND",
    "KINDS",
    "SINGLE_VALUED",
    "current_facts",
    "extract_people_facts",
    "said_again",
    "spelled_number",
    "with_said_again",
]

KINDS: tuple[str, ...] = (
    *("name", "city", "address", "phone", "email", "order", "sku", "amount", "date"),
    *("problem", "promise", "deadline"),
)
SINGLE_VALUED = frozenset({"name", "city", "address", "phone", "email"})
KEEP_PER_KIND = 6  # of a multi-valued kind, those said last: a facts block stays small
# Of each kind of the operator's patterns (a "billing" amount, an "invoice"): they catch
# what the people extractor does not read as the customer's, so they keep more.
KEEP_PER_PATTERN = 8
# Of the facts a kind keeps, how many may be kept for having been stated again by a later
# turn (referred back to) rather than for being the newest: what a long conversation
# keeps of its older facts.
KEEP_SAID_AGAIN = 2
CONTACT = frozenset({"email", "phone", "address"})  # scope "verified"
DATED = frozenset({"date", "deadline"})  # shown with the ISO day they name when said
FACT_STEP_S = 1e-6  # between the dates of two facts of one call (a float at 1.8e9 s: ~4 ulp)
SCAN_CHARS = 8 * 1024  # per message: a paste of megabytes costs no more than this
SCAN_TOTAL = 64 * 1024  # per call: the oldest and the newest messages, half of it each


def _normal(kind: str, value: str, english: bool) -> str:
    """What two spellings of one fact share: its id is a hash of this."""
    folded = " ".join(value.translate(FOLD).lower().split())
    digits = "".join(c for c in folded if c.isdigit())
    if kind == "phone":  # without the country code when it is written as one
        digits = digits or spelled_number(folded, english) or ""
        if folded.startswith(("+55", "55 ")) and len(digits) in (12, 13):
            return digits[2:]
        return digits[1:] if folded.startswith(("+1", "1 ", "1-")) else digits
    if kind in ("order", "sku"):
        spelled = "" if digits else "".join(number_groups(folded, english))
        code = "".join(c for c in folded if c.isalnum()).upper()
        # "SKU-HF19-40", "sku hf19-40" and "hf19-40" are one product
        return spelled or (code.removeprefix("SKU") if kind == "sku" else code)
    if kind in ("amount", "promise"):
        return _money(folded, english)
    if kind in ("date", "deadline"):  # "march twenty-eight" is "march 28"
        # "dia 16 de outubro" and "16 de outubro", "el día 3" and "el 3": one date
        words = folded.split()
        while words and words[0] in ("dia", "el", "o", "the"):
            words = words[1:]
        return " ".join(number_groups(" ".join(words), english, words=True))
    return folded


_CURRENCY_CODES = (  # a symbol anywhere, a word's start
    ("BRL", ("r$", "rea", "brl", "conto", "pau", "prata")),
    ("EUR", ("€", "eur", "pavo")),
    ("GBP", ("£", "gbp", "quid", "pound", "libra")),
    ("PESO", ("peso", "mxn", "ars", "cop", "clp")),
    ("USD", ("$", "usd", "dollar", "dolar", "buck")),
)


def _marked(folded: str, words: list[str], marks: Sequence[str]) -> bool:
    return any(any(w.startswith(m) for w in words) if m.isalpha() else m in folded for m in marks)


# Units and cents said apart, digits both (a value's own short text: `re` is linear here).
_SPLIT_CENTS = re.compile(r"(\d[\d.,]*)\s+(?:[a-z$€]+\s+)?(?:e|y|and|con)\s+(\d{2})\b")


def _money(folded: str, english: bool) -> str:
    """ "R$ 163,00" and "163 reais" -> "BRL 163"; "sixty four dollars and thirty cents"
    -> "USD 64.3"; "5 mil reais" -> "BRL 5000". A last "." or "," before one or two
    digits marks the cents."""
    words = [w for w in alnum_runs(folded) if w.isalpha()]
    code = next((c for c, marks in _CURRENCY_CODES if _marked(folded, words, marks)), "")
    split = _SPLIT_CENTS.search(folded)  # "237 e 49", "20 reais e 50", "19 euros con 84"
    if split:
        whole = split.group(1).replace(".", "").replace(",", "")
        return _money_key(code, f"{whole}.{split.group(2)}", 1, folded)
    number = "".join(c for c in folded if c.isdigit() or c in ".,")
    if not number:
        whole, *cents = number_groups(folded, english) or ["0"]
        return _money_key(code, f"{whole}.{cents[0].zfill(2)}" if cents else whole, 1, folded)
    cut = max(number.rfind("."), number.rfind(","))
    if cut >= 0 and len(number) - cut <= 3:
        number = number[:cut].replace(".", "").replace(",", "") + "." + number[cut + 1 :]
    else:
        number = number.replace(".", "").replace(",", "")
    times = next((MULTIPLIERS[w] for w in words if w in MULTIPLIERS), 1)
    return _money_key(code, number, 1000 if "k" in words else times, folded)


def _money_key(code: str, number: str, times: int, folded: str) -> str:
    try:
        return f"{code} {(Decimal(number) * times).normalize():f}".strip()
    except InvalidOperation:
        return f"{code} {folded}".strip()


_FIGURES = re.compile(r"[A-Z]{3,4} \d+(?:\.\d+)?")


def in_figures(kind: str, value: str, english: bool | None = None) -> str:
    """A code or a sum said in words, followed by its figures as they are written:
    "quatro um oito oito dois zero (418820)", "trezentos e oitenta reais (BRL 380.00)",
    as the facts block and an episode's card show it. A model quotes and compares the
    figures; the value itself stays as said (a customer typing the figures later states
    the same fact: its id is read off the words). `english`: read as English (where "um"
    is no number), else as the value reads."""
    if any(c.isdigit() for c in value) or kind not in ("order", "sku", *MONEY):
        return value
    folded = " ".join(value.translate(FOLD).lower().split())
    english = is_english(folded) if english is None else english
    if kind in MONEY:
        money = _money(folded, english)
        if not _FIGURES.fullmatch(money) or not cardinals(folded, english):
            return value
        code, number = money.split()
        return f"{value} ({code} {Decimal(number):.2f})"
    groups = number_groups(folded, english)
    figures = "".join(groups)
    digits = sum(c.isdigit() for c in figures)
    return f"{value} ({figures})" if digits >= 3 and figures.isalnum() else value


def shown_value(fact: Fact) -> str:
    """A heard fact's value as an earlier conversation's card shows it: a code or sum
    said in words with its figures, a date with the day it named when said ("on
    saturday (2026-07-04)": weeks later "saturday" names another day)."""
    kind = fact_kind(fact)
    value = in_figures(kind, fact.value)
    day = _day_named(fact.text) if kind in DATED else None
    return f"{value} ({day})" if day and day not in value else value


def _fact(
    hit: Hit,
    value: str,
    agent: bool,
    english: bool,
    channel: str,
    at: float,
    now: bool,
    said: float | None = None,
) -> Fact:
    """`at`: the fact's date as stored; `now`: said at `at` (else read later, as a fold
    reads), unless `said` says when it was."""
    kind = hit.kind
    when, relative = (at, now) if said is None else (said, True)
    day = resolve(value, when, english, kind == "deadline", relative) if kind in DATED else None
    key = f"{kind}:{_normal(kind, value, english)}"
    shown = in_figures(kind, value, english)
    text = (
        f"{kind}: {shown}" + (f" ({day})" if day else "") + (" (the agent said)" if agent else "")
    )
    text += " (correction)" if hit.correction else ""
    tags = (kind, "agent" if agent else "customer", *(("correction",) if hit.correction else ()))
    return Fact(
        id=hashlib.blake2b(key.encode(), digest_size=8).hexdigest(),
        text=text,
        tags=tags,
        scope="verified" if kind in CONTACT else "basic",
        source_channel=channel,
        created_at=at,
        value=value,
        extracted=True,
    )


def _scanned(text: str) -> str:
    """The head of a text, cut between words (a cut through ORD-12345 would state ORD-12)."""
    return text if len(text) <= SCAN_CHARS else text[:SCAN_CHARS].rsplit(None, 1)[0]


Read = tuple[str, str, float | None]  # a message's scanned text, role, when it was said


def _read(turns: Sequence[Any], said_at: Sequence[float | None] = ()) -> list[Read]:
    """(scanned text, role, when said if known) of the user and assistant turns read, in
    order: all of them, or the oldest and the newest up to SCAN_TOTAL characters, half
    of it each."""
    read = []
    for n, message in enumerate(turns):
        role = message.get("role") if isinstance(message, dict) else None
        text = plain(_scanned(message_text(message))) if role in ("user", "assistant") else ""
        if text.strip():
            read.append((text, str(role), said_at[n] if n < len(said_at) else None))
    if sum(len(t) for t, _, _ in read) <= SCAN_TOTAL:
        return read
    head = _within(read, SCAN_TOTAL // 2)
    return head + _within(read[len(head) :][::-1], SCAN_TOTAL // 2)[::-1]


def _within(read: list[Read], budget: int) -> list[Read]:
    sizes = itertools.accumulate(len(text) for text, _, _ in read)
    return [turn for turn, used in zip(read, sizes, strict=True) if used <= budget]


_RUNS = re.compile(r"([A-Za-z]+)")


def unstuttered(folded: str) -> str:
    """A word said twice in a row in a transcript ("tô em em goiânia", "the the order")
    read once: the repeat is blanked, so offsets still match the original. Number words
    stay ("seis seis zero" is three digits), and so do capitalised ones ("Walla Walla")."""
    words = folded.lower().split()
    if not any(map(str.__eq__, words, words[1:])):
        return folded  # the common case, found at C speed
    # Gaps and letter runs alternate (gap, run, gap, ..., gap), cut in one C pass; only a
    # run equal to the one before across whitespace alone is looked at in Python, so a
    # message that repeats every word ("details details ...") costs half of reading it
    # run by run.
    pieces = _RUNS.split(folded)
    runs, gaps = pieces[1::2], pieces[2:-1:2]  # gaps[k]: between runs[k] and runs[k + 1]
    lower = " ".join(runs).lower().split(" ")  # ASCII letters: one run per item
    repeated = map(operator.and_, map(str.__eq__, lower[1:], lower), map(str.isspace, gaps))
    for k in itertools.compress(range(1, len(runs)), repeated):
        if runs[k][0].islower() and lower[k] not in NUMBERS:  # "Walla Walla" is a name
            pieces[2 * k + 1] = " " * len(runs[k])
    return "".join(pieces)


def unstamped(folded: str) -> str:
    """The timestamps of a pasted log blanked, offsets kept: "...T06:35:36.775Z" states no
    order "2025-06-25T06" nor "775Z"."""
    if "-" not in folded:
        return folded
    pieces, last = [], 0
    for m in MACHINE_STAMP.finditer(folded):
        pieces += [folded[last : m.start()], " " * (m.end() - m.start())]
        last = m.end()
    return "".join([*pieces, folded[last:]]) if pieces else folded


def extract_people_facts(
    turns: Sequence[Any],
    channel: str,
    now: float,
    known: Sequence[Fact] = (),
    elsewhere: Sequence[Fact] = (),
    before: str = "",
    said_now: bool = True,
    said_at: Sequence[float | None] = (),
) -> list[Fact]:
    """Facts stated in these OpenAI-style messages: the customer's in "user" turns, the
    agent's commitments (promise, deadline) in "assistant" turns; other roles are not
    read. A value stated again is one fact, dated by its latest statement. `known`: the
    conversation's facts heard before these turns, oldest first, so that a bare
    correction ("scratch that, Boston") knows what it corrects and a known problem is
    not heard again. `elsewhere`: the customer's name and city from earlier
    conversations, only for a bare correction that shares a word with one ("o correto é
    Beatriz Pereira" corrects the name Beatriz); they never make a kind already heard.
    `before`: the agent's message just before these turns, whose question a bare answer
    in the first of them may answer (gateway.context.people_answers). `said_now`: the
    turns were said at `now` (the newest message), not read later as they fold: only
    then do "amanhã" and a bare weekday get their day (gateway.context.people_dates).
    `said_at`: per message of `turns`, when it was said if known (an answer's relay
    time, read as it folds): such a message's days are read as of then."""
    facts: dict[str, Fact] = {}
    seen = Conversation()
    for f in elsewhere:
        seen.lend(fact_kind(f), f.value)
    for f in known:
        if f.tags:
            seen.heard(f.tags[0], f.value)
    seen.problem = "problem" in seen.recent
    said = itertools.count()
    agent_said = before.translate(FOLD) if before else ""
    asked = asked_kinds(agent_said)
    named = next((f.value for f in reversed(known) if fact_kind(f) == "name"), "")
    for text, role, when in _read(turns, said_at):
        agent = role == "assistant"
        folded, english, found = _message_hits(text, agent)
        hits = [h for h in found if not (h.weak and _heard_or_said(h.kind, seen, found))]
        if agent:
            asked, agent_said = asked_kinds(folded), folded
        else:
            answer_hits(folded, asked, hits, agent_said if asked else "", bool(named))
            if agent_said:  # "boa tarde wesley", to the agent who said "meu nome é wesley"
                hits = [h for h in hits if not _agents_name(h, folded, agent_said)]
            # a weak city of these (after an address, "here in") gives way as others do
            hits = [h for h in hits if not (h.weak and _heard_or_said(h.kind, seen, hits))]
            asked = frozenset()
        corrections(folded, hits, seen, english, agent)
        if not agent:
            problems(folded, hits, seen)
        for hit in sorted(hits, key=lambda h: h.start):
            # In the order said, a microsecond apart: a fold of hundreds of turns ends
            # dated a fraction of a millisecond past `now`, before any next turn can come.
            at = now + next(said) * FACT_STEP_S
            # one line of the facts block: a "\r" in the customer's span would start another
            value = one_line(text[hit.start : hit.end])
            fact = _fact(hit, value, agent, english, channel, at, said_now, when)
            if hit.kind == "name" and not hit.correction and _shorter(fact.value, named):
                continue  # "Dana" signing off after "Dana Whitfield": the same, said short
            named = fact.value if hit.kind == "name" else named
            facts.pop(fact.id, None)
            facts[fact.id] = fact
            seen.heard(hit.kind, fact.value)
    return sorted(facts.values(), key=lambda f: f.created_at)


@functools.lru_cache(maxsize=2048)
def _message_hits(text: str, agent: bool) -> tuple[str, bool, tuple[Hit, ...]]:
    """(the folded text, whether it is English, where it states facts): the part of a
    message's reading that depends on it alone, remembered. Each customer message is
    read when it is the newest and again when its turn folds; an episode's card reads
    its turns once more."""
    folded = unstamped(unstuttered(text.translate(FOLD)))
    english = is_english(folded)
    hits = agent_hits(folded, english) if agent else customer_hits(folded, english)
    return folded, english, tuple(hits)


def _agents_name(hit: Hit, folded: str, agent_said: str) -> bool:
    """Whether a name the customer said is the one the agent gave as its own in the
    message before: a greeting to the agent, not the customer's name."""
    if hit.kind != "name":
        return False
    said = folded[hit.start : hit.end].lower()
    return said in own_names(agent_said)


def _shorter(value: str, name: str) -> bool:
    """Whether a name is some of the words of the one heard before."""
    said = value_words(value)
    return bool(said) and said < value_words(name)


def _heard_or_said(kind: str, seen: Conversation, hits: Sequence[Hit]) -> bool:
    """Whether a value of this kind was heard before or is stated with a cue in this turn."""
    return kind in seen.recent or any(h.kind == kind and not h.weak for h in hits)


def crowded_kinds(known: Sequence[Fact]) -> frozenset[str]:
    """The kinds that already hold, of `known`'s facts heard in turns, as many as
    `current_facts` keeps: a fact of one heard again in a turn leaving the window was
    superseded before, and dated now it would push out the newer ones it lost to."""
    counts = Counter(kind for f in known if f.extracted and (kind := fact_kind(f)))
    return frozenset(kind for kind, n in counts.items() if n >= _kept_of(kind))


def crowded_out(fact: Fact, crowded: frozenset[str]) -> bool:
    """Whether `fact` is of a kind `crowded_kinds` found full (a fact put by the app
    never is)."""
    return fact.extracted and fact_kind(fact) in crowded


def _kept_of(kind: str) -> int:
    """How many facts of a kind `current_facts` keeps."""
    if kind in SINGLE_VALUED:
        return 1
    return KEEP_PER_KIND if kind in KINDS else KEEP_PER_PATTERN  # the operator's patterns


def _first_to_go(group: list[Fact]) -> Fact:
    """Of a kind with more facts than it keeps (in the order heard), the one to drop:
    the one said longest ago (a fact a later turn stated again counts as said then), but
    not one of the KEEP_SAID_AGAIN said again last (a promise a later turn referred back
    to is worth more than the newer amounts said once), and before it a deadline naming
    no day ("até cinco dias úteis" said again does not push out "29 de agosto"). The
    newest always stays."""
    older = group[:-1]
    referred = sorted((f for f in older if f.said_again_at is not None), key=last_said)
    kept = {id(f) for f in referred[len(referred) - KEEP_SAID_AGAIN :]}
    candidates = [f for f in older if id(f) not in kept] or older
    undated = [f for f in candidates if fact_kind(f) == "deadline" and not _dated(f.value)]
    return min(undated or candidates, key=last_said)


MONEY = frozenset({"amount", "promise"})


def _restated_as(fact: Fact) -> frozenset[str]:
    """What a later turn states when it states this fact again: its id, and for money
    its sum (the customer asking after "os R$ 380,00" the agent promised says an
    amount), for a dated fact the day it names (a deadline's day said back as a date)."""
    return _restated(fact.id, fact_kind(fact), fact.value, fact.text)


@functools.lru_cache(maxsize=4096)
def _restated(fid: str, kind: str, value: str, text: str) -> frozenset[str]:
    """Read once per fact: every turn that hears a fact looks through the customer's. A
    sum an operator's pattern read ("R$ 380,00" tagged billing) states money too."""
    keys = {fid}
    folded = " ".join(value.translate(FOLD).lower().split())
    if kind in MONEY or (kind not in KINDS and _sum_shaped(folded)):
        keys.add("money " + _money(folded, is_english(folded)))
    if kind in DATED and (day := _day_named(text)):
        keys.add("day " + day)
    return frozenset(keys)


def _sum_shaped(folded: str) -> bool:
    """A pattern's value that is a sum and nothing else ("r$ 380,00", "120 usd"): the
    reader of amounts finds it whole."""
    spans = list(amount_spans(folded, is_english(folded)))
    return len(spans) == 1 and spans[0] == (0, len(folded))


def said_again(known: Sequence[Fact], heard: Sequence[Fact]) -> list[Fact]:
    """The facts of `known` that `heard` (a later turn's facts, dated when said) states
    again, of a kind that keeps several: each marked said again then, so that a promise
    a later turn refers back to is not pushed out by the newer facts of its kind. Only
    those said later than they were last."""
    if not heard:
        return []
    when: dict[str, float] = {}
    for f in heard:
        for key in _restated_as(f):
            when[key] = max(when.get(key, 0.0), f.created_at)
    renewed = []
    for f in known:
        keys = _restated_as(f)
        if when.keys().isdisjoint(keys) or not f.extracted or fact_kind(f) in SINGLE_VALUED:
            continue
        at = max(when.get(key, 0.0) for key in keys)
        if at > last_said(f):
            renewed.append(dataclasses.replace(f, said_again_at=at))
    return renewed


def with_said_again(facts: Sequence[Fact], renewed: Sequence[Fact]) -> list[Fact]:
    """`facts`, each that `renewed` (`said_again`) renews marked said again then, unless
    it was said again later still. Only the time is taken: `facts` may be newer than the
    copy `renewed` was made from (the app confirmed, scoped or edited the fact since),
    and a fact no longer extracted (the app's now) is not renewed."""
    when = {f.id: f.said_again_at for f in renewed if f.said_again_at is not None}
    return [_renewed(f, when.get(f.id)) for f in facts]


def _renewed(fact: Fact, at: float | None) -> Fact:
    if at is None or not fact.extracted or at <= last_said(fact):
        return fact
    return dataclasses.replace(fact, said_again_at=at)


def _group(kept: dict[str, list[Fact]], kind: str, fact: Fact) -> str:
    """The group of `kept` a fact joins ("" for none, `current_facts`)."""
    # The references an agent gives (its protocols, cases) are kept apart from the
    # customer's own orders: a busy agent does not push the customer's out.
    key = f"{kind}/agent" if kind == "order" and "agent" in fact.tags[1:2] else kind
    if key != kind and any(f.id == fact.id for f in kept.get(kind, [])):
        return ""  # the customer's own order, said back by the agent: still theirs
    if key == kind and f"{kind}/agent" in kept:  # the agent's, now said by the customer
        kept[f"{kind}/agent"] = [f for f in kept[f"{kind}/agent"] if f.id != fact.id]
    return _unverified_apart(kept, key, fact)


UNVERIFIED_GROUP = "/unverified"


def _unverified_apart(kept: dict[str, list[Fact]], key: str, fact: Fact) -> str:
    """The group of `kept` a fact joins ("" for none): what an unverified caller stated
    (gateway.context.unverified) is kept apart, so it displaces no fact a caller within
    the scope stated (an impostor's "new email" does not push out the verified one);
    such a fact stated again unverified stays verified, and a verified fact takes the
    place of its value stated unverified, and of a one-value kind of every older value
    stated unverified (the customer has said which is theirs since)."""
    apart = key + UNVERIFIED_GROUP
    if fact.stated_unverified:
        return "" if any(f.id == fact.id for f in kept.get(key, [])) else apart
    if apart in kept:
        single = fact_kind(fact) in SINGLE_VALUED
        kept[apart] = [f for f in kept[apart] if not single and f.id != fact.id]
    return key


_ISO_DAY = re.compile(r"\((\d{4}-\d{2}-\d{2})\)")


@functools.lru_cache(maxsize=4096)
def _day_named(text: str) -> str | None:
    """The ISO day a dated fact's text shows (`_fact` writes it in brackets), if any."""
    found = _ISO_DAY.search(text)
    return found[1] if found else None


@functools.lru_cache(maxsize=4096)
def _dated(value: str) -> bool:
    """Read once per value: current_facts runs on every turn over the same deadlines."""
    return next(date_spans(value.translate(FOLD)), None) is not None


def current_facts(facts: Sequence[Fact]) -> list[Fact]:
    """The facts still true: of a single-valued kind (name, city, address, phone, email)
    the newest; of the others the KEEP_PER_KIND said last (heard, or stated again by a
    later turn: `said_again`), less the one a correction replaced. A dated fact naming a
    day another of its kind names replaces it (one day, said again in other words), and
    a customer's date naming a deadline's day is that deadline said back. A name said
    shorter (its first name) keeps the full one heard before, unless it corrects it. The
    operator's patterns' facts (other kinds: "billing", "invoice") are multi-valued too,
    the KEEP_PER_PATTERN said last of each: a pasted statement's every amount would
    otherwise fill the facts document. The references an agent gives are kept apart
    from the customer's orders, KEEP_PER_KIND of each, and so are the facts an unverified
    caller stated (`_unverified_apart`). The app's facts (not `extracted`) are never
    pruned."""
    kept: dict[str, list[Fact]] = {}
    others: list[Fact] = []
    for fact in sorted(facts, key=lambda f: f.created_at):
        kind = fact_kind(fact)
        if not kind or not fact.extracted:  # the app's own facts stay as put
            others.append(fact)
            continue
        day = _day_named(fact.text) if kind in DATED else None
        if (
            day
            and kind == "date"
            and any(_day_named(f.text) == day for f in kept.get("deadline", []))
        ):
            continue  # the customer saying back the day a deadline names: the deadline says it
        key = _group(kept, kind, fact)
        if not key:
            continue
        earlier = [f for f in kept.get(key, []) if f.id != fact.id]
        same = [f for f in earlier if not (day and _day_named(f.text) == day)]  # one day, reworded
        if (
            kind == "name"
            and "correction" not in fact.tags[1:]
            and any(_shorter(fact.value, f.value) for f in earlier)
        ):
            continue  # "Siobhan" in this chat after "Siobhan Marsh" in the last: the same
        if kind in SINGLE_VALUED:
            same = []
        elif "correction" in fact.tags[1:] and same and len(same) == len(earlier):
            same.pop()  # (a correction naming a day already dropped the one it restates)
        group = [*same, fact]
        while len(group) > _kept_of(kind):
            group.remove(_first_to_go(group))
        kept[key] = group
    _restated_ends_unverified(kept)
    return sorted(
        [*others, *(f for group in kept.values() for f in group)], key=lambda f: f.created_at
    )


def _restated_ends_unverified(kept: dict[str, list[Fact]]) -> None:
    """A one-value kind's value a caller within the scope stated (or stated again) after
    one an unverified caller stated: the customer has said which is theirs since, so the
    unverified one ends (facts are met in the order first heard, so a verified value
    heard before and only stated again later is settled here)."""
    for key in [k for k in kept if k.endswith(UNVERIFIED_GROUP)]:
        own = kept.get(key.removesuffix(UNVERIFIED_GROUP), [])
        if not own or fact_kind(own[0]) not in SINGLE_VALUED:
            continue
        latest = max(last_said(f) for f in own)
        kept[key] = [f for f in kept[key] if f.created_at > latest]
