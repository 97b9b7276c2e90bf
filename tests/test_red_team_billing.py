"""What a second red-team read of the gateway found (2026-12-06, sixth session), each
reproduced through the openai SDK (or plain HTTP where the SDK refuses to send it)
against the gateway in this process and its simulated upstream, on SQLite: replies the
upstream billed but the gateway could not read booked without their output, usage
reports that book a fortune or nothing, `n` as a string, JSON nested past what the
gateway can write again, files held at the size of their JSON, one customer's
conversation id reused for another, and a client's retry counted as a loop."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import openai
import pytest
import yaml

from gateway.config import SIMULATOR
from tests.inprocess import InProcessGateway, SimulatorLog

SHORT = [{"role": "user", "content": "Hello there, tell me something about my order."}]


def _gateway(root: Path, spend: dict[str, Any] | None = None, **extra: Any) -> InProcessGateway:
    (root / "policies").mkdir(exist_ok=True)
    if spend is not None:
        (root / "policies" / "spend.yaml").write_text(yaml.safe_dump(spend))
    gw = InProcessGateway(root, SIMULATOR, f"sqlite:///{root / 'gateway.db'}", **extra)
    gw.start()
    return gw


@pytest.fixture
def gw(tmp_path: Path) -> Iterator[InProcessGateway]:
    gw = _gateway(tmp_path)
    yield gw
    gw.stop()


def ledger(gw: InProcessGateway) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = gw.admin("/admin/ledger").json()["records"]
    return records


def test_a_reply_too_large_to_read_is_booked_at_every_replys_ceiling(tmp_path: Path) -> None:
    """The upstream wrote (and bills) four full replies, over `max_reply_bytes`: the
    client gets 502, and the gateway booked the input alone, so a tenant could have the
    provider bill any output for free. It books every reply's ceiling now."""
    gw = _gateway(tmp_path, limits={"max_reply_bytes": 5_000})
    try:
        log = SimulatorLog(gw)
        # The SDK's own retries (twice by default) would have it written and billed again.
        client = openai.OpenAI(base_url=gw.v1, api_key=gw.keys["acme"], http_client=gw.http)
        with pytest.raises(openai.APIStatusError) as info:
            client.chat.completions.create(
                model="gpt-4o-mini",
                messages=SHORT,  # type: ignore[arg-type]
                n=4,
                max_tokens=500,
                extra_headers={"x-simulator-fill": "1"},
            )
        assert info.value.status_code == 502
        assert info.value.response.headers["x-should-retry"] == "false"
        [sent] = log.since()  # written once
        billed = sent["usage"]["completion_tokens"]
        [record] = ledger(gw)
    finally:
        gw.stop()
    assert billed > 0
    assert record["estimated"] is True
    assert record["output_tokens"] == 4 * 500 >= billed


@pytest.mark.parametrize(
    "usage",
    [
        {"prompt_tokens": -5, "completion_tokens": -100},
        {"prompt_tokens": "1500", "completion_tokens": "900"},
        {"prompt_tokens": None, "completion_tokens": None},
    ],
    ids=["negative", "strings", "null"],
)
def test_usage_that_is_not_counts_is_estimated_not_booked_free(
    gw: InProcessGateway, usage: dict[str, Any]
) -> None:
    """Negative, string or null counts were read as 0: the call was booked as a real,
    free one. The gateway's own estimate books it, flagged."""
    reply = gw.openai().chat.completions.create(
        model="gpt-4o-mini",
        messages=SHORT,  # type: ignore[arg-type]
        extra_headers={"x-simulator-usage": json.dumps(usage)},
    )
    assert reply.choices[0].message.content
    [record] = ledger(gw)
    assert record["estimated"] is True
    assert record["fresh_input_tokens"] > 0 and record["output_tokens"] > 0
    assert float(record["cost_usd"]) > 0


