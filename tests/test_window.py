"""The window engine's invariants over random conversations and policies (hypothesis),
plus a table of small cases. The engine is pure: no gateway is started here."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.context.engine import (
    WindowInput,
    assemble,
    compacted_memory,
    plan_compaction,
    summary_room,
)
from gateway.context.policy import DEFAULT_POLICY, load_policies
from gateway.context.prompts import fact_line, facts_block
from gateway.context.summaries import extractive_summary, recompress
from gateway.context.turn import EngineTokens
from gateway.context.types import Episode, Fact, Memory, WindowPolicy
from gateway.ledger.tokens import TokenCounter

COUNTER = TokenCounter()
# The shipped policy's numbers (default class, no plan): the defaults live only there.
SHIPPED = load_policies(DEFAULT_POLICY.parent).resolve("-", "default", "default")


def shipped_policy(**changes: Any) -> WindowPolicy:
    return dataclasses.replace(SHIPPED, **changes)


WORDS = [
    "order",
    "refund",
    "ORD-1234",
    "courier",
    "tomorrow",
    "$45.00",
    "invoice",
    "the",
    "box",
    "Maria",
    "will",
    "send",
    "replacement",
    "delivery",
    "address",
    "blue",
    "size",
    "ok",
]


def tokens() -> EngineTokens:
    return EngineTokens(COUNTER, "gpt-4o-mini")


@st.composite
def sentence(draw: Any) -> str:
    words = draw(st.lists(st.sampled_from(WORDS), min_size=2, max_size=30))
    return " ".join(words).capitalize() + "."


@st.composite
def turn(draw: Any, n: int) -> list[dict[str, Any]]:
    user = {"role": "user", "content": " ".join(draw(st.lists(sentence(), min_size=1, max_size=4)))}
    kind = draw(st.integers(0, 9))
    if kind == 0:  # a legacy function call and its result
        return [
            user,
            {
                "role": "assistant",
                "content": None,
                "function_call": {"name": "lookup_order", "arguments": '{"id": "ORD-1234"}'},
            },
            {"role": "function", "name": "lookup_order", "content": draw(sentence())},
            {"role": "assistant", "content": draw(sentence())},
        ]
    if kind <= 2:  # a tool round trip
        call_id = f"call_{n}"
        return [
            user,
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "lookup_order", "arguments": '{"id": "ORD-1234"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": call_id, "content": draw(sentence())},
            {"role": "assistant", "content": draw(sentence())},
        ]
    return [
        user,
        {"role": "assistant", "content": " ".join(draw(st.lists(sentence(), max_size=3)))},
    ]


@st.composite
def policy(draw: Any) -> WindowPolicy:
    quota = draw(st.integers(1500, 9000))
    floor = draw(st.integers(200, quota // 3))
    facts_floor = draw(st.integers(0, 200))
    return shipped_policy(
        quota_tokens=quota,
        operational_state_max=draw(st.integers(30, 300)),
        facts_floor=facts_floor,
        facts_ceiling=draw(st.integers(facts_floor, 1200)),
        episodes_ceiling=draw(st.integers(0, 800)),
        summary_ceiling=draw(st.integers(120, 1500)),
        transcript_floor=floor,
        keep_last_messages=draw(st.integers(1, 6)),
        low_water=draw(st.floats(0.4, 1.0)),
        output_reserve=draw(st.integers(50, 1000)),
    )


@st.composite
def facts(draw: Any) -> list[Fact]:
    out = []
    for n in range(draw(st.integers(0, 12))):
        out.append(
            Fact(
                id=f"f{n}",
                text=draw(sentence()),
                tags=tuple(draw(st.lists(st.sampled_from(WORDS), max_size=3))),
                scope=draw(st.sampled_from(["basic", "payment", "verified"])),
                source_channel=draw(st.sampled_from(["phone", "webchat", "crm"])),
                confirmed=draw(st.booleans()),
                confirmed_at=draw(st.sampled_from([None, 1.7e9, 1.8e9])),  # tags differ
                created_at=float(n),
            )
        )
    return out


@st.composite
def scenario(draw: Any) -> dict[str, Any]:
    turns = [m for n in range(draw(st.integers(1, 30))) for m in draw(turn(n))]
    return {
        "transcript": turns,
        "policy": draw(policy()),
        "facts": draw(facts()),
        "episodes": [
            Episode(
                f"c{n}", draw(st.sampled_from(["phone", "webchat"])), draw(sentence()), float(n)
            )
            for n in range(draw(st.integers(0, 4)))
        ],
        "scopes": tuple(
            draw(st.lists(st.sampled_from(["basic", "payment"]), max_size=2, unique=True))
        ),
        "state": draw(st.one_of(st.none(), sentence())),
        "system": [{"role": "system", "content": "You are the agent. " * draw(st.integers(1, 30))}],
    }


def run_conversation(sc: dict[str, Any]) -> None:
    """Replay the conversation turn by turn as the gateway's shell does: plan, summarize,
    persist, then assemble and send. Check every invariant on every request."""
    p: WindowPolicy = sc["policy"]
    t = tokens()
    persisted = Memory()
    events: list[tuple[str, Any]] = []
    transcript = sc["transcript"]
    user_ends = [i + 1 for i, m in enumerate(transcript) if m["role"] == "user"]
    for end in user_ends:
        messages = sc["system"] + transcript[:end]
        inp = WindowInput(
            messages=messages,
            memory=persisted,
            policy=p,
            facts=sc["facts"],
            episodes=sc["episodes"],
            operational_state=sc["state"],
            scopes=sc["scopes"],
        )
        compaction = plan_compaction(inp, t)
        if compaction.fold:
            previous = persisted.summary if persisted.cursor == compaction.first else ""
            summary = (
                extractive_summary(previous, compaction.fold, p.summary_ceiling, t.text) or "(none)"
            )
            persisted = compacted_memory(messages, compaction, summary)
            events.append(("persist", persisted.cursor))
            inp = dataclasses.replace(inp, memory=persisted)
        window = assemble(inp, t)
        head_end = next(i for i, m in enumerate(transcript) if m["role"] == "user") + 1
        events.append(("send", (window.report.evicted_messages, head_end)))
        check_window(sc, messages, persisted, window, t)
    check_order(events)


def check_window(
    sc: dict[str, Any], messages: list[Any], memory: Memory, window: Any, t: Any
) -> None:
    p: WindowPolicy = sc["policy"]
    out, report = window.messages, window.report
    system = sc["system"]
    transcript = messages[len(system) :]
    # the system instruction, intact and first
    assert out[: len(system)] == system
    # the first user turn, verbatim
    first_user = next(m for m in transcript if m["role"] == "user")
    assert any(m is first_user for m in out)
    # the last K messages verbatim, in order, at the end (before the operational state)
    tail = out[:-1] if sc["state"] else out
    k = min(p.keep_last_messages, len(transcript))
    assert tail[-k:] == transcript[-k:]
    # within quota, or flagged as the documented exception
    assert report.over_quota == (report.history_tokens > p.quota_tokens)
    if not report.over_quota:
        assert report.history_tokens <= p.quota_tokens
    # no fact above the customer's scopes (one that reads exactly as a fact in scope
    # cannot be told apart from it in the text)
    text = "\n".join(str(m.get("content")) for m in out)
    lines = set(text.split("\n"))
    allowed = {fact_line(f) for f in sc["facts"] if f.scope in sc["scopes"]}
    for fact in sc["facts"]:
        if fact.scope not in sc["scopes"] and fact_line(fact) not in allowed:
            assert fact_line(fact) not in lines
    # no tool or function result without its call; kept turns never start on a result
    calls = {c["id"] for m in out if m.get("tool_calls") for c in m["tool_calls"]}
    for n, m in enumerate(out):
        if m["role"] == "tool":
            assert m["tool_call_id"] in calls
            assert out[n - 1]["role"] in ("assistant", "tool")
        if m["role"] == "function":  # right after the call it answers
            assert out[n - 1].get("function_call", {}).get("name") == m["name"]
    # every message left out is covered by the persisted summary
    left_out = [m for m in transcript if not any(m is o for o in out)]
    head_end = transcript.index(first_user) + 1
    assert len(left_out) == memory.cursor - head_end if left_out else True
    if left_out:
        assert memory.summary and any(memory.summary in str(m.get("content")) for m in out)


def check_order(events: list[tuple[str, Any]]) -> None:
    """A request that lacks turns is only sent after a summary covering them was persisted."""
    covered = 0  # transcript[:covered] is summarized in a persisted summary
    for kind, value in events:
        if kind == "persist":
            covered = value
        else:
            evicted, head_end = value
            assert evicted == 0 or head_end + evicted <= covered


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario())
def test_invariants_hold_on_every_turn(sc: dict[str, Any]) -> None:
    run_conversation(sc)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario(), st.integers(1, 40))
def test_later_slices_never_take_from_earlier_ones(sc: dict[str, Any], extra: int) -> None:
    """More transcript never costs the operational state, the facts or the episodes."""
    t = tokens()
    p = sc["policy"]
    base = sc["system"] + [{"role": "user", "content": "hello"}]
    longer = (
        base
        + [{"role": "assistant", "content": "ok " * 50}, {"role": "user", "content": "more " * 80}]
        * extra
    )
    reports = []
    for messages in (base, longer):
        inp = WindowInput(
            messages=messages,
            memory=Memory(),
            policy=p,
            facts=sc["facts"],
            episodes=sc["episodes"],
            operational_state=sc["state"],
            scopes=sc["scopes"],
        )
        reports.append(assemble(inp, t).report.slices)
    for name in ("operational_state", "facts", "episodes"):
        assert reports[1][name] == reports[0][name]


@settings(max_examples=60, deadline=None)
@given(facts(), st.lists(st.sampled_from(["basic", "payment", "verified"]), unique=True))
def test_no_in_scope_fact_dropped_while_under_the_ceiling(
    all_facts: list[Fact], scopes: list[str]
) -> None:
    t = tokens()
    p = shipped_policy(quota_tokens=20000, facts_ceiling=5000, transcript_floor=500)
    inp = WindowInput(
        messages=[{"role": "user", "content": "hi"}],
        memory=Memory(),
        policy=p,
        facts=all_facts,
        scopes=tuple(scopes),
    )
    out = "\n".join(str(m["content"]) for m in assemble(inp, t).messages)
    visible = [f for f in all_facts if f.scope in scopes]
    assert sum(t.text(fact_line(f)) + 1 for f in visible) <= p.facts_ceiling
    lines = set(out.split("\n"))
    for fact in visible:
        assert fact_line(fact) in lines


def test_facts_beyond_the_ceiling_are_chosen_by_relevance_not_age() -> None:
    t = tokens()
    old_relevant = Fact("a", "Order ORD-1 was lost by the courier", ("delivery",), created_at=1.0)
    new_irrelevant = Fact(
        "b", "Prefers blue jackets in size M please", ("fashion",), created_at=9.0
    )
    # room for one of them with its tag line, not two
    one = max(sum(t.text(x) + 1 for x in facts_block([f])) for f in (old_relevant, new_irrelevant))
    p = shipped_policy(quota_tokens=6000, facts_floor=0, facts_ceiling=one, transcript_floor=500)
    inp = WindowInput(
        messages=[{"role": "user", "content": "where is it?"}],
        memory=Memory(),
        policy=p,
        facts=[old_relevant, new_irrelevant],
        scopes=("basic",),
        subject_tags=("delivery",),
    )
    text = "\n".join(str(m["content"]) for m in assemble(inp, t).messages)
    assert "ORD-1" in text and "blue jackets" not in text


def test_facts_beyond_the_ceiling_of_equal_relevance_go_by_when_last_said() -> None:
    """An order heard long ago that a later turn stated again is as fresh as that turn:
    it is shown before one heard later and said once."""
    t = tokens()
    asked_after = Fact(
        "a", "order: 7781342", ("order",), created_at=1.0, value="7781342", said_again_at=9.0
    )
    said_once = Fact("b", "order: 7790415", ("order",), created_at=5.0, value="7790415")
    one = sum(t.text(x) + 1 for x in facts_block([asked_after]))  # one of the two, tagged
    p = shipped_policy(quota_tokens=6000, facts_floor=0, facts_ceiling=one, transcript_floor=500)
    inp = WindowInput(
        messages=[{"role": "user", "content": "where is it?"}],
        memory=Memory(),
        policy=p,
        facts=[asked_after, said_once],
        scopes=("basic",),
    )
    text = "\n".join(str(m["content"]) for m in assemble(inp, t).messages)
    assert "7781342" in text and "7790415" not in text


def test_facts_beyond_the_ceiling_keep_every_kind_before_more_of_one() -> None:
    """An agent's price list heard after the customer's email: the prices past the
    ceiling give way, the one email stays (the newest of each kind first, then the
    next of each kind)."""
    t = tokens()
    email = Fact(
        "e",
        "email: ann.lee.mendes-customer@example-store.com.br",
        ("email",),
        created_at=1.0,
        value="ann.lee.mendes-customer@example-store.com.br",
    )
    prices = [
        Fact(f"p{n}", f"amount: R$ {n},90", ("billing",), created_at=2.0 + n, value=f"R$ {n},90")
        for n in range(10, 30)
    ]
    three = sum(t.text(x) + 1 for x in facts_block([email, *prices[-2:]]))
    p = shipped_policy(quota_tokens=6000, facts_floor=0, facts_ceiling=three, transcript_floor=500)
    inp = WindowInput(
        messages=[{"role": "user", "content": "any news on it?"}],
        memory=Memory(),
        policy=p,
        facts=[email, *prices],
        scopes=("basic", "verified"),
    )
    text = "\n".join(str(m["content"]) for m in assemble(inp, t).messages)
    assert "ann.lee.mendes-customer@example-store.com.br" in text
    assert "R$ 29,90" in text and "R$ 10,90" not in text  # the newest prices go first


@pytest.mark.parametrize("where", ["first", "last"])
def test_a_history_rewritten_at_the_summarized_span_resets_the_memory(where: str) -> None:
    t = tokens()
    p = shipped_policy(
        quota_tokens=1200, transcript_floor=200, keep_last_messages=2, summary_ceiling=200
    )
    msgs = [{"role": "user", "content": "open"}] + [
        {"role": r, "content": f"message {n} " * 30}
        for n in range(20)
        for r in ("assistant", "user")
    ]
    inp = WindowInput(messages=msgs, memory=Memory(), policy=p)
    compaction = plan_compaction(inp, t)
    memory = compacted_memory(msgs, compaction, "summary.")
    edited = [*msgs]
    at = compaction.head_end if where == "first" else compaction.new_cursor - 1
    edited[at] = {"role": edited[at]["role"], "content": "edited"}
    window = assemble(dataclasses.replace(inp, messages=edited, memory=memory), t)
    assert window.report.evicted_messages == 0  # the stale summary is not used


def test_an_opening_bigger_than_the_quota_still_lets_the_middle_go() -> None:
    """The opening stays verbatim (it is what the customer asked for), so the window is
    over quota; compaction must still run, not give up and grow without bound."""
    t = tokens()
    p = shipped_policy(
        quota_tokens=2000,
        transcript_floor=300,
        keep_last_messages=2,
        summary_ceiling=200,
        facts_floor=0,
    )
    msgs = [{"role": "user", "content": "order ORD-1 " * 1200}]
    msgs += [
        {"role": r, "content": f"turn {n} about ORD-{n}. " * 20}
        for n in range(30)
        for r in ("assistant", "user")
    ]
    inp = WindowInput(messages=msgs, memory=Memory(), policy=p)
    compaction = plan_compaction(inp, t)
    assert compaction.fold
    memory = compacted_memory(msgs, compaction, "customer: turns about orders.")
    report = assemble(dataclasses.replace(inp, memory=memory), t).report
    assert report.over_quota and report.evicted_messages > 0
    assert report.history_tokens < assemble(inp, t).report.history_tokens


def _turns_of(total: int, t: EngineTokens) -> list[dict[str, str]]:
    """An opening and agent/customer turns of ~60 tokens each, `total` tokens in all."""
    msgs = [{"role": "user", "content": "my order ORD-77 never came"}]
    n = 0
    while sum(t.message(m) for m in msgs) < total:
        n += 1
        for r in ("assistant", "user"):
            msgs.append({"role": r, "content": f"turn {n}: the courier said box {n} " * 6})
    return msgs


@pytest.mark.parametrize(
    ("share", "cold", "compacts"),
    [
        (0.9, False, False),  # fits: a warm cache keeps the prefix it has cached
        (0.9, True, True),  # fits, but the cache is cold anyway: down to the low-water mark
        (0.5, True, True),  # cold and past the mark, though far from the budget
        (0.25, True, False),  # cold but under the low-water mark already: nothing to fold
        (1.3, False, True),  # past the budget: compacts, warm or cold
    ],
)
def test_a_turn_after_the_cache_went_cold_compacts_down_to_the_mark(
    share: float, cold: bool, compacts: bool
) -> None:
    """A pause past the provider's cache TTL bills the next request fresh whatever it
    holds: that turn compacts to the low-water mark whenever the window is past it,
    though it fits, so the turns after it carry less."""
    t = tokens()
    p = shipped_policy(quota_tokens=2000, low_water=0.3, keep_last_messages=2)
    msgs = _turns_of(int(2000 * share), t)
    inp = WindowInput(messages=msgs, memory=Memory(), policy=p, cache_cold=cold)
    compaction = plan_compaction(inp, t)
    assert bool(compaction.fold) is compacts
    if compacts:
        assert compaction.reason == ("quota" if share > 1 else "cache_cold")
        memory = compacted_memory(msgs, compaction, "customer: ORD-77 never came.")
        report = assemble(dataclasses.replace(inp, memory=memory), t).report
        assert report.history_tokens <= 0.3 * 2000 + 200  # the mark, the opening, the summary
        assert not report.over_quota


def test_one_oversized_sentence_does_not_wipe_the_summary() -> None:
    t = tokens()
    previous = "customer: My order ORD-48213 arrived damaged."
    paste = {"role": "user", "content": "log line " * 400 + "invoice INV-99812 total $1,240.00"}
    summary = extractive_summary(previous, [paste], 120, t.text)
    assert "ORD-48213" in summary
    assert "INV-99812" in summary and "$1,240.00" in summary  # condensed, not cut


@pytest.mark.parametrize(("sentences", "over"), [(3, False), (120, True)])
def test_summary_room_is_what_the_summary_may_keep_within_the_quota(
    sentences: int, over: bool
) -> None:
    """The engine, not its shell, says how far a summary must shrink: a summary cut to
    its room brings the window back under the quota."""
    t = tokens()
    p = shipped_policy(quota_tokens=1200, transcript_floor=200, keep_last_messages=2)
    msgs = [{"role": "user", "content": "open"}] + [
        {"role": r, "content": f"message {n} " * 30}
        for n in range(20)
        for r in ("assistant", "user")
    ]
    inp = WindowInput(messages=msgs, memory=Memory(), policy=p)
    compaction = plan_compaction(inp, t)
    summary = " ".join(f"customer: asked about order ORD-{n} twice." for n in range(sentences))
    candidate = dataclasses.replace(inp, memory=compacted_memory(msgs, compaction, summary))
    report = assemble(candidate, t).report
    assert report.over_quota is over
    room = summary_room(candidate, report, t)
    assert room == t.text(summary) + p.quota_tokens - report.history_tokens
    assert (room < t.text(summary)) is over
    shorter = recompress(summary, room, t.text)
    memory = dataclasses.replace(candidate.memory, summary=shorter)
    assert not assemble(dataclasses.replace(candidate, memory=memory), t).report.over_quota


def test_the_summary_keeps_dates_and_an_agents_promises_in_portuguese_and_spanish() -> None:
    """The extractive summary scores what a sentence carries in the conversation's own
    language: an agent's "vou enviar ... até sexta-feira" is kept like "I'll send it by
    Friday"; a customer's own plan ("vou ver com meu marido") is no promise."""
    t = tokens()
    turns = [
        {"role": "user", "content": "Oi. Meu pedido não chegou ainda."},
        {"role": "assistant", "content": "Entendo. Vou reenviar o produto sem custo."},
        {"role": "assistant", "content": "Chega na sexta-feira pela manhã."},
        {"role": "assistant", "content": "Le devolvemos el importe completo."},
        {"role": "user", "content": "Tá bom. Vou ver com meu marido depois."},
    ]
    summary = extractive_summary("", turns, 400, t.text)
    assert "Vou reenviar o produto sem custo." in summary
    assert "Chega na sexta-feira pela manhã." in summary
    assert "Le devolvemos el importe completo." in summary
    assert "Vou ver com meu marido" not in summary
