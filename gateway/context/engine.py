"""The budgeted context window: pure functions over plain data (no I/O, no clock).

The window is built from slices filled in priority order; each spends what it needs
and hands the rest on, none takes from an earlier one (one bound excepted: facts and
episodes take at most what the current episode's verbatim least, its opening request
and last messages, leaves of the quota):

  system (the app's own, never cut) -> operational state -> durable facts ->
  episode summaries -> current episode (opening turn + running summary + recent turns)
  -> output reserve (the reply's max_tokens ceiling)

Messages go out most-stable-first so a provider's prefix cache keeps hitting: the app's
system message, the earlier-episode cards with the facts known before this conversation
began (both fixed for its whole length), the opening turn, the running summary, the
facts heard in this conversation whose turns were folded (both change only at
compaction, or when a correction replaces a shown fact), the recent turns, and last
the operational state, which changes every turn. The blocks
that quote customers (facts and episodes, the running summary) go in the `user` role,
marked as quotes; only the app's operational state is `system` (see gateway.context.prompts).

Compaction happens in two steps because summarizing is I/O: `plan_compaction` says
which turns must leave; the caller folds them into the summary and persists it; only
then does `assemble` build the prompt without them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from gateway.context.anchors import anchored, span_anchor
from gateway.context.fact_blocks import showable, shown_facts, subject_words, visible_facts
from gateway.context.prompts import (
    context_message,
    op_message,
    render_episode,
    render_fact,
    split_overhead,
    summary_message,
)
from gateway.context.types import Episode, Fact, Memory, WindowPolicy
from gateway.messages import leading_system, role

_SUMMARY_GROWTH = 0.3  # planning estimate: a summary grows ~30% of what it absorbs


class Tokens(Protocol):
    def message(self, message: Any) -> int: ...

    def text(self, text: str) -> int: ...


@dataclass(frozen=True)
class WindowInput:
    messages: Sequence[Any]
    memory: Memory
    policy: WindowPolicy
    facts: Sequence[Fact] = ()
    episodes: Sequence[Episode] = ()
    operational_state: str | None = None
    subject_tags: tuple[str, ...] = ()
    scopes: tuple[str, ...] = ()
    client_max_tokens: int | None = None
    # When this conversation began: facts created before it came from elsewhere (the
    # customer's earlier conversations, the app) and sit with the episodes at the top.
    started: float = 0.0


@dataclass(frozen=True)
class Compaction:
    """Turns that must leave the window this turn, to be summarized first."""

    fold: tuple[Any, ...]
    first: int  # transcript index of fold[0]
    new_cursor: int
    head_end: int


@dataclass
class WindowReport:
    slices: dict[str, int] = field(default_factory=dict)
    history_tokens: int = 0  # everything but the app's system message(s): what the quota caps
    evicted_messages: int = 0  # messages the summary stands for (whole conversation so far)
    over_quota: bool = False
    at_ceiling: bool = False
    max_tokens: int = 0
    capped_from: int | None = None  # the client's max tokens, when the reserve lowered it
    system_over_budget: bool = False  # the app's system message(s) passed system_budget
    exceeds_context: bool = False  # the input alone does not fit the model's context window


@dataclass
class Window:
    messages: list[Any]
    report: WindowReport


# -- segmentation ---------------------------------------------------------------------


@dataclass(frozen=True)
class _Segments:
    system: list[Any]
    transcript: list[Any]
    head_end: int
    unit_starts: tuple[int, ...]  # starts of the units at or after the cursor
    memory: Memory  # validated against this transcript

    @property
    def summarized(self) -> bool:
        """Whether a running summary stands for turns between the opening and the cursor."""
        return bool(self.memory.summary and self.memory.cursor > self.head_end)


def _split(messages: Sequence[Any], memory: Memory) -> _Segments:
    """Work here follows the turns after the cursor, not the whole history."""
    k = leading_system(messages)
    system, transcript = list(messages[:k]), list(messages[k:])
    first_user = next((i for i, m in enumerate(transcript) if role(m) == "user"), -1)
    head_end = first_user + 1
    cursor = memory.cursor
    valid = (
        memory.summary
        and head_end < cursor <= len(transcript)
        and (cursor == len(transcript) or role(transcript[cursor]) != "tool")
        and anchored(transcript, head_end, cursor, memory.anchor)
    )
    if not valid:
        memory = Memory(cursor=head_end)
    # A unit never separates an assistant's tool calls from their results, so a kept
    # transcript never starts on a tool result.
    starts = [i for i in range(memory.cursor, len(transcript)) if role(transcript[i]) != "tool"]
    return _Segments(system, transcript, head_end, tuple(starts), memory)


# -- allocation -----------------------------------------------------------------------


@dataclass(frozen=True)
class _Allocation:
    operational_state: str | None
    op_tokens: int
    facts: list[Fact]
    facts_tokens: int
    episodes: list[Episode]
    episodes_tokens: int
    context_tokens: int  # the facts + episodes message as sent
    transcript_budget: int


def _truncate(text: str, limit: int, tokens: Tokens) -> str:
    """Cut the app's state to its slice on a word boundary, saying so."""
    if tokens.text(text) <= limit:
        return text
    cut = text
    while cut and tokens.text(cut + " [truncated]") > limit:
        cut = (
            cut[: int(len(cut) * 0.8)].rsplit(" ", 1)[0]
            if " " in cut[:-1]
            else cut[: int(len(cut) * 0.8)]
        )
    return (cut + " [truncated]") if cut else ""


