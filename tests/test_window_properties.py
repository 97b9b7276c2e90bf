"""Properties that would have caught issue 10's defects 1-3: transcript, facts and
episodes varied together; every slice within its budget, each filled as the seed fills
it (what it leaves out would not have fit), and no slice's share bent by a later one's
need; the only bound on the records (facts and episodes) besides their own ceilings is
what the messages always sent verbatim leave of the quota."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.context.engine import SUMMARY_LEAST_TOKENS, WindowInput, assemble
from gateway.context.prompts import (
    context_message,
    render_episode,
    render_fact,
    split_overhead,
    summary_message,
)
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


# A long phone turn: hundreds of words, unpunctuated.
speech = st.tuples(st.integers(100, 2500), st.integers(0, 2**16)).map(
    lambda n_seed: " ".join(
        WORDS_SPOKEN[(n_seed[1] * 7 + 13 * i) % len(WORDS_SPOKEN)] for i in range(n_seed[0])
    )
)
WORDS_SPOKEN = ["yeah", "so", "um", "order", "blue", "the", "refund", "ok", "Maria", "parcel", "42"]


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
    """Turns of short sentences, some of them long unpunctuated speech: the last
    messages alone may leave the records less than their ceilings."""
    out = []
    for n in range(draw(st.integers(1, 25))):
        messages = draw(turn(n))
        if draw(st.integers(0, 2)) == 0:
            messages[0] = {"role": "user", "content": draw(speech)}
        out += messages
    return out


def _slices(
    p: WindowPolicy,
    messages: list[Any],
    fs: list[Fact],
    es: list[Episode],
    scopes: tuple[str, ...],
) -> tuple[dict[str, int], str, int]:
    """The window's slices, its text, and what its records (facts and episodes, labels
    and all) cost as sent."""
    inp = WindowInput(
        messages=SYSTEM + messages, memory=Memory(), policy=p, facts=fs, episodes=es, scopes=scopes
    )
    window = assemble(inp, tokens())  # fresh: its per-message cache lives one request
    s = window.report.slices
    records = window.report.history_tokens - s["operational_state"] - s["summary"] - s["transcript"]
    return s, "\n".join(str(m.get("content")) for m in window.messages), records


def _room(p: WindowPolicy, messages: list[Any]) -> int:
    """What the records may take: the quota less the least the transcript is sent as (the
    opening request and the last messages verbatim, from a tool call's start, and a
    one-line summary of the middle; or all of it when that is less)."""
    head = next(i for i, m in enumerate(messages) if m["role"] == "user") + 1
    start = max(len(messages) - p.keep_last_messages, head)
    while start > head and messages[start]["role"] == "tool":
        start -= 1
    whole = sum(TOKENS.message(m) for m in messages)
    least = whole
    if start > head:
        kept = sum(TOKENS.message(m) for m in messages[:head] + messages[start:])
        summary = TOKENS.message(summary_message("", head, start)) + SUMMARY_LEAST_TOKENS
        least = min(whole, kept + summary)
    # When the least alone passes the quota, cutting the records would not meet it.
    return p.quota_tokens - least if least <= p.quota_tokens else p.quota_tokens


def _cost(text: str) -> int:
    return TOKENS.text(text) + 1


SPLIT = TOKENS.message(split_overhead())
# What labels a records block adds to its facts and episodes, at most.
LABELS = (
    TOKENS.message(context_message([Fact("x", "x")], [Episode("y", "phone", "y", 0.0)]))
    + SPLIT
    - _cost(render_fact(Fact("x", "x")))
    - _cost(render_episode(Episode("y", "phone", "y", 0.0)))
)


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
    when it would not have fit its slice, or the records would then pass what the
    verbatim messages leave of the quota (which they never do)."""
    slices, text, records = _slices(p, messages, fs, es, scopes)
    available = p.quota_tokens  # no operational state here
    room = _room(p, messages)
    assert records <= room
    facts_budget = min(p.facts_ceiling, available, room)
    assert slices["facts"] <= facts_budget
    episodes_budget = min(
        p.episodes_ceiling + facts_budget - slices["facts"], available - slices["facts"]
    )
    assert slices["episodes"] <= episodes_budget
    for fact in fs:
        if fact.scope in scopes and render_fact(fact) not in text:
            cost = _cost(render_fact(fact))
            assert slices["facts"] + cost > facts_budget or records + LABELS + cost > room, fact
    for episode in es:
        if render_episode(episode) not in text:
            cost = _cost(render_episode(episode))
            assert slices["episodes"] + cost > episodes_budget or records + LABELS + cost > room


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
    there is, and (for the facts) not on how many episodes wait behind them; unless the
    verbatim messages leave the records less than they would take, and then only by
    that bound, the later slice (episodes) giving way first. (The same opening: it is
    the subject the facts are ranked by.)"""
    long = short + more
    a, _, a_records = _slices(p, short, fs, es, scopes)
    b, _, b_records = _slices(p, long, fs, es, scopes)
    c, _, _ = _slices(p, long, fs, [], scopes)
    assert c["facts"] == b["facts"]  # bounded or not, the later slice gives way first
    assert a_records <= _room(p, short) and b_records <= _room(p, long)
    widest = p.facts_ceiling + p.episodes_ceiling + 2 * SPLIT + 120  # the records, labelled
    if min(_room(p, short), _room(p, long)) >= widest:
        assert (a["facts"], a["episodes"]) == (b["facts"], b["episodes"])
