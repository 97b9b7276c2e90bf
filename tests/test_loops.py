"""Loops and exit triggers: the detector on the labelled workload, and every action
through a running gateway with the openai SDK."""

from __future__ import annotations

import http.server
import json
import threading
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from bench.loop_eval import evaluate
from gateway.context.policy import DEFAULT_POLICY, load_policies
from gateway.dev.workload import generate
from gateway.loops.detector import fingerprint, similarity
from tests.conftest import UpstreamLog
from tests.servers import GatewayProc, edit_policy

SYSTEM = "You are the support agent of an online store."
LOOP_ASKS = [
    "Where is my order ORD-55555? It has not arrived yet.",
    "My order ORD-55555 still has not arrived, where is it?",
    "I am still waiting for order ORD-55555, where is it now?",
    "Can you tell me where order ORD-55555 is? It never arrived.",
    "Order ORD-55555 has not arrived. Where is it?",
]
SAME_ANSWER = [
    "Order ORD-55555 is in transit and should arrive within 3 to 5 business days.",
    "Your order ORD-55555 is on its way, expect it in 3 to 5 business days.",
    "ORD-55555 is in transit; it should be delivered in 3 to 5 business days.",
    "The order ORD-55555 has shipped and will arrive in 3 to 5 business days.",
    "Order ORD-55555 is in transit and should arrive within 3 to 5 business days.",
]


# No new fact after the first point but the email of the eighth: a new identifier
# (a case or confirmation number) would be progress.
DISPUTE_POINTS = [
    "I never authorized the charge of $89.90 on invoice INV-3001.",
    "The merchant name on my statement was unfamiliar to me.",
    "My bank already opened a chargeback case about it.",
    "I cancelled the subscription back in March, I am sure of it.",
    "The renewal email went to an address I no longer use.",
    "Your terms say renewals need explicit consent.",
    "I want the full amount returned to my card ending 4242.",
    "Please also close the account linked to marta@example.com.",
    "I expect a written confirmation of the reversal.",
]


@pytest.mark.parametrize("seed", [7, 11, 23])
def test_detector_on_the_labelled_workload(seed: int) -> None:
    shipped = load_policies(DEFAULT_POLICY.parent).loop("-", "default")  # 0.6, 0.6, 2
    result = evaluate(generate(seed, 500), shipped)
    assert result["precision"] >= 0.9 and result["recall"] >= 0.9, result
    assert result["false_escalation_rate"] <= 0.02, result
    assert result["median_delay_turns"] <= 2, result


@pytest.mark.parametrize(
    ("a", "b", "similar"),
    [
        (
            "Where is my order ORD-1234? It has not arrived.",
            "My order ORD-1234 still has not arrived, where is it?",
            True,
        ),
        ("What is the status of order ORD-1?", "What is the status of order ORD-2?", False),
        ("How do I reset my password?", "How do I change my delivery address?", False),
        ("Thanks!", "Thanks!", False),  # nothing but courtesy: not a question repeated
    ],
)
def test_similarity_table(a: str, b: str, similar: bool) -> None:
    assert (similarity(fingerprint(a), fingerprint(b)) >= 0.6) is similar


def _turn(
    gw: GatewayProc,
    messages: list[ChatCompletionMessageParam],
    text: str,
    reply: str | None,
    conv: str,
    stream: bool = False,
    **headers: str,
) -> tuple[str, dict[str, str]]:
    client = openai.OpenAI(base_url=gw.v1, api_key=gw.keys["acme"], max_retries=0)
    messages.append({"role": "user", "content": text})
    extra = {
        "X-Conversation-Id": conv,
        "X-Simulator-Log-Messages": "1",
        "X-Simulator-Test-Conv": conv,
        **headers,
    }
    if reply:
        extra["x-simulator-reply"] = reply
    if stream:
        with client.chat.completions.with_streaming_response.create(
            model="gpt-4o-mini", messages=messages, stream=True, extra_headers=extra
        ) as response:
            seen = {k.lower(): v for k, v in response.headers.items()}
            content = "".join(
                c.choices[0].delta.content or "" for c in response.parse() if c.choices
            )
    else:
        raw = client.chat.completions.with_raw_response.create(
            model="gpt-4o-mini", messages=messages, extra_headers=extra
        )
        seen = {k.lower(): v for k, v in raw.headers.items()}
        content = raw.parse().choices[0].message.content or ""
    messages.append({"role": "assistant", "content": content})
    return content, seen


def _loop(gw: GatewayProc, conv: str, stream: bool = False) -> list[tuple[str, dict[str, str]]]:
    messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": SYSTEM}]
    out = [
        _turn(gw, messages, "Hi, I changed my phone number to 5550101.", None, conv, stream),
        _turn(gw, messages, "Also my loyalty card is LC-7788, is it linked?", None, conv, stream),
    ]
    for ask, answer in zip(LOOP_ASKS, SAME_ANSWER, strict=True):
        out.append(_turn(gw, messages, ask, answer, conv, stream))
    return out


def test_a_scripted_loop_escalates_at_the_configured_turn(sqlite_gateway: GatewayProc) -> None:
    turns = _loop(sqlite_gateway, "loop-signal")
    escalations = [h.get("x-gateway-escalation") for _, h in turns]
    # turns 3 (first ask) .. 7: the loop starts at turn 4; turns 4 and 5 are loop turns, so
    # turn 6 escalates; the state resets and the loop goes on (turn 7 is a loop turn again).
    assert escalations == [None, None, None, None, None, "loop", None]
    state = httpx.get(
        f"{sqlite_gateway.v1}/conversations/loop-signal",
        headers={"Authorization": f"Bearer {sqlite_gateway.keys['acme']}"},
    ).json()
    assert state["escalation"] == "loop" and state["escalations"] == 1
    metrics = sqlite_gateway.admin("/metrics").text
    assert 'conversation_escalations_total{class="support",reason="loop"} 1.0' in metrics