def test_integral_float_counts_are_counts(gw: InProcessGateway) -> None:
    gw.openai().chat.completions.create(
        model="gpt-4o-mini",
        messages=SHORT,  # type: ignore[arg-type]
        extra_headers={"x-simulator-usage": '{"prompt_tokens": 30.0, "completion_tokens": 9.0}'},
    )
    [record] = ledger(gw)
    assert (record["fresh_input_tokens"], record["output_tokens"]) == (30, 9)
    assert record["estimated"] is False


@pytest.mark.parametrize("route", ["chat", "completions"])
def test_usage_past_what_the_call_could_use_is_not_booked(gw: InProcessGateway, route: str) -> None:
    """99,999,999 tokens each way passed the absolute check (100M) and booked $25 for a
    call reserved at a fraction of a cent, locking the tenant out under a ceiling. A
    report past every reply's ceiling (or twice the input's worst case) is not believed."""
    absurd = {"prompt_tokens": 99_999_999, "completion_tokens": 99_999_999}
    headers = {"x-simulator-usage": json.dumps(absurd)}
    client = gw.openai()
    if route == "chat":
        client.chat.completions.create(
            model="gpt-4o-mini",
            messages=SHORT,  # type: ignore[arg-type]
            max_tokens=50,
            extra_headers=headers,
        )
    else:
        client.completions.create(
            model="gpt-3.5-turbo-instruct", prompt="Say hi", max_tokens=50, extra_headers=headers
        )
    [record] = ledger(gw)
    assert record["estimated"] is True
    assert record["output_tokens"] <= 50
    assert record["fresh_input_tokens"] < 5000
    assert float(record["cost_usd"]) < 0.01


@pytest.mark.parametrize("value", ["8", 8.0, 0, True])
def test_n_that_is_not_a_whole_count_is_refused(gw: InProcessGateway, value: Any) -> None:
    """`n: "8"` or `8.0` was held as one reply and forwarded as sent (a provider that
    reads it as 8 bills eight)."""
    auth = {"Authorization": f"Bearer {gw.keys['acme']}"}
    chat = {"model": "gpt-4o-mini", "messages": SHORT, "n": value}
    completion = {"model": "gpt-3.5-turbo-instruct", "prompt": "hi", "best_of": value}
    for path, body in (("chat/completions", chat), ("completions", completion)):
        response = gw.http.post(f"{gw.v1}/{path}", json=body, headers=auth)
        assert response.status_code == 400, response.text
        error = response.json()["error"]
        assert error["type"] == "invalid_request_error" and error["param"] in ("n", "best_of")
    assert ledger(gw) == []


@pytest.mark.parametrize("route", ["completions", "responses", "embeddings"])
def test_json_nested_too_deep_on_a_token_route_is_400_not_500(
    gw: InProcessGateway, route: str
) -> None:
    deep: Any = "x"
    for _ in range(300):
        deep = {"a": deep}
    body = {"model": "gpt-4o-mini", "extra": deep}
    body |= {"completions": {"prompt": "hi"}, "responses": {"input": "hi"}}.get(route, {})
    body |= {"input": ["hi"]} if route == "embeddings" else {}
    auth = {"Authorization": f"Bearer {gw.keys['acme']}"}
    response = gw.http.post(f"{gw.v1}/{route}", json=body, headers=auth)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "invalid_json"


