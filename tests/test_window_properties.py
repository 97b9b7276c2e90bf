"""Properties that would have caught issue 10's defects 1-3: transcript, facts and
episodes varied together; every slice within its budget, each filled as the seed fills
it (what it leaves out would not have fit), and no slice's share bent by a later one."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.context.engine import WindowInput, assemble
from gateway.context.prompts import render_episode, render_fact
from gateway.context.summaries import extractive_summary, recompress
from gateway.context.types import Episode, Fact, Memory, WindowPolicy
from tests.test_window import facts, policy, sentence, tokens, turn

TOKENS = tokens()
SYSTEM = [{"role": "system", "content": "You are the agent."}]

# Speech as a transcript renders it: words, maybe no punctuation at all, maybe one
# endless "word" (a pasted id, a URL).
spoken = st.lists(
    st.one_of(
        st.sampled_from(["yeah", "so", "um", "order", "blue", "the", "refund", "ok", "Maria"]),
        st.text("abcdefghij0123456789-", min_size=1, max_size=120),
    ),
    min_size=1,
    max_size=150,
).map(" ".join)


@st.composite
def episodes(draw: Any) -> list[Episode]:
    return [
        Episode(
            f"e{n}",
            draw(st.sampled_from(["phone", "webchat"])),
            " ".join(draw(st.lists(sentence(), min_size=1, max_size=12))),
            float(n),
        )
        for n in range(draw(st.integers(0, 6)))
    ]


@st.composite
def transcript(draw: Any) -> list[Any]:
    return [m for n in range(draw(st.integers(1, 25))) for m in draw(turn(n))]


def _slices(
    p: WindowPolicy,
    messages: list[Any],
    fs: list[Fact],
    es: list[Episode],
    scopes: tuple[str, ...],
) -> tuple[dict[str, int], str]:
    inp = WindowInput(
        messages=SYSTEM + messages, memory=Memory(), policy=p, facts=fs, episodes=es, scopes=scopes
    )
    window = assemble(inp, tokens())  # fresh: its per-message cache lives one request
    return window.report.slices, "\n".join(str(m.get("content")) for m in window.messages)


def _cost(text: str) -> int:
    return TOKENS.text(text) + 1


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spoken, st.integers(20, 400), st.sampled_from(["customer", "agent", "note"]))
def test_a_summary_always_gives_way(text: str, ceiling: int, label: str) -> None:
    """Defect 1: whatever the summary holds, it fits any ceiling that can hold a word."""
    shorter = recompress(f"{label}: {text}", ceiling, TOKENS.text)
    assert shorter and TOKENS.text(shorter) <= ceiling
    turns = [{"role": "user", "content": text}, {"role": "assistant", "content": text}]
    summary = extractive_summary("", turns, ceiling, TOKENS.text)
    assert summary and TOKENS.text(summary) <= ceiling


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    policy(),
    transcript(),
    facts(),
    episodes(),
    st.lists(st.sampled_from(["basic", "payment", "verified"]), unique=True).map(tuple),
)
def test_each_slice_filled_in_order_within_its_budget(
    p: WindowPolicy,
    messages: list[Any],
    fs: list[Fact],
    es: list[Episode],
    scopes: tuple[str, ...],
) -> None:
    """Defects 2 and 3: facts get up to their ceiling whatever the transcript needs, and
    episodes up to theirs plus what the facts left; a fact or episode is left out only
    when it would not have fit its slice."""
    slices, text = _slices(p, messages, fs, es, scopes)
    available = p.quota_tokens  # no operational state here
    facts_budget = min(p.facts_ceiling, available)
    assert slices["facts"] <= facts_budget
    episodes_budget = min(
        p.episodes_ceiling + facts_budget - slices["facts"], available - slices["facts"]
    )
    assert slices["episodes"] <= episodes_budget
    for fact in fs:
        if fact.scope in scopes and render_fact(fact) not in text:
            assert slices["facts"] + _cost(render_fact(fact)) > facts_budget, fact
    for episode in es:
        if render_episode(episode) not in text:
            assert slices["episodes"] + _cost(render_episode(episode)) > episodes_budget


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    policy(),
    transcript(),
    transcript(),
    facts(),
    episodes(),
    st.lists(st.sampled_from(["basic", "payment", "verified"]), unique=True).map(tuple),
)
def test_no_slice_gains_or_loses_by_a_later_ones_need(
    p: WindowPolicy,
    short: list[Any],
    more: list[Any],
    fs: list[Fact],
    es: list[Episode],
    scopes: tuple[str, ...],
) -> None:
    """A slice's share depends only on the slices before it: not on how much transcript
    there is, and (for the facts) not on how many episodes wait behind them. (The same
    opening: it is the subject the facts are ranked by.)"""
    long = short + more
    a, _ = _slices(p, short, fs, es, scopes)
    b, _ = _slices(p, long, fs, es, scopes)
    c, _ = _slices(p, long, fs, [], scopes)
    assert (a["facts"], a["episodes"]) == (b["facts"], b["episodes"])
    assert c["facts"] == b["facts"]