def _fill(items: Sequence[Any], costs: Sequence[int], budget: int) -> tuple[list[int], int]:
    """The seed's fill: take in order what fits, skip what does not, keep trying."""
    chosen, used = [], 0
    for index, cost in enumerate(costs):
        if used + cost <= budget:
            chosen.append(index)
            used += cost
    return chosen, used


def _within(
    rank: Callable[[int], list[int]], cap: int, room: int, charged: Callable[[list[int]], int]
) -> list[int]:
    """One records slice: the seed's fill up to `cap` (`rank(cap)` gives the costs in fill
    order), cut while the records as charged pass `room`, then topped up with what still
    fits: a fill under a lowered cap can leave out more than it must, and a label can go
    with the last item that needed it."""
    costs = rank(cap)
    chosen, used = _fill(costs, costs, cap)
    over = charged(chosen) - room
    if over <= 0:
        return chosen
    while over > 0 and chosen:
        lowered = used - over
        costs = rank(lowered)
        chosen, used = _fill(costs, costs, lowered)
        over = charged(chosen) - room
    # Only a candidate that can fit is rendered and counted: with thousands of the app's
    # facts, counting each beside the others would cost seconds.
    taken, now = set(chosen), over + room  # what the last cut's records are charged
    for index, extra in enumerate(costs):
        if index in taken or used + extra > cap or now + extra > room + _JOIN_SLACK:
            continue
        grown = sorted([*chosen, index])
        cost = charged(grown)
        if cost <= room:
            chosen, used, now = grown, used + extra, cost
            taken.add(index)
    return chosen


# A line counted alone and the same line inside its block differ by a token or two where
# the lines join: a candidate passing the room by more than this cannot fit.
_JOIN_SLACK = 4


SUMMARY_LEAST_TOKENS = 40  # what a summary keeps when the quota leaves it no room


def _least_transcript(seg: _Segments, p: WindowPolicy, tokens: Tokens) -> int:
    """The least the current episode can be sent as: the opening request and the last
    `keep_last_messages` (from a unit's start) verbatim, plus the shortest summary of
    what lies between them; or the whole transcript when that is smaller."""
    t, h, cursor = seg.transcript, seg.head_end, seg.memory.cursor
    protected_from = len(t) - p.keep_last_messages
    start = max((s for s in seg.unit_starts if s <= protected_from), default=cursor)
    head, whole, kept = _cost(t[:h], tokens), _cost(t[cursor:], tokens), _cost(t[start:], tokens)
    if start <= cursor and not seg.summarized:
        return head + whole  # nothing can leave
    # A summary gives way down to SUMMARY_LEAST_TOKENS (one shorter stays as it is).
    text = SUMMARY_LEAST_TOKENS
    if seg.summarized:
        text = min(text, tokens.text(seg.memory.summary))
    least = tokens.message(summary_message("", h, start)) + text
    return head + kept + least if seg.summarized else head + min(whole, kept + least)


def _ranked(
    inp: WindowInput, seg: _Segments, visible: list[Fact], cost: dict[int, int], budget: int
) -> list[int]:
    """Fact costs in fill order; only when not all fit does relevance decide the order."""
    if sum(cost[id(f)] for f in visible) > budget:
        subject = set(inp.subject_tags) | subject_words(
            seg.transcript[: seg.head_end], seg.memory.summary
        )
        visible.sort(
            key=lambda f: (
                -len(subject.intersection(f.tags)),
                -(f.confirmed_at or f.created_at),
                f.id,
            )
        )
    return [cost[id(f)] for f in visible]


