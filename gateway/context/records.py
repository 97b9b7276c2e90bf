"""The records slice of the window: the app's operational state, then the durable facts
up to their ceiling, then the earlier episodes up to theirs plus what the facts left, all
bounded by what the current episode's verbatim least leaves of the quota (pure)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from gateway.context.fact_blocks import showable, subject_words, visible_facts
from gateway.context.prompts import (
    context_message,
    fact_line,
    facts_block,
    op_message,
    render_episode,
)
from gateway.context.transcript import Segments, Tokens, WindowInput, least_transcript
from gateway.context.types import Episode, Fact, fact_kind, last_said


@dataclass(frozen=True)
class Allocation:
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
    rank: Callable[[int], list[int]],
    cap: int,
    room: int,
    charged: Callable[[list[int]], int],
    measured: Callable[[list[int]], int] | None = None,
) -> list[int]:
    """One records slice: the seed's fill up to `cap` (`rank(cap)` gives the costs in fill
    order), cut while the records as charged pass `room`, or the slice as `measured`
    (its items with what they share: the facts' tag lines) passes `cap`, then topped up
    with what still fits: a fill under a lowered cap can leave out more than it must,
    and a label can go with the last item that needed it."""

    def over_by(picked: list[int]) -> tuple[int, int]:
        """(by how much the picked pass room or cap, what the records are charged)."""
        cost = charged(picked)
        slice_over = measured(picked) - cap if measured is not None else 0
        return max(cost - room, slice_over), cost

    costs = rank(cap)
    chosen, used = _fill(costs, costs, cap)
    over, now = over_by(chosen)
    if over <= 0:
        return chosen
    while over > 0 and chosen:
        lowered = used - over
        costs = rank(lowered)
        chosen, used = _fill(costs, costs, lowered)
        over, now = over_by(chosen)
    # Only a candidate that can fit is rendered and counted: with thousands of the app's
    # facts, counting each beside the others would cost seconds.
    taken = set(chosen)
    for index, extra in enumerate(costs):
        if index in taken or used + extra > cap or now + extra > room + _JOIN_SLACK:
            continue
        grown = sorted([*chosen, index])
        grown_over, cost = over_by(grown)
        if grown_over <= 0:
            chosen, used, now = grown, used + extra, cost
            taken.add(index)
    return chosen


# A line counted alone and the same line inside its block differ by a token or two where
# the lines join: a candidate passing the room by more than this cannot fit.
_JOIN_SLACK = 4


def _ranked(
    inp: WindowInput, seg: Segments, visible: list[Fact], cost: dict[int, int], budget: int
) -> list[int]:
    """Fact costs in fill order; only when not all fit does relevance decide the order."""
    if sum(cost[id(f)] for f in visible) > budget:
        subject = set(inp.subject_tags) | subject_words(
            seg.transcript[: seg.head_end], seg.memory.summary
        )
        place = _place_in_kind(visible)
        visible.sort(
            key=lambda f: (
                -len(subject.intersection(f.tags)),
                place[id(f)],
                -(f.confirmed_at or last_said(f)),
                f.id,
            )
        )
    return [cost[id(f)] for f in visible]


def _place_in_kind(facts: Sequence[Fact]) -> dict[int, int]:
    """Each fact's place among those of its kind, newest first (0: the newest). Facts
    that do not all fit are taken a round of kinds at a time: the newest of every kind,
    then the next of every kind, so one kind stated often (the prices of an agent's
    list) cannot crowd out the one email or name the customer gave early on."""
    newest = sorted(facts, key=lambda f: (-(f.confirmed_at or last_said(f)), f.id))
    seen: dict[str, int] = {}
    place = {}
    for f in newest:
        kind = fact_kind(f)
        place[id(f)] = seen.get(kind, 0)
        seen[kind] = place[id(f)] + 1
    return place


def allocate(
    inp: WindowInput, seg: Segments, tokens: Tokens, shown_only: bool = False
) -> Allocation:
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
    least = least_transcript(seg, p, tokens)
    room = available - least if least <= available else available

    # The seed's fill: facts up to their ceiling, then episodes up to theirs plus what the
    # facts left, then the transcript everything else. No slice is cut for a later one:
    # the transcript's floor comes out of what facts and episodes leave (the README asks
    # their ceilings to leave it; check-config checks facts.floor only), never out of
    # them. Only the verbatim least above bounds them, the later slice (episodes) giving
    # way first; `facts.floor` is not read here, so under that bound the facts may go
    # below it.
    visible = visible_facts(inp.facts, inp.scopes, seg.transcript, inp.started, inp.conversation)
    if shown_only:
        opening = seg.transcript[: seg.head_end]
        visible = showable(visible, inp.started, seg.memory, opening, seg.summarized)
    # once, not per pass
    # a fact's line; the tag line over each run of one tag is charged with the block
    cost = {id(f): tokens.text(fact_line(f)) + 1 for f in visible}
    newest = sorted(inp.episodes, key=lambda e: -e.ended_at)
    episode_costs = [tokens.text(render_episode(e)) + 1 for e in newest]

    def blocks(facts: Iterable[Fact]) -> list[list[Fact]]:
        """The facts by age in the blocks the window shows them in: once summarized,
        those heard here go after the summary, in a block of their own."""
        ordered = sorted(facts, key=lambda f: (f.created_at, f.id))
        if not seg.summarized:
            return [ordered]
        here = [f for f in ordered if f.created_at >= inp.started]
        return [[f for f in ordered if f.created_at < inp.started], here]

    def charged(facts: list[Fact], episodes: list[Episode]) -> int:
        shown = zip(blocks(facts), [episodes, []], strict=False)  # the cards go first
        messages = [context_message(f, e, inp.scopes) for f, e in shown]
        return sum(tokens.message(m) for m in messages if m is not None)

    def block(picked: list[int]) -> int:
        """The facts' lines as shown, each run's tag line with them (a run across both
        blocks says its tag twice)."""
        groups = blocks(visible[i] for i in picked)
        lines = [line for group in groups for line in facts_block(group, inp.scopes)]
        return sum(tokens.text(line) + 1 for line in lines)

    facts_cap = min(p.facts_ceiling, room)  # room <= available
    chosen = _within(
        lambda cap: _ranked(inp, seg, visible, cost, cap),
        facts_cap,
        room,
        lambda picked: charged([visible[i] for i in picked], []),
        block,
    )
    facts = sorted((visible[i] for i in chosen), key=lambda f: (f.created_at, f.id))
    facts_tokens = block(chosen)
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
    return Allocation(
        operational_state=state or None,
        op_tokens=op_tokens,
        facts=facts,
        facts_tokens=facts_tokens,
        episodes=episodes,
        episodes_tokens=episodes_tokens,
        context_tokens=context_tokens,
        transcript_budget=max(available - context_tokens, 0),
    )