def _with_policy(gw: GatewayProc, change: dict[str, Any]) -> None:
    edit_policy(gw.root, change)
    gw.restart()


@pytest.mark.parametrize("stream", [False, True])
def test_handoff_answers_without_the_model_and_books_zero(
    sqlite_gateway: GatewayProc, upstream_log: UpstreamLog, stream: bool
) -> None:
    _with_policy(
        sqlite_gateway,
        {
            "classes.support.escalation_action": "handoff",
            "classes.support.handoff_message": "A colleague will take over now.",
        },
    )
    turns = _loop(sqlite_gateway, f"loop-handoff-{stream}", stream=stream)
    content, headers = turns[5]
    assert headers["x-gateway-escalation"] == "loop"
    assert content == "A colleague will take over now."
    mine = [
        e
        for e in upstream_log.since()
        if e["headers"].get("x-simulator-test-conv") == f"loop-handoff-{stream}"
    ]
    assert len(mine) == 6  # the handoff turn never reached the model
    ledger = sqlite_gateway.admin("/admin/ledger").json()["records"]
    handoff = [r for r in ledger if r["route"] == "handoff"]
    assert len(handoff) == 1 and Decimal(handoff[0]["cost_usd"]) == 0
    assert handoff[0]["fresh_input_tokens"] == handoff[0]["output_tokens"] == 0


def test_instruct_asks_the_model_to_offer_a_human(
    sqlite_gateway: GatewayProc, upstream_log: UpstreamLog
) -> None:
    _with_policy(sqlite_gateway, {"classes.support.escalation_action": "instruct"})
    turns = _loop(sqlite_gateway, "loop-instruct", stream=False)
    assert turns[5][1]["x-gateway-escalation"] == "loop"
    sent = [
        e
        for e in upstream_log.since()
        if e["headers"].get("x-simulator-test-conv") == "loop-instruct"
    ]
    assert len(sent) == 7  # the model still answers
    last = sent[5]["messages"][-1]
    assert last["role"] == "system" and "handoff to a human" in last["content"]
    assert all("handoff to a human" not in str(m) for m in sent[4]["messages"])


def test_dispute_past_its_ceiling_without_progress_escalates_and_progress_prevents_it(
    sqlite_gateway: GatewayProc,
) -> None:
    for conv, report_progress in (("dispute-stuck", False), ("dispute-moving", True)):
        messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": SYSTEM}]
        seen = []
        for n, point in enumerate(DISPUTE_POINTS, start=1):
            _, headers = _turn(
                sqlite_gateway,
                messages,
                f"Point {n}: {point}",
                None,
                conv,
                stream=False,  # named, so mypy knows the header dict below cannot fill it
                **{"X-Conversation-Class": "dispute"},
            )
            seen.append(headers.get("x-gateway-escalation"))
            if report_progress:
                httpx.post(
                    f"{sqlite_gateway.v1}/conversations/{conv}/events",
                    json={"type": "progress"},
                    headers={"Authorization": f"Bearer {sqlite_gateway.keys['acme']}"},
                )
        if report_progress:
            assert seen == [None] * 9
        else:  # ceiling 6, no progress in the last 3 turns: turn 7, then 4 turns later
            assert seen.index("turn_ceiling") == 6 and seen.count("turn_ceiling") == 1


def test_a_long_progressing_conversation_does_not_escalate(sqlite_gateway: GatewayProc) -> None:
    messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": SYSTEM}]
    seen = []
    for n in range(30):
        _, headers = _turn(
            sqlite_gateway,
            messages,
            f"Next, item SKU-{1000 + n}: can you add it to order ORD-{20000 + n}?",
            None,
            "progressing",
        )
        seen.append(headers.get("x-gateway-escalation"))
    assert seen == [None] * 30


def test_the_tenant_webhook_gets_the_event(sqlite_gateway: GatewayProc) -> None:
    received: list[dict[str, Any]] = []

    class Hook(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        _with_policy(
            sqlite_gateway, {"webhooks": {"acme": f"http://127.0.0.1:{server.server_port}/hook"}}
        )
        _loop(sqlite_gateway, "loop-webhook")
        for _ in range(50):
            if received:
                break
            threading.Event().wait(0.1)
        assert received and received[0]["reason"] == "loop"
        assert received[0]["conversation"] == "loop-webhook" and received[0]["tenant"] == "acme"
    finally:
        server.shutdown()
        server.server_close()


def test_progress_event_validation(sqlite_gateway: GatewayProc, tmp_path: Path) -> None:
    auth = {"Authorization": f"Bearer {sqlite_gateway.keys['acme']}"}
    bad = httpx.post(
        f"{sqlite_gateway.v1}/conversations/nope/events", json={"type": "x"}, headers=auth
    )
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "type"
    missing = httpx.post(
        f"{sqlite_gateway.v1}/conversations/nope/events", json={"type": "progress"}, headers=auth
    )
    assert missing.status_code == 404


def test_a_dispute_that_keeps_bringing_new_facts_is_progressing(
    sqlite_gateway: GatewayProc,
) -> None:
    messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": SYSTEM}]
    seen = []
    for n in range(1, 10):
        _, headers = _turn(
            sqlite_gateway,
            messages,
            f"Here is another disputed charge: invoice INV-{4000 + n} for ${10 + n}.50.",
            None,
            "dispute-facts",
            stream=False,
            **{"X-Conversation-Class": "dispute", "X-Customer-Id": "cust-disputes"},
        )
        seen.append(headers.get("x-gateway-escalation"))
    assert "turn_ceiling" not in seen
