"""Webhook event ids: one per escalation, the same however often it is sent, and never
the id of another session's escalation that took over the same conversation id (an
anonymous app's conversations are keyed by their opening: two users who both open with
"Hi" share it, one after the other)."""

from __future__ import annotations

import threading
from typing import Any

import openai
from openai.types.chat import ChatCompletionMessageParam

from tests.servers import GatewayProc
from tests.test_loops import LOOP_ASKS, SAME_ANSWER, SYSTEM, webhooks_to


def _anonymous_loop(gw: GatewayProc) -> None:
    """A user of an app that sends no conversation id: "Hi", then a loop."""
    client = openai.OpenAI(base_url=gw.v1, api_key=gw.keys["acme"], max_retries=0)
    messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": SYSTEM}]
    for text, reply in [
        ("Hi", "Hello! How can I help?"),
        *zip(LOOP_ASKS, SAME_ANSWER, strict=True),
    ]:
        messages.append({"role": "user", "content": text})
        answer = client.chat.completions.create(
            model="gpt-4o-mini", messages=messages, extra_headers={"x-simulator-reply": reply}
        )
        messages.append({"role": "assistant", "content": answer.choices[0].message.content})


def _settled(received: list[dict[str, Any]]) -> bool:
    """No webhook for a moment: the session's escalations have all been sent."""
    before = len(received)
    threading.Event().wait(0.5)
    return len(received) == before


def test_two_sessions_under_one_conversation_id_escalate_with_ids_of_their_own(
    sqlite_gateway: GatewayProc,
) -> None:
    with webhooks_to(sqlite_gateway) as received:
        sent: list[int] = []  # webhooks received after each user's loop
        for _ in range(2):  # one user after the other, the same loop at the same turns
            _anonymous_loop(sqlite_gateway)
            for _ in range(100):
                if len(received) > (sent[-1] if sent else 0) and _settled(received):
                    break
                threading.Event().wait(0.1)
            sent.append(len(received))
        first, second = received[: sent[0]], received[sent[0] :]
        assert first and second, received
        assert {e["conversation"] for e in received} == {first[0]["conversation"]}
        assert {e["turn"] for e in first} == {e["turn"] for e in second}
        assert not {e["id"] for e in first} & {e["id"] for e in second}