def test_a_file_is_held_at_the_models_context_window(tmp_path: Path) -> None:
    """Fifty PDFs inline passed a $0.01 ceiling, held at their JSON's ~20 tokens each;
    the provider bills a PDF as its text and an image of every page. A call carrying a
    file is held at the model's whole context window: over this ceiling, refused."""
    gw = _gateway(tmp_path, spend={"tenants": {"acme": {"monthly_usd": "0.01"}}})
    try:
        pdf = {"type": "file", "file": {"filename": "a.pdf", "file_data": "data:..."}}
        text = {"type": "text", "text": "What does this say?"}
        with_pdf: Any = [{"role": "user", "content": [text, pdf]}]
        without: Any = [{"role": "user", "content": [text]}]
        client = gw.openai()
        with pytest.raises(openai.RateLimitError):
            client.chat.completions.create(
                model="gpt-4o-mini",
                messages=with_pdf,
            )
        with pytest.raises(openai.RateLimitError):
            client.responses.create(
                model="gpt-4o-mini",
                input=[
                    {
                        "role": "user",
                        "content": [
                            {"type": "input_text", "text": "What does this say?"},
                            {"type": "input_file", "file_url": "https://example.com/a.pdf"},
                        ],
                    }
                ],
            )
        reply = client.chat.completions.create(
            model="gpt-4o-mini",
            messages=without,
        )
        assert reply.choices[0].message.content
    finally:
        gw.stop()


def test_a_conversation_id_of_one_customer_is_refused_for_another(gw: InProcessGateway) -> None:
    """A kiosk reused its session id: Bob's name and order went into Alice's record,
    which stayed in Alice's index, and her next conversation's card showed them. The id
    is refused for Bob (409); Alice's conversations are hers alone."""
    client = gw.openai()
    log = SimulatorLog(gw)

    def say(text: str, conversation: str, customer: str) -> None:
        client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": text}],
            extra_headers={"X-Conversation-Id": conversation, "X-Customer-Id": customer},
        )

    say("Hi, I want to know about the store's opening hours", "kiosk-7", "alice")
    with pytest.raises(openai.ConflictError) as info:
        say("I'm Robert Smith, order ORD-555123 was charged twice", "kiosk-7", "bob")
    assert info.value.code == "conversation_customer_mismatch"
    # the same request again cannot pass: the SDKs, which retry a 409, are told so
    assert info.value.response.headers["x-should-retry"] == "false"
    say("Hello again, about the opening hours", "alice-2", "alice")
    sent = json.dumps(log.since()[-1])
    assert "Robert" not in sent and "555123" not in sent
    assert [r["customer"] for r in ledger(gw)] == ["alice", "alice"]


def _retry_turn(gw: InProcessGateway, conversation: dict[str, str], retries: int) -> dict[str, Any]:
    """One answered turn, then a second sent once and retried `retries` times as the
    SDK retries (`x-stainless-retry-count` 1, 2, ...); the conversation's state after."""
    client = gw.openai()
    history: list[Any] = [{"role": "user", "content": "Where is order 48213?"}]
    first = client.chat.completions.create(
        model="gpt-4o-mini", messages=history, extra_headers=conversation
    )
    history += [
        {"role": "assistant", "content": first.choices[0].message.content},
        {"role": "user", "content": "It was sent to Lisbon, is it still coming?"},
    ]
    for attempt in range(retries + 1):
        headers = {**conversation, "x-stainless-retry-count": str(attempt)}
        raw = client.chat.completions.with_raw_response.create(
            model="gpt-4o-mini", messages=history, extra_headers=headers
        )
        assert "x-gateway-escalation" not in raw.headers
    conversation_id = raw.headers["x-gateway-conversation-id"]
    auth = {"Authorization": f"Bearer {gw.keys['acme']}"}
    state: dict[str, Any] = gw.http.get(
        f"{gw.v1}/conversations/{conversation_id}", headers=auth
    ).json()
    return state


def test_a_retried_request_is_the_same_turn_not_a_loop(gw: InProcessGateway) -> None:
    """The SDKs retry a timed-out call with the same body (max_retries=2 by default),
    marked `x-stainless-retry-count`. Three tries of one turn looked like a customer
    asking again and again: the loop detector escalated after two real turns, and the
    turn count grew with each retry."""
    state = _retry_turn(gw, {"X-Conversation-Id": "retried", "X-Customer-Id": "cust-r"}, 2)
    assert state["turns"] == 2
    assert state["escalation"] is None and state.get("escalation_pending") is None
    assert len(ledger(gw)) == 4  # each call is still booked: the provider billed it


