"""Properties that would have caught issue 10's defects 1-3: transcript, memory (with or
without a running summary), facts (the app's and those heard in turns, folded or still
verbatim), episodes, operational state, slices and quota varied together; every slice
within its budget, each filled as the seed fills it (what it leaves out would not have
fit), and no slice's share bent by a later one's need; the only bound on the records
(facts and episodes) besides their own ceilings is what the messages always sent
verbatim leave of the quota. The quota is drawn near that bound in most examples, so
the bound binds (or the least alone passes the quota) in a large share of them."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.context.anchors import span_anchor
from gateway.context.engine import SUMMARY_LEAST_TOKENS, Window, WindowInput, assemble
from gateway.context.prompts import (
    context_message,
    fact_line,
    facts_block,
    render_episode,
    split_overhead,
    summary_message,
)
from gateway.context.summaries import extractive_summary, recompress
from gateway.context.turn import EngineTokens
from gateway.context.types import Episode, Fact, Memory, WindowPolicy
from gateway.messages import RESULT_ROLES
from tests.test_window import WORDS, facts, policy, sentence, tokens, turn

TOKENS = tokens()
SYSTEM = [{"role": "system", "content": "You are the agent."}]
STARTED = 100.0  # when the conversation began: facts created since were heard (or put) in it
SCOPES = ["basic", "payment", "verified"]

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


WORDS_SPOKEN = ["yeah", "so", "um", "order", "blue", "the", "refund", "ok", "Maria", "parcel", "42"]

# A long phone turn: hundreds of words, unpunctuated.
speech = st.tuples(st.integers(100, 2500), st.integers(0, 2**16)).map(
    lambda n_seed: " ".join(
        WORDS_SPOKEN[(n_seed[1] * 7 + 13 * i) % len(WORDS_SPOKEN)] for i in range(n_seed[0])
    )
)

# A running summary: often shorter than SUMMARY_LEAST_TOKENS (then it is its own least).
summary_text = st.one_of(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=12).map(" ".join),
    st.lists(sentence(), min_size=1, max_size=12).map(" ".join),
)


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


def _head_end(messages: list[Any]) -> int:
    return next(i for i, m in enumerate(messages) if m["role"] == "user") + 1


def _kept_from(p: WindowPolicy, messages: list[Any], cursor: int) -> int:
    """Where the last `keep_last_messages` begin (a tool or function result goes with
    its call)."""
    start = max(len(messages) - p.keep_last_messages, cursor)
    while start > cursor and messages[start]["role"] in RESULT_ROLES:
        start -= 1
    return start


@st.composite
def heard(draw: Any, messages: list[Any]) -> list[Fact]:
    """Facts heard in turns: each value said in a user turn (the opening request, one
    since folded, one still verbatim) or in none, heard here or in another conversation."""
    users = [m for m in messages if m["role"] == "user"]
    out = []
    for n in range(draw(st.integers(0, 5))):
        value = f"ZQ-{7001 + n}"
        said = draw(st.one_of(st.none(), st.sampled_from(users)))
        if said is not None:
            said["content"] += f" my code is {value}"
        out.append(
            Fact(
                id=f"h{n}",
                text=f"code: {value}",
                scope=draw(st.sampled_from(SCOPES)),
                source_channel=draw(st.sampled_from(["phone", "webchat"])),
                created_at=draw(st.sampled_from([50.0 + n, STARTED + 1 + n, STARTED + 20 + n])),
                value=value,
                extracted=True,
            )
        )
    return out


@st.composite
def memory(draw: Any, messages: list[Any], p: WindowPolicy) -> Memory:
    """No summary, or one standing for the turns up to a cursor (often exactly where the
    last messages begin: the transcript is then sent at its least)."""
    head = _head_end(messages)
    cursors = [
        c
        for c in range(head + 1, len(messages) + 1)
        if c == len(messages) or messages[c]["role"] not in RESULT_ROLES
    ]
    if not cursors or draw(st.integers(0, 4)) > 2:
        return Memory()
    least = _kept_from(p, messages, head)
    cursor = least if least in cursors and draw(st.booleans()) else draw(st.sampled_from(cursors))
    return Memory(
        summary=draw(summary_text),
        cursor=cursor,
        anchor=span_anchor(messages, head, cursor),
        facts_until=draw(st.sampled_from([STARTED, STARTED + 10, STARTED + 40])),
    )


@dataclass(frozen=True)
class Case:
    inp: WindowInput
    tokens: EngineTokens  # one per example: its per-message cache holds the messages

    @property
    def messages(self) -> list[Any]:
        return list(self.inp.messages[len(SYSTEM) :])

    def window(self, **changes: Any) -> Window:
        return assemble(dataclasses.replace(self.inp, **changes), self.tokens)


@st.composite
def conversations(draw: Any, more: list[Any] | None = None) -> Case:
    """A conversation with all its parts drawn together, and a quota drawn mostly just
    around what the least leaves the records (the bound binds), sometimes below the
    least (it alone passes the quota), else anywhere."""
    messages = draw(transcript())
    p = draw(policy())
    fs = [
        dataclasses.replace(f, created_at=f.created_at + draw(st.sampled_from([0.0, STARTED])))
        for f in draw(facts())
    ] + draw(heard(messages))
    mem = draw(memory(messages, p))
    t = tokens()
    es = draw(episodes())
    state = draw(st.one_of(st.none(), sentence()))
    inp = WindowInput(
        messages=SYSTEM + messages,
        memory=mem,
        policy=p,
        facts=fs,
        episodes=es,
        operational_state=state,
        scopes=tuple(draw(st.lists(st.sampled_from(SCOPES), unique=True))),
        started=STARTED,
        cache_cold=draw(st.booleans()),
    )
    case = Case(inp, t)
    mode = draw(st.integers(0, 9))
    if mode < 8:
        least = _least(case)
        if more is not None and draw(st.booleans()):
            longer = dataclasses.replace(
                case, inp=dataclasses.replace(inp, messages=[*inp.messages, *more])
            )
            least = _least(longer)
        op = case.window().report.slices["operational_state"]
        shown = [f for f in _visible(case) if _showable(case, f)]
        wanted = min(p.facts_ceiling, _block(case, shown)) + min(
            p.facts_ceiling + p.episodes_ceiling, sum(_cost(t, render_episode(e)) for e in es)
        )
        quota = op + least + draw(st.integers(0, wanted + SPLIT))
        if mode == 7:
            quota = op + least - draw(st.integers(1, 300))
        p = dataclasses.replace(p, quota_tokens=max(quota, 1))
    return dataclasses.replace(case, inp=dataclasses.replace(inp, policy=p))


def _cost(t: EngineTokens, text: str) -> int:
    return t.text(text) + 1


def _summarized(case: Case) -> bool:
    mem = case.inp.memory
    return bool(mem.summary) and mem.cursor > _head_end(case.messages)


def _least(case: Case) -> int:
    """The least the transcript is sent as: the opening request and the last messages
    verbatim, from a tool call's start, and a one-line summary of the middle (the
    summary's label and SUMMARY_LEAST_TOKENS, or the summary as it is when shorter); or
    all of it when nothing lies between them."""
    messages, t, p = case.messages, case.tokens, case.inp.policy
    head = _head_end(messages)
    cursor = case.inp.memory.cursor if _summarized(case) else head
    start = _kept_from(p, messages, cursor)
    sent = messages[:head] + messages[cursor:]
    if not _summarized(case) and start == head:
        return sum(t.message(m) for m in sent)
    line = SUMMARY_LEAST_TOKENS
    if _summarized(case):
        line = min(line, t.text(case.inp.memory.summary))
    line += t.message(summary_message("", head, start))
    kept = sum(t.message(m) for m in messages[:head] + messages[start:]) + line
    return kept if _summarized(case) else min(kept, sum(t.message(m) for m in sent))


def _available(case: Case, window: Window) -> int:
    return max(case.inp.policy.quota_tokens - window.report.slices["operational_state"], 0)


def _room(case: Case, window: Window) -> int:
    """What the records may take: what the least leaves of the quota (after the
    operational state); all of it when the least alone passes it."""
    available, least = _available(case, window), _least(case)
    return available - least if least <= available else available


def _showable(case: Case, fact: Fact) -> bool:
    """Whether the prompt may show a fact the caller may see: one heard in this
    conversation only once the compaction that folded its turn happened (by
    `facts_until`), and never one the opening request (always verbatim) states."""
    inp = case.inp
    if fact.created_at < inp.started or not fact.extracted:
        return True
    opening = " ".join(str(m["content"]) for m in case.messages[: _head_end(case.messages)])
    return (
        _summarized(case)
        and fact.created_at <= inp.memory.facts_until
        and fact.value not in opening
    )


def _visible(case: Case) -> list[Fact]:
    """What the caller may see: its scopes, and what the customer said here (a fact
    heard here, whose value this conversation's customer turns state)."""
    said = " ".join(str(m["content"]) for m in case.messages if m["role"] == "user")
    here = case.inp.started
    return [
        f
        for f in case.inp.facts
        if f.scope in case.inp.scopes
        or (f.extracted and f.value and f.created_at >= here and f.value in said)
    ]


def _text(window: Window) -> str:
    return "\n".join(str(m.get("content")) for m in window.messages)


def _records(window: Window) -> int:
    """What the records (facts and episodes, labels and all) cost as sent."""
    s = window.report.slices
    return window.report.history_tokens - s["operational_state"] - s["summary"] - s["transcript"]


def _charged(case: Case, fs: list[Fact], es: list[Episode]) -> int:
    """What records cost the quota: one block (facts by age, episodes newest first), or,
    once summarized, the facts heard here in a block of their own after the summary."""
    fs = sorted(fs, key=lambda f: (f.created_at, f.id))
    es = sorted(es, key=lambda e: -e.ended_at)
    blocks = [(fs, es)]
    if _summarized(case):
        here = [f for f in fs if f.created_at >= case.inp.started]
        blocks = [([f for f in fs if f.created_at < case.inp.started], es), (here, [])]
    messages = [context_message(f, e, case.inp.scopes) for f, e in blocks]
    return sum(case.tokens.message(m) for m in messages if m is not None)


# What a second records block costs beyond its facts (its label and heading): a quota
# drawn up to what the records want, plus this, binds in a large share of cases.
SPLIT = TOKENS.message(split_overhead())


def _block(case: Case, fs: list[Fact]) -> int:
    """The facts slice as shown: each fact's line and each run's tag line, in each of
    the blocks the window shows (two once summarized)."""
    fs = sorted(fs, key=lambda f: (f.created_at, f.id))
    groups = [fs]
    if _summarized(case):
        groups = [
            [f for f in fs if f.created_at < case.inp.started],
            [f for f in fs if f.created_at >= case.inp.started],
        ]
    lines = [line for group in groups for line in facts_block(group, case.inp.scopes)]
    return sum(_cost(case.tokens, line) for line in lines)


# The same examples on every run (derandomize): one fresh-clone run of the suite timed
# out in the later-slice property (over 120 s against ~5 s; not reproduced in 27 seeds
# or at 600 examples), so CI reads the drawn examples that pass here, not new ones.
@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(spoken, st.integers(20, 400), st.sampled_from(["customer", "agent", "note"]))
def test_a_summary_always_gives_way(text: str, ceiling: int, label: str) -> None:
    """Defect 1: whatever the summary holds, it fits any ceiling that can hold a word."""
    shorter = recompress(f"{label}: {text}", ceiling, TOKENS.text)
    assert shorter and TOKENS.text(shorter) <= ceiling
    turns = [{"role": "user", "content": text}, {"role": "assistant", "content": text}]
    summary = extractive_summary("", turns, ceiling, TOKENS.text)
    assert summary and TOKENS.text(summary) <= ceiling


@settings(
    max_examples=70,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(conversations())
def test_each_slice_filled_in_order_within_its_budget(case: Case) -> None:
    """Defects 2 and 3: facts get up to their ceiling whatever the transcript needs, and
    episodes up to theirs plus what the facts left; a fact or episode is left out only
    when it would not have fit its slice, or the records would then pass what the
    verbatim least leaves of the quota (which they never do, a second block's label
    counted); with the least alone past the quota, the records keep their slices. So
    the window passes the quota by no more than the transcript as sent passes its least.
    A fact the prompt cannot show (heard in turns still verbatim) is not shown and takes
    no room; and the facts are the same whether episodes wait behind them or not."""
    p = case.inp.policy
    window = case.window()
    slices, text, records = window.report.slices, _text(window), _records(window)
    available, room, least = _available(case, window), _room(case, window), _least(case)
    assert records <= room
    if least <= available:
        over = window.report.history_tokens - p.quota_tokens
        assert over <= slices["summary"] + slices["transcript"] - least
    facts_budget = min(p.facts_ceiling, available, room)
    assert slices["facts"] <= facts_budget
    episodes_budget = min(
        p.episodes_ceiling + facts_budget - slices["facts"], available - slices["facts"]
    )
    assert slices["episodes"] <= episodes_budget
    visible = _visible(case)
    lines = set(text.split("\n"))  # a fact's line, not one it begins (order 1, order 12)
    shown = [f for f in visible if fact_line(f) in lines]
    assert slices["facts"] == _block(case, shown)  # tag lines within the facts' ceiling
    cards = [e for e in case.inp.episodes if render_episode(e) in text]
    for fact in case.inp.facts:
        if fact not in visible or not _showable(case, fact):
            assert fact_line(fact) not in lines, fact
        elif fact not in shown:
            with_it = _charged(case, [*shown, fact], cards)
            assert _block(case, [*shown, fact]) > facts_budget or with_it > room, fact
    for episode in case.inp.episodes:
        if episode not in cards:
            cost = _cost(case.tokens, render_episode(episode))
            with_it = _charged(case, shown, [*cards, episode])
            assert slices["episodes"] + cost > episodes_budget or with_it > room, episode
    hidden = [f for f in case.inp.facts if f not in visible or not _showable(case, f)]
    if hidden:
        without = case.window(facts=[f for f in case.inp.facts if f not in hidden])
        assert without.report.slices == slices
    if case.inp.episodes:  # bounded or not, the later slice gives way first
        assert case.window(episodes=[]).report.slices["facts"] == slices["facts"]


@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.data(), transcript())
def test_no_slice_gains_or_loses_by_a_later_ones_need(data: Any, more: list[Any]) -> None:
    """A slice's share depends only on the slices before it: not on how much transcript
    there is, summarized or not; unless the verbatim least leaves the records less than
    they would take, and then only by that bound: with the same room they are the same,
    and where the room holds what they take unbounded, they take it. (The same opening
    and summary: they are the subject the facts are ranked by.)"""
    short = data.draw(conversations(more))
    long = dataclasses.replace(
        short, inp=dataclasses.replace(short.inp, messages=short.inp.messages + more)
    )
    a, b = short.window(), long.window()
    unbounded = short.window(policy=dataclasses.replace(short.inp.policy, quota_tokens=10**7))
    wanted = _records(unbounded)
    rooms = _room(short, a), _room(long, b)
    assert _records(a) <= rooms[0] and _records(b) <= rooms[1]
    records = [(w.report.slices["facts"], w.report.slices["episodes"]) for w in (a, b, unbounded)]
    if rooms[0] == rooms[1]:
        assert records[0] == records[1]
    for n, room in enumerate(rooms):
        if room >= wanted:
            assert records[n] == records[2]
