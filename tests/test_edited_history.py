"""An app that edits (redacts) a message strictly inside the summarized span: the next
request's summary is made again from the messages as they are, and the facts heard from
the removed text are gone (issue 15)."""

from __future__ import annotations

from typing import Any

from tests.inprocess import InProcessGateway

SECRET = "marta.quintela77@example.com"


def test_a_redacted_message_leaves_the_summary_and_the_facts(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    gw = sqlite_app_gateway
    client = gw.openai()
    auth = {"Authorization": f"Bearer {gw.keys['acme']}"}
    headers = {"X-Conversation-Id": "redact-me", "X-Customer-Id": "marta"}
    messages: list[Any] = [{"role": "system", "content": "You are the support agent."}]

    def turn(text: str) -> None:
        messages.append({"role": "user", "content": text})
        reply = client.chat.completions.create(
            model="gpt-4o-mini", messages=messages, extra_headers=headers
        )
        messages.append({"role": "assistant", "content": reply.choices[0].message.content or ""})

    turn("Hello, my parcel BR77001 has not arrived and the tracking page shows nothing at all.")
    turn(f"You can write to me at {SECRET} if the phone line is busy again, please do.")
    for n in range(3, 40):
        turn(f"Turn {n}: still waiting for the courier, nobody called me back. " * 4)
    state = gw.http.get(f"{gw.v1}/conversations/redact-me", headers=auth).json()
    facts = gw.http.get(f"{gw.v1}/customers/marta/facts", headers=auth).text
    assert state["cursor"] > 4, state  # the second message is inside the summarized span
    assert SECRET in state["summary"] + facts  # it was summarized or heard

    # the customer's second message, and the agent's reply quoting it
    redacted = [m for m in messages[:5] if SECRET in m["content"]]
    assert redacted and messages[3] in redacted
    for message in redacted:
        message["content"] = message["content"].replace(SECRET, "[redacted]")
    turn("Any news today?")
    state = gw.http.get(f"{gw.v1}/conversations/redact-me", headers=auth).json()
    facts = gw.http.get(f"{gw.v1}/customers/marta/facts", headers=auth).text
    assert SECRET not in state["summary"] and SECRET not in facts
    assert state["summary"] and state["cursor"] > 4  # summarized again, from what is there