def test_a_retry_continues_a_conversation_known_by_its_opening(gw: InProcessGateway) -> None:
    """Without an id, a retry of the last request (the same history, not a longer one)
    started a fresh record, its summary and counters lost."""
    state = _retry_turn(gw, {"X-Customer-Id": "cust-anon-retry"}, 1)
    assert state["turns"] == 2


@pytest.mark.parametrize(
    "conversation",
    [
        {"X-Conversation-Id": "retried-first", "X-Customer-Id": "cust-rf"},
        {"X-Customer-Id": "cust-rf2"},
    ],
    ids=["named", "by-opening"],
)
def test_a_retried_first_request_is_the_same_turn_not_a_loop(
    gw: InProcessGateway, conversation: dict[str, str]
) -> None:
    """The first request retried as the SDK retries it (max_retries=2): each try counted
    as a turn, and the third was escalated as a loop. A retry of a later turn was
    already the same turn; the first one's record holds no turn past its opening."""
    client = gw.openai()
    opening: list[Any] = [{"role": "user", "content": "Where is order 48213?"}]
    for attempt in range(3):
        headers = {**conversation, "x-stainless-retry-count": str(attempt)}
        raw = client.chat.completions.with_raw_response.create(
            model="gpt-4o-mini", messages=opening, extra_headers=headers
        )
        assert "x-gateway-escalation" not in raw.headers
    auth = {"Authorization": f"Bearer {gw.keys['acme']}"}
    conversation_id = raw.headers["x-gateway-conversation-id"]
    state = gw.http.get(f"{gw.v1}/conversations/{conversation_id}", headers=auth).json()
    assert state["turns"] == 1
    assert state["escalation"] is None and state.get("escalation_pending") is None
    assert len(ledger(gw)) == 3  # each call is still booked: the provider billed it


def test_the_same_window_sent_again_is_a_turn_without_the_retry_mark(
    gw: InProcessGateway,
) -> None:
    """An app sending a sliding window of its last messages sends the same bytes twice
    when the customer and the agent repeat themselves: a new turn (a loop to see), not a
    retry, unless the client marks it one."""
    client = gw.openai()
    conversation = {"X-Conversation-Id": "window", "X-Customer-Id": "cust-w"}
    window: list[Any] = [
        {"role": "assistant", "content": "I can't transfer you right now."},
        {"role": "user", "content": "I want to talk to a human."},
    ]
    for _ in range(3):
        client.chat.completions.create(
            model="gpt-4o-mini", messages=window, extra_headers=conversation
        )
    auth = {"Authorization": f"Bearer {gw.keys['acme']}"}
    state = gw.http.get(f"{gw.v1}/conversations/window", headers=auth).json()
    assert state["turns"] == 3


def test_an_idempotency_key_is_the_tenants_own_upstream(gw: InProcessGateway) -> None:
    """Every tenant shares the provider account, where an idempotency key names one
    call: acme's and globex's "order-1" were one key, so a provider that honours them
    would answer globex with acme's response. Each tenant's key is its own now."""
    log = SimulatorLog(gw)
    for tenant in ("acme", "globex"):
        gw.openai(tenant).chat.completions.create(
            model="gpt-4o-mini",
            messages=SHORT,  # type: ignore[arg-type]
            extra_headers={"Idempotency-Key": "order-1"},
        )
    keys = [e["headers"].get("idempotency-key") for e in log.since()]
    assert len(keys) == 2 and keys[0] != keys[1]
    assert all(k and k.endswith("-order-1") for k in keys)


@pytest.mark.parametrize(
    "body",
    [
        {"input": [{"type": "reasoning", "id": "rs_123", "summary": []}]},
        {"input": "hi", "background": "true"},
        {"input": "hi", "background": 1},
    ],
    ids=["reasoning-by-id", "background-string", "background-one"],
)
def test_responses_that_read_provider_state_by_other_means_are_refused(
    gw: InProcessGateway, body: dict[str, Any]
) -> None:
    """A reasoning item without its encrypted content is loaded by id (from whichever
    tenant stored it); `background: "true"` may be read as true."""
    auth = {"Authorization": f"Bearer {gw.keys['acme']}"}
    response = gw.http.post(
        f"{gw.v1}/responses", json={"model": "gpt-4o-mini", **body}, headers=auth
    )
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "provider_state_not_proxied"


