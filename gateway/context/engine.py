"""The budgeted context window: pure functions over plain data (no I/O, no clock).

The window is built from slices filled in priority order; each spends what it needs
and hands the rest on, none takes from an earlier one (one bound excepted: facts and
episodes take at most what the current episode's verbatim least, its opening request
and last messages, leaves of the quota):

  system (the app's own, never cut; its later instructions within system_budget) ->
  operational state -> durable facts ->
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

`gateway.context.records` fills the operational state, facts and episodes slices;
`gateway.context.transcript` splits the transcript and says the least it can be sent as.

Compaction happens in two steps because summarizing is I/O: `plan_compaction` says
which turns must leave; the caller folds them into the summary and persists it; only
then does `assemble` build the prompt without them.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from gateway.context.anchors import span_anchor
from gateway.context.fact_blocks import shown_facts
from gateway.context.prompts import context_message, op_message, summary_message
from gateway.context.records import allocate
from gateway.context.transcript import (
    SUMMARY_LEAST_TOKENS,
    Tokens,
    WindowInput,
    cost,
    kept_instructions,
    split,
)
from gateway.context.types import Memory
from gateway.messages import leading_system

__all__ = [
    "SUMMARY_LEAST_TOKENS",
    "Compaction",
    "Tokens",
    "Window",
    "WindowInput",
    "WindowReport",
    "assemble",
    "compacted_memory",
    "plan_compaction",
    "summary_room",
]

_SUMMARY_GROWTH = 0.3  # planning estimate: a summary grows ~30% of what it absorbs


@dataclass(frozen=True)
class Compaction:
    """Turns that must leave the window this turn, to be summarized first."""

    fold: tuple[Any, ...]
    first: int  # transcript index of fold[0]
    new_cursor: int
    head_end: int
    # "quota": the window did not fit; "cache_cold": it fit, but the provider's cache
    # was cold (not a quota hit).
    reason: str = "quota"


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


# -- the current episode --------------------------------------------------------------


def plan_compaction(inp: WindowInput, tokens: Tokens) -> Compaction:
    """Which turns leave the window this turn (empty when everything fits).

    Evicts whole units from the oldest end of the recent turns, down to the low-water
    mark (so the next turns only append), never the last `keep_last_messages` messages,
    and below the transcript floor only while the window would otherwise pass the quota.
    A turn after the provider's cache went cold (`cache_cold`) compacts the same way
    whenever the window is past the low-water mark, fitting or not.
    """
    seg = split(inp.messages, inp.memory)
    p = inp.policy
    alloc = allocate(inp, seg, tokens)
    t, h, cursor = seg.transcript, seg.head_end, seg.memory.cursor
    head = cost(t[:h], tokens)
    summary = (
        tokens.message(summary_message(seg.memory.summary, h, cursor)) if seg.memory.summary else 0
    )
    tail_units = [s for s in seg.unit_starts if s >= cursor]
    bounds = [*tail_units, len(t)]
    unit_costs = [cost(t[a:b], tokens) for a, b in itertools.pairwise(bounds)]
    tail = sum(unit_costs)
    nothing = Compaction((), cursor, cursor, h)
    target = p.low_water * alloc.transcript_budget
    # A cold cache bills this request fresh whatever it holds: compacting now costs no
    # cached prefix, and the turns after it start from the low-water mark.
    cold = inp.cache_cold and head + summary + tail > target
    if head + summary + tail <= alloc.transcript_budget and not cold:
        return nothing
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
    fitted = head + summary + sum(unit_costs) <= alloc.transcript_budget
    reason = "cache_cold" if fitted else "quota"
    return Compaction(tuple(t[cursor : bounds[n]]), cursor, bounds[n], h, reason)


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
    seg = split(inp.messages, inp.memory)
    p = inp.policy
    alloc = allocate(inp, seg, tokens, shown_only=True)
    t, h, cursor = seg.transcript, seg.head_end, seg.memory.cursor
    out: list[Any] = list(seg.system)
    summarized = seg.summarized
    top, after_summary = shown_facts(
        alloc.facts, alloc.episodes, inp.started, seg.memory, t[:h], summarized
    )
    learned = context_message(after_summary, (), inp.scopes) if after_summary else None
    context = context_message(top, alloc.episodes, inp.scopes)
    context_tokens = sum(tokens.message(m) for m in (context, learned) if m is not None)
    if context is not None:
        out.append(context)
    out += t[:h]
    summary_tokens = 0
    system_tokens = cost(seg.system, tokens)
    if summarized:
        message = summary_message(seg.memory.summary, h, cursor)
        summary_tokens = tokens.message(message)
        out.append(message)
    # The app's later instructions stay, as its opening one does (counted as system).
    kept = kept_instructions(seg, p.system_budget - system_tokens, tokens)
    out += kept
    system_tokens += cost(kept, tokens)
    if learned is not None:
        out.append(learned)
    out += t[cursor:]
    if alloc.operational_state:
        out.append(op_message(alloc.operational_state))
    transcript_tokens = cost(t[:h], tokens) + cost(t[cursor:], tokens)
    history = alloc.op_tokens + context_tokens + summary_tokens + transcript_tokens
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
        evicted_messages=cursor - h - len(kept),
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
