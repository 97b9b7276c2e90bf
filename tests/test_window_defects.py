"""Issue 10, defects 1-8: each as a user (through the openai SDK, the gateway in process)
or, for the pure engine and the policy loader, as a table of plain cases."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from gateway.context.engine import (
    Compaction,
    WindowInput,
    assemble,
    compacted_memory,
    plan_compaction,
)
from gateway.context.fact_blocks import visible_facts
from gateway.context.policy import DEFAULT_POLICY, POLICY_FILE, load_policies
from gateway.context.prompts import fact_line, facts_block, render_episode
from gateway.context.summaries import extractive_summary, recompress
from gateway.context.turn import EngineTokens
from gateway.context.types import Episode, Fact, Memory, WindowPolicy
from gateway.errors import ConfigError
from gateway.ledger.tokens import TokenCounter
from tests.inprocess import InProcessGateway, SimulatorLog

TOKENS = EngineTokens(TokenCounter(), "gpt-4o-mini")
SHIPPED = load_policies(DEFAULT_POLICY.parent)
SYSTEM = {"role": "system", "content": "You are the agent of an online store."}
# An ASR-style phone turn: no punctuation, so one "sentence" however long it gets.
SPOKEN = [
    *("yeah", "so", "um", "the", "blue", "jacket", "size", "medium", "i", "saw", "on"),
    *("the", "site", "last", "week", "do", "you", "still", "have", "it", "in", "stock"),
    *("and", "what", "about", "the", "price", "because", "my", "sister", "said", "it"),
    *("was", "cheaper", "somewhere", "else", "can", "you", "match", "that", "or", "not"),
]


def _policy(**changes: Any) -> WindowPolicy:
    return dataclasses.replace(SHIPPED.resolve("-", "default", "default"), **changes)


def _spoken(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(SPOKEN) for _ in range(words))


def _fact(n: int, words: int = 40, **kw: Any) -> Fact:
    return Fact(id=f"f{n}", text=f"Fact {n}: " + "detail " * words, created_at=float(n), **kw)


def _window(policy: WindowPolicy, messages: list[Any], **kw: Any) -> Any:
    return assemble(WindowInput(messages=messages, memory=Memory(), policy=policy, **kw), TOKENS)


# -- 1: the summary always gives way -------------------------------------------------


def test_recompress_cuts_an_unpunctuated_turn_rather_than_give_up() -> None:
    summary = "customer: " + _spoken(random.Random(1), 120)
    shorter = recompress(summary, 60, TOKENS.text)
    assert shorter and TOKENS.text(shorter) <= 60
    assert shorter.startswith("customer: ")


def test_an_unpunctuated_long_customer_turn_leaves_a_summary() -> None:
    turns = [{"role": "user", "content": _spoken(random.Random(2), 300)}]
    summary = extractive_summary("", turns, 3000, TOKENS.text)
    assert summary.startswith("customer: ")


def test_unpunctuated_catalog_turns_stay_within_the_quota(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """Issue 10, defect 1: class catalog, 13 of 50 turns over its 3,500 tokens."""
    client = sqlite_app_gateway.openai()
    rng = random.Random(3)
    messages: list[Any] = [{"role": "user", "content": "hi i want to know about the catalog"}]
    quota = SHIPPED.resolve("pro", "catalog", "gpt-4o-mini").quota_tokens  # acme is on pro
    for _ in range(12):
        messages.append({"role": "user", "content": _spoken(rng, 300)})
        raw = client.chat.completions.with_raw_response.create(
            model="gpt-4o-mini",
            messages=messages,
            extra_headers={"X-Conversation-Id": "spoken", "X-Conversation-Class": "catalog"},
        )
        messages.append({"role": "assistant", "content": raw.parse().choices[0].message.content})
        assert int(raw.headers["x-gateway-window-tokens"]) <= quota


def test_the_records_leave_room_for_what_is_always_sent_verbatim(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """Long last turns beside a full facts slice: the opening request, a one-line summary
    and the last four messages fit the quota, so the turn must too; the facts give way
    (they were kept whole and the window passed the quota by up to the records' size)."""
    gw = sqlite_app_gateway
    client = gw.openai()
    facts = [
        {"text": f"Fact {n}: the customer's detail number {n} " + "item " * 36} for n in range(12)
    ]
    put = gw.http.put(
        "/v1/customers/cust-records/facts",
        json={"facts": facts},
        headers={"Authorization": f"Bearer {gw.keys['acme']}"},
    )
    assert put.status_code == 200, put.text
    counter = TokenCounter()
    rng = random.Random(4)
    messages: list[Any] = [{"role": "user", "content": "hello, a question about my account"}]
    binding = 0
    for _ in range(6):
        messages.append({"role": "user", "content": _spoken(rng, 950)})
        raw = client.chat.completions.with_raw_response.create(
            model="gpt-4o-mini",
            messages=messages,
            extra_headers={
                "X-Conversation-Id": "records-room",
                "X-Customer-Id": "cust-records",
                "X-Conversation-Class": "support",
            },
        )
        assert raw.headers["x-gateway-class"] == "support"
        policy = SHIPPED.resolve("pro", "support", "gpt-4o-mini")  # acme is on pro
        window = int(raw.headers["x-gateway-window-tokens"])
        least = counter.count_messages(
            "gpt-4o-mini", [messages[0], *messages[-policy.keep_last_messages :]]
        )
        binding += int(least + policy.facts_ceiling > policy.quota_tokens)
        if least + 120 <= policy.quota_tokens:  # the least, with a short summary, fits
            assert window <= policy.quota_tokens, (least, window)
        messages.append({"role": "assistant", "content": raw.parse().choices[0].message.content})
    assert binding >= 2  # the facts did have to give way


def _compacted(inp: WindowInput, summary: str, now: float) -> WindowInput:
    compaction = plan_compaction(inp, TOKENS)
    assert compaction.fold
    return dataclasses.replace(inp, memory=compacted_memory(inp.messages, compaction, summary, now))


@pytest.mark.parametrize("quota", [400, 440, 480])
def test_facts_the_prompt_cannot_show_take_no_room_from_those_it_can(quota: int) -> None:
    """Facts heard in turns still verbatim are not shown (the turns say them): they take
    no room, and the app's fact, which fits beside the verbatim least, is shown; nor is
    a second block's label charged when nothing heard here is shown."""
    app = Fact(id="a1", text="Customer is on the Gold plan, renewal 2026-03-01", created_at=0.0)
    heard = [
        Fact(
            id=f"h{i}",
            text="order number",
            value=f"ORD-77{i}{i}",
            extracted=True,
            source_channel="phone",
            created_at=10.0 + i,
        )
        for i in range(4)
    ]
    messages: list[Any] = [{"role": "user", "content": "hello"}]
    for i in range(6):
        said = " ".join(["yes"] * 60) + (f" my order is ORD-77{i - 2}{i - 2}" if i >= 2 else "")
        messages += [
            {"role": "user", "content": said},
            {"role": "assistant", "content": "ok " * 60},
        ]
    inp = WindowInput(
        messages=messages,
        memory=Memory(),
        policy=_policy(quota_tokens=quota, transcript_floor=0),
        facts=[app, *heard],
        started=5.0,
        scopes=("basic",),
    )
    window = assemble(_compacted(inp, "The customer asked about an order.", 6.0), TOKENS)
    text = "\n".join(str(m.get("content")) for m in window.messages)
    assert "Gold plan" in text and not window.report.over_quota


def test_a_fact_that_fits_beside_the_least_is_shown() -> None:
    """The bound cut the facts by what the records passed the room, then refilled them
    under the lowered cap: the second block's label left with the fact heard here, and
    the lower cap let less through than it allowed, so the slice was empty (at this
    quota) though the most relevant fact fits beside the opening, a one-line summary and
    the last message. Under the bound the facts go below `facts.floor` (200 here)."""
    messages: list[Any] = [SYSTEM, {"role": "user", "content": "hello, about my order"}]
    for _ in range(4):
        messages += [
            {"role": "user", "content": "yes " * 40},
            {"role": "assistant", "content": "ok " * 40},
        ]
    relevant = Fact("a", "Order ORD-1 went to the old address", ("order",), created_at=1.0)
    facts = [
        relevant,
        Fact("b", "Customer asked for a callback on Monday", created_at=106.0),
        Fact("c", "Prefers email", created_at=2.0),
        Fact("d", "Customer is on the Gold plan", created_at=3.0),
    ]
    compaction = Compaction((), 1, len(messages) - 2, 1)
    memory = compacted_memory(messages, compaction, "order", 100.0)
    policy = _policy(quota_tokens=170, facts_ceiling=600, episodes_ceiling=0, keep_last_messages=1)
    window = assemble(
        WindowInput(messages, memory, policy, facts=facts, scopes=("basic",), started=100.0),
        TOKENS,
    )
    text = "\n".join(str(m.get("content")) for m in window.messages)
    assert fact_line(relevant) in text.split("\n") and not window.report.over_quota
    assert window.report.slices["facts"] < policy.facts_floor  # the floor is not held here


# -- 2 and 3: slices in order, surplus passed on -------------------------------------


def test_a_short_transcript_takes_nothing_from_facts_or_episodes() -> None:
    """Issue 10, defect 2: facts cut to 880 and a 260-token phone episode dropped while the
    turn used 922 of its 3,000 tokens (the transcript floor was reserved first)."""
    policy = _policy(
        quota_tokens=3000,
        operational_state_max=0,
        facts_ceiling=1200,
        episodes_ceiling=1600,
        transcript_floor=2000,
    )
    facts = [_fact(n, scope="basic") for n in range(20)]
    facts_cost = sum(TOKENS.text(line) + 1 for line in facts_block(facts))  # tag line too
    episode = Episode("earlier", "phone", "the courier " * 120, 1.0)
    assert 900 < facts_cost <= 1200 and TOKENS.text(render_episode(episode)) > 200
    window = _window(
        policy,
        [SYSTEM, {"role": "user", "content": "Where is my parcel?"}],
        facts=facts,
        episodes=[episode],
        scopes=("basic",),
    )
    assert window.report.slices["facts"] == facts_cost
    assert window.report.slices["episodes"] == TOKENS.text(render_episode(episode)) + 1
    assert not window.report.over_quota


def test_what_facts_leave_passes_on_to_the_episodes() -> None:
    """Issue 10, defect 3: with no facts, episodes stayed at episodes_ceiling."""
    policy = _policy(facts_ceiling=1200, episodes_ceiling=300)
    episodes = [Episode(f"e{n}", "webchat", "the refund " * 150, float(n)) for n in range(3)]
    window = _window(policy, [SYSTEM, {"role": "user", "content": "Hi"}], episodes=episodes)
    one = TOKENS.text(render_episode(episodes[0])) + 1
    assert one > 300
    assert window.report.slices["episodes"] == 3 * one  # 300 + the facts' 1,200


def test_the_transcript_floor_yields_to_the_quota() -> None:
    """A long turn just before the last four short messages: keeping it to honour the
    transcript floor (500) would pass the quota; it leaves, to the summary."""
    policy = _policy(quota_tokens=1200, operational_state_max=0)
    long = "Here is the whole story of my order and the courier. " * 110  # ~1,300 tokens
    messages = [SYSTEM, {"role": "user", "content": "Hi, a question about my order."}]
    messages += [{"role": "assistant", "content": "Sure, tell me."}]
    messages += [{"role": "user", "content": long}, {"role": "assistant", "content": "I see."}]
    messages += [{"role": "user", "content": f"Short message {n}."} for n in range(2)]
    messages.insert(-1, {"role": "assistant", "content": "Noted."})
    compaction = plan_compaction(
        WindowInput(messages=messages, memory=Memory(), policy=policy), TOKENS
    )
    assert [m["content"] for m in compaction.fold] == ["Sure, tell me.", long]
    memory = compacted_memory(messages, compaction, "customer: told the story of the order")
    window = assemble(WindowInput(messages=messages, memory=memory, policy=policy), TOKENS)
    assert not window.report.over_quota
    assert all(m["content"] != long for m in window.messages)


# -- 4: what a class sets beats a plan's blanket default ----------------------------


@pytest.mark.parametrize(
    ("plan", "conversation_class", "quota"),
    [
        ("basic", "dispute", 3500),  # the class's own value, over plans.basic.defaults
        ("basic", "support", 2000),  # the class says nothing: the plan's default
        ("basic", "catalog", 1800),  # plans.basic.classes.catalog beats the class
        ("-", "dispute", 3500),
    ],
)
def test_layers_defaults_then_plan_defaults_then_class_then_plan_class(
    plan: str, conversation_class: str, quota: int
) -> None:
    assert SHIPPED.resolve(plan, conversation_class, "gpt-4o-mini").quota_tokens == quota


def _policy_file(tmp_path: Path, change: dict[str, Any]) -> Path:
    data = yaml.safe_load(DEFAULT_POLICY.read_text())
    data.update(change)
    (tmp_path / POLICY_FILE).write_text(yaml.safe_dump(data))
    return tmp_path


def test_a_plans_default_yields_to_the_class(tmp_path: Path) -> None:
    policies = load_policies(
        _policy_file(
            tmp_path,
            {"plans": {"small": {"defaults": {"quota_tokens": 2000, "episodes_ceiling": 200}}}},
        )
    )
    assert policies.resolve("small", "dispute", "m").quota_tokens == 3500
    assert policies.resolve("small", "dispute", "m").episodes_ceiling == 800
    assert policies.resolve("small", "support", "m").episodes_ceiling == 200


# -- 6: check-config checks every class x plan x model window -----------------------


def test_check_config_checks_every_class_against_every_model_window(tmp_path: Path) -> None:
    """Issue 10, defect 6: only the default model's window was checked."""
    windows = {"default": 128000, "small-model": 4500}
    with pytest.raises(ConfigError) as info:
        load_policies(_policy_file(tmp_path, {"context_windows": windows}))
    flagged = {(where, "small-model" in why) for _, where, why in info.value.problems}
    assert ("classes.dispute", True) in flagged
    assert ("classes.dispute (plan basic)", True) in flagged
    assert not any(where.startswith("classes.support") for where, _ in flagged)


def test_check_config_checks_the_reasoning_models_reserve(tmp_path: Path) -> None:
    change = {"output_reserves_by_model": {"o1*": 125000}}
    with pytest.raises(ConfigError, match=r"output_reserve \(125000 for model o1\*\)"):
        load_policies(_policy_file(tmp_path, change))


# -- 7: the output reserve ---------------------------------------------------------


def test_a_lowered_max_tokens_is_announced(
    sqlite_app_gateway: InProcessGateway, app_log: SimulatorLog
) -> None:
    client = sqlite_app_gateway.openai()
    raw = client.chat.completions.with_raw_response.create(
        model="gpt-4o-mini",
        messages=[{"role": "user", "content": "Write me a long poem."}],
        max_tokens=3000,
    )
    assert raw.headers["x-gateway-max-tokens-capped"] == "3000->800"
    assert app_log.since()[-1]["max_tokens"] == 800
    raw = client.chat.completions.with_raw_response.create(
        model="gpt-4o-mini",
        messages=[{"role": "user", "content": "Write me a short poem."}],
        max_tokens=300,
    )
    assert "x-gateway-max-tokens-capped" not in raw.headers
    assert app_log.since()[-1]["max_tokens"] == 300


def test_a_reasoning_model_gets_room_to_reason(
    sqlite_app_gateway: InProcessGateway, app_log: SimulatorLog
) -> None:
    client = sqlite_app_gateway.openai()
    raw = client.chat.completions.with_raw_response.create(
        model="o3-mini",
        messages=[{"role": "user", "content": "Plan my week."}],
        max_completion_tokens=12000,
    )
    assert "x-gateway-max-tokens-capped" not in raw.headers
    assert app_log.since()[-1]["max_tokens"] == 12000
    client.chat.completions.create(
        model="o3-mini", messages=[{"role": "user", "content": "Plan my month."}]
    )
    assert app_log.since()[-1]["max_tokens"] == 16000


def test_a_lower_max_tokens_beside_max_completion_tokens_stands(
    sqlite_app_gateway: InProcessGateway, app_log: SimulatorLog
) -> None:
    """A client sending both keys had `max_completion_tokens` read alone: its
    `max_tokens: 50` was raised to the reserve (800) in both keys."""
    client = sqlite_app_gateway.openai()
    raw = client.chat.completions.with_raw_response.create(
        model="gpt-4o-mini",
        messages=[{"role": "user", "content": "Say hi."}],
        max_tokens=50,
        max_completion_tokens=4000,
    )
    assert "x-gateway-max-tokens-capped" not in raw.headers
    sent = app_log.since()[-1]
    assert sent["max_tokens"] == 50 and sent["ceiling_keys"] == [
        "max_completion_tokens",
        "max_tokens",
    ]


def test_a_reasoning_model_named_with_its_provider_gets_its_key_and_room(
    sqlite_app_gateway: InProcessGateway, app_log: SimulatorLog
) -> None:
    """ "openai/o3-mini" got `max_tokens: 800`: a key o-series models refuse, and a
    reserve its hidden reasoning spends."""
    client = sqlite_app_gateway.openai()
    for model, key, ceiling in (
        ("openai/o3-mini", "max_completion_tokens", 16000),
        ("o4-mini", "max_completion_tokens", 16000),
        ("gpt-4o-mini", "max_tokens", 800),
        ("openai/gpt-4o-mini", "max_tokens", 800),
    ):
        client.chat.completions.create(model=model, messages=[{"role": "user", "content": "Hi"}])
        sent = app_log.since()[-1]
        assert (sent["ceiling_keys"], sent["max_tokens"]) == ([key], ceiling), model


def test_the_reserve_is_settable_per_model_pattern(tmp_path: Path) -> None:
    policies = load_policies(_policy_file(tmp_path, {"output_reserves_by_model": {"o3*": 4000}}))
    assert policies.resolve("-", "default", "o3-mini").output_reserve == 4000
    assert policies.resolve("-", "default", "o1-pro").output_reserve == 16000  # packaged
    assert policies.resolve("-", "default", "gpt-4o").output_reserve == 800
    # the larger of the class's reserve and the model's stands
    change = {"output_reserves_by_model": {"o3*": 4000}, "defaults": {"output_reserve": 5000}}
    policies = load_policies(_policy_file(tmp_path, change))
    assert policies.resolve("-", "default", "o3-mini").output_reserve == 5000
    assert policies.resolve("-", "default", "o1-pro").output_reserve == 16000


# -- 8: what the customer said here is theirs to see here; system_budget -------------

EMAIL = "ann.lee@example.com"


def _heard(value: str = EMAIL) -> Fact:
    return Fact(
        id="heard",
        text=f"email: {value} (mentioned by the customer)",
        tags=("contact",),
        scope="verified",
        source_channel="webchat",
        value=value,
        extracted=True,
    )


@pytest.mark.parametrize(
    ("said", "extracted", "shown"),
    [
        (f"My email is {EMAIL}, write to me there.", True, True),
        ("Where is my parcel?", True, False),  # heard in another conversation
        # the app's fact (facts API, verified data): the scopes guard it
        (f"My email is {EMAIL}, write to me there.", False, False),
    ],
)
def test_without_scopes_a_customer_still_sees_what_they_said_here(
    said: str, extracted: bool, shown: bool
) -> None:
    fact = _heard() if extracted else Fact(id="app", text=f"email: {EMAIL}", scope="verified")
    transcript = [
        {"role": "user", "content": "Hi."},
        {"role": "assistant", "content": "Hello, how can I help?"},
        {"role": "user", "content": said},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": "Any news?"},
        {"role": "assistant", "content": "Not yet."},
        {"role": "user", "content": "Thanks."},
    ]
    messages = [SYSTEM, *transcript]
    # The turn that said it has been summarized away (cursor past it).
    folded = Compaction(tuple(transcript[1:4]), first=1, new_cursor=4, head_end=1)
    memory = compacted_memory(messages, folded, "customer: gave a contact.")
    window = assemble(
        WindowInput(messages=messages, memory=memory, policy=_policy(), facts=[fact]), TOKENS
    )
    text = "\n".join(str(m["content"]) for m in window.messages)
    assert said not in text
    assert (fact_line(fact) in text.split("\n")) is shown


@pytest.mark.parametrize("where", ["head", "tail"])
def test_a_fact_stated_in_a_pasted_megabyte_is_still_the_customers_own(where: str) -> None:
    # Only the head and tail of a long message are read for facts, and only they are
    # looked in for what the customer said: the fact is still shown without scopes.
    filler = "The log line repeats itself here. " * 30_000
    said = f"My email is {EMAIL}, write to me there. "
    text = said + filler if where == "head" else filler + said
    transcript = [{"role": "user", "content": text}, {"role": "assistant", "content": "Ok."}]
    assert visible_facts([_heard()], (), transcript, 0.0) == [_heard()]
    other = [{"role": "user", "content": filler}, {"role": "assistant", "content": "Ok."}]
    assert visible_facts([_heard()], (), other, 0.0) == []


def test_facts_said_in_this_conversation_reach_its_prompt_without_scopes(
    sqlite_app_gateway: InProcessGateway, app_log: SimulatorLog
) -> None:
    client = sqlite_app_gateway.openai()
    opening = {"role": "user", "content": f"Hi, my email is {EMAIL} and my order is late."}

    def ask(conversation: str, messages: list[Any]) -> str:
        client.chat.completions.create(
            model="gpt-4o-mini",
            messages=messages,
            extra_headers={
                "X-Conversation-Id": conversation,
                "X-Customer-Id": "cust-said",
                "X-Simulator-Log-Messages": "1",
            },
        )
        return "\n".join(str(m.get("content")) for m in app_log.since()[-1]["messages"])

    ask("here", [opening])
    prompt = ask(
        "here",
        [opening, {"role": "assistant", "content": "Ok."}, {"role": "user", "content": "So?"}],
    )
    assert EMAIL in prompt  # the opening states it; no fact block repeats it
    assert f"email: {EMAIL}" not in prompt
    # Another conversation of the same customer, no scopes: that email came from elsewhere.
    prompt = ask("elsewhere", [{"role": "user", "content": "Hello again, any news?"}])
    assert EMAIL not in prompt


def test_a_system_message_over_its_budget_is_reported_never_cut() -> None:
    system = {"role": "system", "content": "Follow the store's policy. " * 300}
    window = _window(_policy(system_budget=200), [system, {"role": "user", "content": "Hi"}])
    assert window.messages[0] is system
    assert window.report.system_over_budget
    assert window.report.slices["system"] > 200
    small = _window(_policy(), [SYSTEM, {"role": "user", "content": "Hi"}])
    assert not small.report.system_over_budget


def test_a_long_system_message_is_sent_whole_and_counted(
    sqlite_app_gateway: InProcessGateway, app_log: SimulatorLog
) -> None:
    system = "Follow the store's returns policy to the letter. " * 200
    sqlite_app_gateway.openai().chat.completions.create(
        model="gpt-4o-mini",
        messages=[{"role": "system", "content": system}, {"role": "user", "content": "Hi"}],
        extra_headers={"X-Simulator-Log-Messages": "1"},
    )
    # whole, after the tenant's cache salt (gateway/proxy/cache_scope.py)
    salt, _, sent = app_log.since()[-1]["messages"][0]["content"].partition("\n\n")
    assert salt.startswith("[cache-scope ") and sent == system
    registry = sqlite_app_gateway.gateway.metrics.registry
    name = "gateway_context_class_turns_system_over_budget_total"
    assert registry.get_sample_value(name, {"class": "default"}) == 1