def test_a_type_that_is_not_a_string_is_no_500(gw: InProcessGateway) -> None:
    """`"type": ["x"]` in a content part or a tool was asked about in a set of known
    types: unhashable, a 500. It is an unknown type, forwarded (the provider judges)."""
    auth = {"Authorization": f"Bearer {gw.keys['acme']}"}
    part = {"type": ["x"], "text": "hi"}
    calls: list[tuple[str, dict[str, Any]]] = [
        ("responses", {"input": [{"role": "user", "content": [part]}]}),
        ("responses", {"input": "hi", "tools": [{"type": ["x"]}]}),
        ("chat/completions", {"messages": [{"role": "user", "content": [part]}]}),
    ]
    for path, body in calls:
        response = gw.http.post(
            f"{gw.v1}/{path}", json={"model": "gpt-4o-mini", **body}, headers=auth
        )
        assert response.status_code == 200, response.text


def test_a_part_is_held_at_its_whole_json_not_a_text_key_added_to_it(tmp_path: Path) -> None:
    """An audio part given a `"text": ""` key was counted as that empty text: its
    base64 audio held at 0 tokens under a ceiling. (On a model with an input audio rate:
    one without is refused before, as it cannot be held.)"""
    gw = _gateway(tmp_path, spend={"tenants": {"acme": {"monthly_usd": "0.001"}}})
    try:
        audio = {"type": "input_audio", "text": "", "input_audio": {"data": "QUJD" * 40_000}}
        big: Any = [{"role": "user", "content": [audio]}]
        with pytest.raises(openai.RateLimitError):
            gw.openai().chat.completions.create(model="gpt-audio", messages=big)
    finally:
        gw.stop()


def test_a_remote_mcp_tool_is_not_held_as_its_body(tmp_path: Path) -> None:
    """Each round with a remote MCP server bills the growing context again: the body
    does not bound the call, so under a ceiling it passes only with `unpriced: allow`."""
    gw = _gateway(tmp_path, spend={"tenants": {"acme": {"monthly_usd": "5"}}})
    try:
        mcp: Any = [{"type": "mcp", "server_label": "x", "server_url": "https://mcp.example"}]
        with pytest.raises(openai.BadRequestError) as info:
            gw.openai().responses.create(model="gpt-4o-mini", input="hi", tools=mcp)
        assert info.value.code == "model_not_priced"
    finally:
        gw.stop()


# --- what a review of the fixes above found (same day) ---

CAT = "https://example.com/cat.png"


def test_a_true_report_for_an_image_is_believed_on_responses(gw: InProcessGateway) -> None:
    """The pass-through bound held input to twice its counted JSON: an image billed at
    thousands of tokens was 'not believed' and booked at 33."""
    usage = {"input_tokens": 25_514, "input_tokens_details": {"cached_tokens": 0}}
    gw.openai().responses.create(
        model="gpt-4o-mini",
        max_output_tokens=100,
        input=[
            {
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "What is in this picture?"},
                    {"type": "input_image", "image_url": CAT, "detail": "high"},
                ],
            }
        ],
        extra_headers={"x-simulator-usage": json.dumps(usage)},
    )
    [record] = ledger(gw)
    assert record["fresh_input_tokens"] == 25_514 and record["estimated"] is False


