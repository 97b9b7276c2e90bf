"""What the gateway hears in a conversation's turns: the facts a later reply needs.

Two extractors run over the same turns: the operator's patterns from context.yaml
(`extraction`: ORD-123, INV-, SKU-, ...) and the people-facts extractor
(gateway.context.people: names, places, contact details, identifiers, amounts, dates,
the problem, the agent's promises, corrections) in Portuguese, English and Spanish.

The turns are read with the conversation's opening request in front: the problem is
told there, and a correction ("scratch that, Austin") needs the facts said before it.
Thousands of turns are scanned in a worker thread (RE2 lets go of the GIL), and a fold
scanned once is remembered by its content.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Hashable, Sequence
from typing import Any

from gateway import offload
from gateway.context.content_memo import ContentMemo, content_key
from gateway.context.people import SINGLE_VALUED, current_facts, extract_people_facts
from gateway.context.people_conversation import WORD_KINDS
from gateway.context.summaries import Pattern, extract_facts
from gateway.context.types import BASIC_SCOPE, Fact, fact_kind, heard_in_conversation

EXTRACTIONS_KEPT = 256  # folds remembered by content, per process
CLOCK_STEP = 1e-3  # seconds a turn is dated past the newest fact it sees (dated_after)
# Seconds: a fact dated further ahead of the turn is not followed. Replicas' clocks
# differ (NTP keeps them within milliseconds; a paused VM, a drifting host, by seconds):
# a correction heard on one a few seconds behind the last turn's was the older value.
CLOCK_LEAD_MAX = 60.0


def _scan(
    opening: Sequence[Any],
    turns: Sequence[Any],
    patterns: Sequence[Pattern],
    channel: str,
    now: float,
    known: Sequence[Fact] = (),
    elsewhere: Sequence[Fact] = (),
    before: str = "",
    said_now: bool = True,
    said_at: Sequence[float | None] = (),
) -> list[Fact]:
    """`said_at`: per message of `turns`, when it was said if known (see
    `extract_people_facts`)."""
    found = extract_facts(turns, patterns, channel, now)
    times = [*(None for _ in opening), *said_at] if said_at else ()
    people = extract_people_facts(
        [*opening, *turns], channel, now, known, elsewhere, before, said_now, times
    )
    # A sum the agent committed to is its promise, not an amount a pattern found in it
    # ("vamos fazer o reembolso de R$ 150,00": the card says what the agent promised).
    promised = {f.value.casefold() for f in people if fact_kind(f) == "promise"}
    found = [f for f in found if f.scope != BASIC_SCOPE or f.value.casefold() not in promised]
    matched = {f.value.casefold() for f in found}
    heard = [*found, *(f for f in people if f.value.casefold() not in matched)]
    return [_scoped(f, heard, patterns) for f in heard]


def _scoped(fact: Fact, heard: Sequence[Fact], patterns: Sequence[Pattern]) -> Fact:
    """A basic fact that quotes a narrower one (the problem "my parcel is late, call me
    on (415) 555-0134") keeps its scope with the narrower value withheld in it; a value
    the operator's scoped patterns find there makes it as narrow as the pattern."""
    if fact.scope != BASIC_SCOPE:
        return fact
    quoted = [g for g in heard if g.scope != BASIC_SCOPE and g.value and g.value in fact.value]
    if quoted:
        value, text = fact.value, fact.text
        for g in sorted(quoted, key=lambda g: len(g.value), reverse=True):  # the whole first
            mark = f"[withheld {fact_kind(g) or 'detail'}]"
            value, text = value.replace(g.value, mark), text.replace(g.value, mark)
        fact = dataclasses.replace(fact, value=value, text=text)
    narrower = next(
        (p.scope for p in patterns if p.scope != BASIC_SCOPE and p.regex.search(fact.value)),
        None,
    )
    return dataclasses.replace(fact, scope=narrower) if narrower else fact


def one_problem(new: Sequence[Fact], known: Sequence[Fact], started: float) -> list[Fact]:
    """A conversation's problem is what its customer came for: the first one heard. A
    later scan, which starts past it, would take whatever complaint comes first there."""
    told = any(fact_kind(f) == "problem" and f.created_at >= started for f in known)
    if not told:
        first = next((f for f in new if fact_kind(f) == "problem"), None)
        return [f for f in new if fact_kind(f) != "problem" or f is first]
    return [f for f in new if fact_kind(f) != "problem"]


def not_heard_before(new: Sequence[Fact], known: Sequence[Fact], started: float) -> list[Fact]:
    """A fold's facts, less the one-value kinds (name, city, address, phone, email) this
    conversation already has: every customer message was the newest once, and was heard
    then, in order (`of_latest`); read again as the fold leaves, an older value would
    come back dated now and pass the correction that replaced it."""
    have = {fact_kind(f) for f in known if f.created_at >= started}
    fold = [f for f in new if not (fact_kind(f) in SINGLE_VALUED and fact_kind(f) in have)]
    return one_problem(said_since(fold, known, started), known, started)


def said_since(new: Sequence[Fact], known: Sequence[Fact], started: float) -> list[Fact]:
    """A fold's facts, less a customer's said before a value of its kind the conversation
    still has ("two hundred eleven dollars", then "wait no it's fifty-two dollars"): it was
    heard when its message was the newest, and has lost its place since (corrected, or
    crowded out); dated now, it would come back as the newest."""
    ids = {f.id for f in known if f.created_at >= started}
    later: set[str] = set()
    kept: list[Fact] = []
    for fact in reversed(new):  # the fold's facts are in the order said
        kind = fact_kind(fact)
        if fact.id in ids:
            later.add(kind)
        elif kind in later and "customer" in fact.tags[1:2]:
            continue
        kept.append(fact)
    return kept[::-1]


class FactExtractor:
    def __init__(self, patterns: Sequence[Pattern]) -> None:
        self._patterns = list(patterns)
        self._memo: ContentMemo[tuple[list[Fact], float]] = ContentMemo(EXTRACTIONS_KEPT)

    async def of_fold(
        self,
        opening: Sequence[Any],
        fold: Sequence[Any],
        channel: str,
        now: float,
        known: Sequence[Fact] = (),
        elsewhere: Sequence[Fact] = (),
        said_at: Sequence[float | None] = (),
    ) -> list[Fact]:
        """Facts of the turns leaving the window (`known`: the conversation's facts so
        far, oldest first: what an agent's "sorry, I misspoke: $43" corrects;
        `elsewhere`: see `known_elsewhere`; `said_at`: per message of `fold`, when it
        was said, where the record knows: an answer's relay time)."""
        times = ",".join("" if t is None else repr(t) for t in said_at)
        parts = (channel, str(len(opening)), *_said(known, elsewhere), "\x1d", times)
        key = content_key(parts, [*opening, *fold])
        # read as they leave: "amanhã" names a day only in a message known to be said when
        return await self._scan_once(
            key, opening, fold, channel, now, known, elsewhere, said_now=False, said_at=said_at
        )

    async def of_latest(
        self,
        latest: Any,
        channel: str,
        now: float,
        known: Sequence[Fact] = (),
        elsewhere: Sequence[Fact] = (),
        before: str = "",
    ) -> list[Fact]:
        """Facts the newest message states, durable at once, not only when the turn is
        later folded. Read alone: what came before reaches it as `known` (the
        conversation's facts, oldest first), enough for "scratch that, Boston", and as
        `before`, the agent's message it answers ("who am I speaking with?"). A message
        sent again (a retry) with the same facts known is read once."""
        # the day it is read on too: "ontem" names another day tomorrow
        day = time.strftime("%Y-%m-%d %H", time.gmtime(now))
        parts = (channel, *_said(known, elsewhere), "\x1d", before, day)
        key = ("latest", content_key(parts, [latest]))
        return await self._scan_once(key, [], [latest], channel, now, known, elsewhere, before)

    async def _scan_once(
        self,
        key: Hashable,
        opening: Sequence[Any],
        turns: Sequence[Any],
        channel: str,
        now: float,
        known: Sequence[Fact],
        elsewhere: Sequence[Fact],
        before: str = "",
        said_now: bool = True,
        said_at: Sequence[float | None] = (),
    ) -> list[Fact]:
        """`_scan`, remembered by `key`: what was heard before (an app resending) comes
        back dated now."""
        hit = self._memo.get(key)
        if hit is not None:
            found, then = hit
            return [dataclasses.replace(f, created_at=f.created_at - then + now) for f in found]
        found = await offload.scanning(
            offload.content_chars([*opening, *turns]),
            _scan,
            opening,
            turns,
            self._patterns,
            channel,
            now,
            known,
            elsewhere,
            before,
            said_now,
            said_at,
        )
        self._memo.put(key, (found, now))
        return found


def _said(known: Sequence[Fact], elsewhere: Sequence[Fact]) -> list[str]:
    """What the extraction depends on besides the text: a memo key's parts."""
    return [
        *(f"{fact_kind(f)}\x1f{f.value}" for f in known),
        "\x1e",
        *(f"{fact_kind(f)}\x1f{f.value}" for f in elsewhere),
    ]


def merged_facts(known: Sequence[Fact], new: list[Fact]) -> list[Fact]:
    ids = {f.id for f in known}
    return current_facts([*known, *(f for f in new if f.id not in ids)])


def not_told_before(facts: list[Fact], started: float) -> list[Fact]:
    """An earlier conversation's problem reaches this one as its card's topic: as a fact
    too it would repeat what its customer said, up to a whole turn."""
    return [f for f in facts if not (fact_kind(f) == "problem" and f.created_at < started)]


def heard_here(facts: Sequence[Fact], started: float, conversation: str) -> list[Fact]:
    """The facts heard in this conversation (`heard_in_conversation`), oldest first."""
    here = (f for f in facts if heard_in_conversation(f, started, conversation))
    return sorted(here, key=lambda f: f.created_at)


def known_elsewhere(facts: Sequence[Fact], started: float) -> list[Fact]:
    """The customer's name and city from before this conversation, oldest first: theirs
    whatever the conversation, so "o correto é Beatriz Pereira" corrects the Beatriz of
    last week's chat (read only for the words they share with a corrected value)."""
    before = [f for f in facts if f.created_at < started and fact_kind(f) in WORD_KINDS]
    return sorted(before, key=lambda f: f.created_at)


def dated_after(now: float, facts_until: float, facts: Sequence[Fact]) -> float:
    """The turn's clock: the time it arrived, or just past the newest date a fact it
    can see was given, when that is later. Which fact is newer, which was heard in this
    conversation and which in an earlier one, are told by these dates, and a fold dates
    what it hears in the order said, past its own time (gateway.context.people): a
    next turn, or the customer's next conversation, that came sooner (an app replaying,
    a bot, another replica's clock a little ahead) would take its own newer facts for
    older ones, and an earlier conversation's for its own. A date further ahead than
    CLOCK_LEAD_MAX is not followed: no fold dates that far, and no replica's clock is
    that far off one that keeps time."""
    dates = [f.created_at for f in facts]
    dates.append(facts_until)  # the conversation's last compaction (0: none)
    ahead = [d for d in dates if now <= d + CLOCK_STEP <= now + CLOCK_LEAD_MAX]
    return max([now, *(d + CLOCK_STEP for d in ahead)])