def _allocate(
    inp: WindowInput, seg: _Segments, tokens: Tokens, shown_only: bool = False
) -> _Allocation:
    """The slices' shares. `shown_only` (the window as sent): only the facts the prompt
    can show take room; planning a compaction counts every visible fact, since those
    its fold will show take room after it."""
    p = inp.policy
    state = inp.operational_state
    op_tokens = 0
    if state:
        state = _truncate(state, max(p.operational_state_max - 12, 0), tokens)
        op_tokens = tokens.message(op_message(state)) if state else 0
    available = max(p.quota_tokens - op_tokens, 0)
    # What the records may take at most: the opening request and the last messages are
    # sent verbatim whatever happens, so a quota they leave little of is not passed for
    # the records' sake. When they alone pass it, no cut of the records would meet it:
    # the records keep their slices (the turn is over quota, counted).
    least = _least_transcript(seg, p, tokens)
    room = available - least if least <= available else available

    # The seed's fill: facts up to their ceiling, then episodes up to theirs plus what the
    # facts left, then the transcript everything else. No slice is cut for a later one:
    # the transcript's floor comes out of what facts and episodes leave (the README asks
    # their ceilings to leave it; check-config checks facts.floor only), never out of
    # them. Only the verbatim least above bounds them, the later slice (episodes) giving
    # way first; `facts.floor` is not read here, so under that bound the facts may go
    # below it.
    visible = visible_facts(inp.facts, inp.scopes, seg.transcript)
    if shown_only:
        opening = seg.transcript[: seg.head_end]
        visible = showable(visible, inp.started, seg.memory, opening, seg.summarized)
    cost = {id(f): tokens.text(render_fact(f)) + 1 for f in visible}  # once, not per pass
    newest = sorted(inp.episodes, key=lambda e: -e.ended_at)
    episode_costs = [tokens.text(render_episode(e)) + 1 for e in newest]

    def charged(facts: list[Fact], episodes: list[Episode]) -> int:
        message = context_message(sorted(facts, key=lambda f: (f.created_at, f.id)), episodes)
        labelled = tokens.message(message) if message else 0
        if seg.summarized and any(f.created_at >= inp.started for f in facts):
            # heard here, shown after the summary in a block of its own: both labels
            labelled += tokens.message(split_overhead())
        return labelled

    facts_cap = min(p.facts_ceiling, room)  # room <= available
    chosen = _within(
        lambda cap: _ranked(inp, seg, visible, cost, cap),
        facts_cap,
        room,
        lambda picked: charged([visible[i] for i in picked], []),
    )
    facts = sorted((visible[i] for i in chosen), key=lambda f: (f.created_at, f.id))
    facts_tokens = sum(cost[id(f)] for f in facts)
    episodes_budget = min(
        p.episodes_ceiling + facts_cap - facts_tokens,
        available - facts_tokens,
        room - facts_tokens,
    )
    picked = _within(
        lambda _cap: episode_costs,
        episodes_budget,
        room,
        lambda picked: charged(facts, [newest[i] for i in picked]),
    )
    episodes = [newest[i] for i in picked]
    episodes_tokens = sum(episode_costs[i] for i in picked)
    context_tokens = charged(facts, episodes)
    return _Allocation(
        operational_state=state or None,
        op_tokens=op_tokens,
        facts=facts,
        facts_tokens=facts_tokens,
        episodes=episodes,
        episodes_tokens=episodes_tokens,
        context_tokens=context_tokens,
        transcript_budget=max(available - context_tokens, 0),
    )


# -- the current episode --------------------------------------------------------------


def _cost(messages: Sequence[Any], tokens: Tokens) -> int:
    return sum(tokens.message(m) for m in messages)