def test_a_true_report_for_an_image_on_the_model_served_is_believed(tmp_path: Path) -> None:
    """Degraded from gpt-4o to gpt-4o-mini, a low-detail image bills 2,833 tokens on the
    model served, not 85 as on the one asked for: the bound allows the dearer."""
    degrade = {"monthly_usd": "0.001", "action": "degrade", "degrade_to": "gpt-4o-mini"}
    gw = _gateway(tmp_path, spend={"tenants": {"acme": degrade}})
    try:
        image = {"type": "image_url", "image_url": {"url": CAT, "detail": "low"}}
        content: Any = [{"role": "user", "content": [{"type": "text", "text": "What?"}, image]}]
        raw = gw.openai().chat.completions.with_raw_response.create(
            model="gpt-4o",
            max_tokens=200,
            messages=content,
            extra_headers={"x-simulator-usage": '{"prompt_tokens": 2850, "completion_tokens": 20}'},
        )
        assert raw.headers["x-gateway-degraded"] == "gpt-4o->gpt-4o-mini"
        [record] = ledger(gw)
    finally:
        gw.stop()
    assert record["fresh_input_tokens"] == 2_850 and record["estimated"] is False


def test_a_call_that_failed_before_any_answer_is_not_booked_at_its_ceiling(
    tmp_path: Path,
) -> None:
    """Every error after connecting booked every reply's output ceiling, an upstream
    timeout before any reply included: during an outage each failed call used up its
    tenant's ceiling. Only a reply that began is booked at the ceiling."""
    gw = _gateway(tmp_path, upstream={"timeout_s": 0.5})
    try:
        with pytest.raises(openai.APIStatusError) as info:
            gw.openai().chat.completions.create(
                model="gpt-4o-mini",
                messages=SHORT,  # type: ignore[arg-type]
                max_tokens=700,
                extra_headers={"x-simulator-delay-ms": "1500"},
            )
        assert info.value.status_code == 504
        [record] = ledger(gw)
    finally:
        gw.stop()
    assert record["estimated"] is True
    assert record["output_tokens"] == 0 and record["fresh_input_tokens"] > 0


def test_degrade_on_pass_through_routes_sends_the_cheaper_model(tmp_path: Path) -> None:
    """A /v1/responses call was held at the `degrade_to` model's price but forwarded to
    the model asked for, and booked at its price past the ceiling. It is sent to the
    cheaper model now (as chat is), with `x-gateway-degraded`."""
    degrade = {"monthly_usd": "0.01", "action": "degrade", "degrade_to": "gpt-4o-mini"}
    gw = _gateway(tmp_path, spend={"tenants": {"acme": degrade}})
    try:
        log = SimulatorLog(gw)
        client = gw.openai()
        # gpt-4o's worst case for 2,000 output tokens ($0.02) does not fit $0.01; mini's does
        raw = client.responses.with_raw_response.create(
            model="gpt-4o", input="hi", max_output_tokens=2_000
        )
        assert raw.headers["x-gateway-degraded"] == "gpt-4o->gpt-4o-mini"
        assert raw.parse().model == "gpt-4o-mini"
        streamed = client.responses.with_raw_response.create(
            model="gpt-4o", input="hi", max_output_tokens=2_000, stream=True
        )
        assert streamed.headers["x-gateway-degraded"] == "gpt-4o->gpt-4o-mini"
        done = [e.response.model for e in streamed.parse() if e.type == "response.completed"]
        assert done == ["gpt-4o-mini"]
        assert [call["model"] for call in log.since()] == ["gpt-4o-mini", "gpt-4o-mini"]
        records = ledger(gw)
        [spend] = [t for t in gw.admin("/admin/spend").json()["tenants"] if t["tenant"] == "acme"]
    finally:
        gw.stop()
    assert [r["model"] for r in records] == ["gpt-4o-mini", "gpt-4o-mini"]
    assert Decimal(spend["cost_usd"]) <= Decimal("0.01")