def plan_compaction(inp: WindowInput, tokens: Tokens) -> Compaction:
    """Which turns leave the window this turn (empty when everything fits).

    Evicts whole units from the oldest end of the recent turns, down to the low-water
    mark (so the next turns only append), never the last `keep_last_messages` messages,
    and below the transcript floor only while the window would otherwise pass the quota.
    """
    seg = _split(inp.messages, inp.memory)
    p = inp.policy
    alloc = _allocate(inp, seg, tokens)
    t, h, cursor = seg.transcript, seg.head_end, seg.memory.cursor
    head = _cost(t[:h], tokens)
    summary = (
        tokens.message(summary_message(seg.memory.summary, h, cursor)) if seg.memory.summary else 0
    )
    tail_units = [s for s in seg.unit_starts if s >= cursor]
    bounds = [*tail_units, len(t)]
    unit_costs = [_cost(t[a:b], tokens) for a, b in itertools.pairwise(bounds)]
    tail = sum(unit_costs)
    nothing = Compaction((), cursor, cursor, h)
    if head + summary + tail <= alloc.transcript_budget:
        return nothing
    target = p.low_water * alloc.transcript_budget
    # The floor is kept from what facts and episodes leave, not beyond it.
    floor = min(p.transcript_floor, alloc.transcript_budget)
    protected_from = len(t) - p.keep_last_messages
    folded, n, estimate = 0, 0, summary
    while n < len(unit_costs) and bounds[n + 1] <= protected_from:
        # The floor holds once the window fits; while it does not, the quota wins.
        fits = head + estimate + tail <= alloc.transcript_budget
        if fits and head + tail - unit_costs[n] < floor:
            break
        tail -= unit_costs[n]
        folded += unit_costs[n]
        n += 1
        estimate = min(p.summary_ceiling, summary + int(folded * _SUMMARY_GROWTH) + 40)
        if head + estimate + tail <= target:
            break
    if n == 0:
        return nothing
    return Compaction(tuple(t[cursor : bounds[n]]), cursor, bounds[n], h)


def compacted_memory(
    messages: Sequence[Any], compaction: Compaction, summary: str, now: float = 0.0
) -> Memory:
    """The memory to persist once `compaction.fold` is summarized into `summary` (at
    `now`: the facts heard by then are shown from this compaction on)."""
    transcript = messages[leading_system(messages) :]
    return Memory(
        summary=summary,
        cursor=compaction.new_cursor,
        anchor=span_anchor(transcript, compaction.head_end, compaction.new_cursor),
        facts_until=now,
    )


def summary_room(candidate: WindowInput, report: WindowReport, tokens: Tokens) -> int:
    """How many tokens the candidate's running summary may keep for its window (whose
    `report` is given) to fit the quota: the summary yields before the recent turns do,
    since it can be rebuilt and they cannot. 0 or less: no summary makes it fit."""
    over = report.history_tokens - candidate.policy.quota_tokens
    return tokens.text(candidate.memory.summary) - over


def assemble(inp: WindowInput, tokens: Tokens) -> Window:
    """The messages to send, most stable first, and what each slice spent."""
    seg = _split(inp.messages, inp.memory)
    p = inp.policy
    alloc = _allocate(inp, seg, tokens, shown_only=True)
    t, h, cursor = seg.transcript, seg.head_end, seg.memory.cursor
    out: list[Any] = list(seg.system)
    summarized = seg.summarized
    top, after_summary = shown_facts(
        alloc.facts, alloc.episodes, inp.started, seg.memory, t[:h], summarized
    )
    learned = context_message(after_summary, ()) if after_summary else None
    context = context_message(top, alloc.episodes)
    context_tokens = sum(tokens.message(m) for m in (context, learned) if m is not None)
    if context is not None:
        out.append(context)
    out += t[:h]
    summary_tokens = 0
    if summarized:
        message = summary_message(seg.memory.summary, h, cursor)
        summary_tokens = tokens.message(message)
        out.append(message)
    if learned is not None:
        out.append(learned)
    out += t[cursor:]
    if alloc.operational_state:
        out.append(op_message(alloc.operational_state))
    transcript_tokens = _cost(t[:h], tokens) + _cost(t[cursor:], tokens)
    history = alloc.op_tokens + context_tokens + summary_tokens + transcript_tokens
    system_tokens = _cost(seg.system, tokens)
    input_tokens = system_tokens + history + 3
    ceiling = min(p.output_reserve, max(p.context_window - input_tokens, 1))
    client = inp.client_max_tokens
    capped_from = client if client is not None and client > ceiling else None
    if client is not None:
        ceiling = min(ceiling, client)
    report = WindowReport(
        slices={
            "system": system_tokens,
            "operational_state": alloc.op_tokens,
            "facts": alloc.facts_tokens,
            "episodes": alloc.episodes_tokens,
            "summary": summary_tokens,
            "transcript": transcript_tokens,
        },
        history_tokens=history,
        evicted_messages=cursor - h,
        over_quota=history > p.quota_tokens,
        at_ceiling=history >= 0.95 * p.quota_tokens,
        max_tokens=ceiling,
        capped_from=capped_from,
        # The app's instruction is fixed, never cut: over its budget it is sent whole and
        # reported; it still counts against the context window (and so the reply's room).
        system_over_budget=system_tokens > p.system_budget,
        exceeds_context=input_tokens >= p.context_window,
    )
    return Window(out, report)