def test_an_embedding_is_refused_at_the_ceiling_never_degraded(tmp_path: Path) -> None:
    """An embedding's vectors belong to the model that made them: at the ceiling it is
    refused, not sent (or held) as the `degrade_to` model."""
    degrade = {"monthly_usd": "0.01", "action": "degrade", "degrade_to": "text-embedding-3-small"}
    prices = {  # OpenAI's; genai-prices finds them only under a provider hint
        "text-embedding-3-large": {"input_per_mtok": "0.13", "output_per_mtok": "0"},
        "text-embedding-3-small": {"input_per_mtok": "0.02", "output_per_mtok": "0"},
    }
    gw = _gateway(tmp_path, spend={"tenants": {"acme": degrade}}, prices=prices)
    try:
        log = SimulatorLog(gw)
        client = gw.openai()
        # ~104,000 tokens: $0.0135 on -large, $0.002 on -small
        texts = ["word " * 8_000] * 13
        with pytest.raises(openai.RateLimitError) as info:
            client.embeddings.create(model="text-embedding-3-large", input=texts)
        assert info.value.code == "insufficient_quota"
        client.embeddings.create(model="text-embedding-3-large", input="a short one")
        sent = [call["model"] for call in log.since()]
        records = ledger(gw)
    finally:
        gw.stop()
    assert sent == ["text-embedding-3-large"]
    assert [r["model"] for r in records] == ["text-embedding-3-large"]


def test_a_call_the_spend_guard_refuses_writes_none_of_its_facts(tmp_path: Path) -> None:
    """A call refused before it is forwarded (the customer's ceiling reached) stored the
    facts its newest message stated: a client retrying refused calls, or an impostor
    whose calls are refused, still changed what later conversations are shown. The
    write begins once the call is taken; the same message, taken, is written."""
    spend = {"plans": {"pro": {"customer_daily_usd": 0.0000001, "action": "block"}}}
    gw = _gateway(tmp_path, spend)
    try:
        client = gw.openai()
        said = "Hi, I am Carla Mendes, order ORD-77777 never arrived, I live in Recife"
        headers = {"X-Customer-Id": "carla", "X-Conversation-Id": "cv-carla"}
        with pytest.raises(openai.RateLimitError) as refused:
            client.chat.completions.create(
                model="gpt-4o-mini",
                messages=[{"role": "user", "content": said}],
                extra_headers=headers,
            )
        assert refused.value.code == "insufficient_quota"
        auth = {"Authorization": f"Bearer {gw.keys['acme']}"}
        facts = gw.http.get(f"{gw.v1}/customers/carla/facts", headers=auth).json()["facts"]
        assert facts == []
        assert ledger(gw) == []  # nothing forwarded, nothing booked
    finally:
        gw.stop()
    (tmp_path / "taken").mkdir()
    taken = _gateway(tmp_path / "taken")
    try:
        taken.openai().chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": said}],
            extra_headers=headers,
        )
        auth = {"Authorization": f"Bearer {taken.keys['acme']}"}
        facts = taken.http.get(f"{taken.v1}/customers/carla/facts", headers=auth).json()["facts"]
        assert any("ORD-77777" in f["text"] for f in facts), facts
    finally:
        taken.stop()


def test_a_call_is_booked_in_the_period_it_was_held_in(tmp_path: Path) -> None:
    """A call's spend went to the budgets of the day and month it was held in, its ledger
    row to the period it was booked in: one running past midnight (a long stream) counted
    against the old day's ceiling and was billed in the new one, so the ceiling gauge and
    the ledger never agreed. The row is dated when the call was held now: one slow call
    (three seconds upstream) is dated at its start, not its end."""
    gw = _gateway(tmp_path, spend={"tenants": {"acme": {"daily_usd": "5"}}})
    try:
        started = time.time()
        gw.openai().chat.completions.create(
            model="gpt-4o-mini",
            messages=SHORT,  # type: ignore[arg-type]
            extra_headers={"x-simulator-delay-ms": "3000"},
        )
        ended = time.time()
        [record] = ledger(gw)
    finally:
        gw.stop()
    assert ended - started >= 3
    assert started <= record["ts"] < started + 2, (started, record["ts"], ended)
