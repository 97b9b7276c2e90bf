"""What a turn is to the loop detector and to a pending escalation, through the gateway
in this process with the openai SDK.

A streamed turn is answered only when its stream was relayed whole (the upstream's end
read, its stream closed cleanly, the client still there): a stream the upstream breaks
off, or the client leaves, is not read by the detector and does not use up a pending
escalation, as a failed JSON call is not. And the detector reads what the customer was
shown (the one choice's content), not the reasoning, tool-call arguments or other
choices the upstream also wrote."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from openai.types.chat import ChatCompletionMessageParam

from gateway.proxy.made_up_replies import stream_events
from gateway.proxy.streaming import StreamRelay, UsageTap
from tests.inprocess import InProcessGateway, SimulatorLog, start_inprocess
from tests.recording_upstream import Answer, Recorder, recording_upstream
from tests.servers import edit_policy
from tests.test_loops import LOOP_ASKS, SAME_ANSWER, SYSTEM

SUPPORT = {"X-Conversation-Class": "support"}


def _state(gw: InProcessGateway, conv: str) -> dict[str, Any]:
    auth = {"Authorization": f"Bearer {gw.keys['acme']}"}
    state: dict[str, Any] = gw.http.get(f"{gw.v1}/conversations/{conv}", headers=auth).json()
    return state


def _ask(
    gw: InProcessGateway,
    messages: list[ChatCompletionMessageParam],
    text: str,
    reply: str,
    conv: str,
    stream: bool = False,
    extra: dict[str, str] | None = None,
    leave_after: int | None = None,
) -> tuple[str, dict[str, str]]:
    """One customer turn (`messages` plus `text`, not kept in `messages`), answered with
    `reply`; `extra`: more headers; `leave_after`: the client closes the stream after that
    many chunks. The content the client got, and the response's headers."""
    client = gw.openai()
    sent: list[ChatCompletionMessageParam] = [*messages, {"role": "user", "content": text}]
    headers = {
        "X-Conversation-Id": conv,
        "X-Simulator-Log-Messages": "1",
        "x-simulator-reply": reply,
        **SUPPORT,
        **(extra or {}),
    }
    if not stream:
        raw = client.chat.completions.with_raw_response.create(
            model="gpt-4o-mini", messages=sent, extra_headers=headers
        )
        return raw.parse().choices[0].message.content or "", dict(raw.headers)
    got = ""
    with client.chat.completions.with_streaming_response.create(
        model="gpt-4o-mini", messages=sent, stream=True, extra_headers=headers
    ) as response:
        seen = dict(response.headers)
        for n, chunk in enumerate(response.parse()):
            got += "".join(c.delta.content or "" for c in chunk.choices)
            if leave_after is not None and n + 1 >= leave_after:
                break  # the client goes: the context's exit closes the stream
    return got, seen


def _answered(
    gw: InProcessGateway,
    messages: list[ChatCompletionMessageParam],
    text: str,
    reply: str,
    conv: str,
    stream: bool = False,
) -> dict[str, str]:
    content, headers = _ask(gw, messages, text, reply, conv, stream)
    messages += [{"role": "user", "content": text}, {"role": "assistant", "content": content}]
    return headers


# The events the simulator streams: the role, one per word, the finish, [DONE].
def _broken_at(reply: str, words: int) -> str:
    """x-simulator-break-after for a stream cut after `words` words of `reply`."""
    assert words < len(reply.split(" "))
    return str(1 + words)


@pytest.fixture
def gw(tmp_path: Path) -> Any:
    gateway = start_inprocess(tmp_path, f"sqlite:///{tmp_path}/g.db")
    yield gateway
    gateway.stop()


def test_a_loop_finished_by_a_stream_the_upstream_broke_off_is_not_recorded(
    gw: InProcessGateway,
) -> None:
    """The loop's second loop turn is a stream the upstream cuts after most of the
    answer: nobody was answered, so no loop is recorded, counted or pending (it was,
    with a webhook, on the partial reply). The app sends the turn again and it is
    answered: the loop is recorded then."""
    conv = "broken-loop"
    messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": SYSTEM}]
    for ask, answer in zip(LOOP_ASKS[:2], SAME_ANSWER[:2], strict=True):
        _answered(gw, messages, ask, answer, conv)
    cut = {"x-simulator-break-after": _broken_at(SAME_ANSWER[2], 10)}
    got, _ = _ask(gw, messages, LOOP_ASKS[2], SAME_ANSWER[2], conv, True, cut)
    assert got and got != SAME_ANSWER[2]  # the customer saw part of it
    state = _state(gw, conv)
    assert state["escalations"] == 0 and state["escalation_pending"] is None, state
    assert "gateway_conversation_escalations_total{" not in gw.admin("/metrics").text
    _answered(gw, messages, LOOP_ASKS[2], SAME_ANSWER[2], conv, stream=True)
    state = _state(gw, conv)
    assert state["escalations"] == 1 and state["escalation_pending"] == "loop", state


@pytest.mark.parametrize("how", ["upstream breaks off", "client leaves"])
def test_a_broken_stream_does_not_use_up_a_pending_escalation(
    gw: InProcessGateway, how: str
) -> None:
    """A loop is recorded, its `instruct` pending for the next turn answered. That turn
    is a stream the upstream breaks off, or the client leaves: it carries the signal
    and the instruction, but no one was answered, so it stays pending (README: a failed
    turn does not use it up), and the turn sent again carries both; nothing is counted
    twice. (It was used up by the broken turn: the re-sent one went without.)"""
    edit_policy(gw.root, {"classes.support.escalation_action": "instruct"})
    gw.restart()
    conv = f"broken-pending-{how[:6]}"
    messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": SYSTEM}]
    for ask, answer in zip(LOOP_ASKS[:3], SAME_ANSWER[:3], strict=True):
        _answered(gw, messages, ask, answer, conv)
    state = _state(gw, conv)
    assert state["escalations"] == 1 and state["escalation_pending"] == "loop", state
    reply = "Let me check that for you right away, one moment please while I look into it."
    if how == "upstream breaks off":
        broken = {"x-simulator-break-after": _broken_at(reply, 3)}
        got, headers = _ask(gw, messages, LOOP_ASKS[3], reply, conv, True, broken)
    else:
        slow = {"x-simulator-chunk-delay-ms": "50"}
        got, headers = _ask(gw, messages, LOOP_ASKS[3], reply, conv, True, slow, leave_after=3)
    assert headers["x-gateway-escalation"] == "loop" and got != reply
    state = _state(gw, conv)
    assert state["escalations"] == 1 and state["escalation_pending"] == "loop", state
    log = SimulatorLog(gw)
    headers = _answered(gw, messages, LOOP_ASKS[3], reply, conv)
    assert headers.get("x-gateway-escalation") == "loop"
    (sent,) = [e for e in log.since() if e.get("messages")]
    assert sent["messages"][-1]["role"] == "system"
    assert "handoff to a human" in sent["messages"][-1]["content"]
    state = _state(gw, conv)
    assert state["escalations"] == 1 and state["escalation_pending"] is None, state


QUESTIONS = [
    (
        "Where is my order ORD-55555? It has not arrived yet.",
        "Order ORD-55555 is in transit and should arrive within 3 to 5 business days, the "
        "carrier scanned it yesterday in Memphis.",
    ),
    (
        "Can I change the delivery address to my office instead?",
        "Yes, you can change the delivery address until the parcel reaches the local depot, "
        "I can update it for you now if you share the address.",
    ),
    (
        "What is your return policy for shoes that do not fit?",
        "Shoes that do not fit can be returned within 30 days in their original box, and the "
        "return label is free for members.",
    ),
    (
        "Thanks. And do you have the same model in blue?",
        "The blue version is out of stock right now, but it is expected back in two weeks; I "
        "can notify you when it arrives.",
    ),
]


def test_questions_sent_again_after_broken_streams_are_no_loop(gw: InProcessGateway) -> None:
    """Four different questions; the upstream breaks off the second's and the third's
    streams and the app sends each again. No question was asked twice of anyone who
    answered it: no loop, no handoff. (The re-send was read as a verbatim re-ask
    answered as the partial reply was: two such turns handed the customer over.)"""
    edit_policy(gw.root, {"classes.support.escalation_action": "handoff"})
    gw.restart()
    conv = "broken-resent"
    messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": SYSTEM}]
    seen = []
    for n, (question, answer) in enumerate(QUESTIONS):
        if n in (1, 2):
            cut = {"x-simulator-break-after": _broken_at(answer, 13)}
            _, headers = _ask(gw, messages, question, answer, conv, True, cut)
            seen.append(headers.get("x-gateway-escalation"))
        headers = _answered(gw, messages, question, answer, conv, stream=True)
        seen.append(headers.get("x-gateway-escalation"))
        assert messages[-1]["content"] == answer  # not the handoff message
    assert seen == [None] * 6
    state = _state(gw, conv)
    assert state["escalations"] == 0 and state["escalation_pending"] is None, state


# -- the relay: when a stream was relayed whole ----------------------------------------


def _events(text: str, done: bool = True) -> list[bytes]:
    events = list(stream_events("c1", "gpt-4o-mini", 0, text.split(" ")))
    return events if done else events[:-2]  # without the finish and [DONE]


async def _relay(
    events: list[bytes], leave_at: int | None = None, delay: float = 0.0
) -> tuple[bool, bool]:
    """Relays `events` to a client that leaves once `leave_at` of them were read from
    the upstream (None: once the upstream's stream is over); (the tap's `whole` as
    `on_done` saw it, whether `on_done` ran)."""
    gone = asyncio.Event()
    seen: list[bool] = []

    async def chunks() -> AsyncIterator[bytes]:
        for n, event in enumerate(events):
            if n == leave_at:
                gone.set()
            await asyncio.sleep(delay)
            yield event
        if leave_at is None:
            gone.set()

    async def receive() -> dict[str, Any]:
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        await asyncio.sleep(0)

    async def closed() -> None:
        pass

    async def on_done(tap: UsageTap) -> None:
        await asyncio.sleep(0.01)  # the booking: the client may go meanwhile
        seen.append(tap.whole)

    relay = StreamRelay(200, [], chunks(), closed, UsageTap(hide_usage=True), on_done)
    await relay({"type": "http"}, receive, send)  # type: ignore[arg-type]
    return (seen[0] if seen else False), bool(seen)


def test_a_stream_is_whole_once_its_end_was_relayed_to_a_client_still_there() -> None:
    """Whole: the upstream's end (a finish_reason, [DONE]) read and its stream closed
    cleanly before the client went; a client leaving after that (while the call is
    booked, the end held for it) saw every word. Not whole: a client gone while the
    upstream was still answering, or a stream that closed without its end."""
    text = "Order ORD-55555 is in transit and should arrive within 3 to 5 business days."
    assert asyncio.run(_relay(_events(text))) == (True, True)
    assert asyncio.run(_relay(_events(text), leave_at=4, delay=0.01)) == (False, True)
    assert asyncio.run(_relay(_events(text, done=False))) == (False, True)


# -- what the detector reads --------------------------------------------------------------

_WORDS = "bcdfghjklmnprstvz"


def _thinking(rnd: random.Random, chars: int) -> str:
    """Reasoning of made-up words, different on every call (as a model's is)."""
    made = (
        "".join(rnd.choice(_WORDS) + rnd.choice("aeiou") for _ in range(3))
        for _ in range(chars // 7 + 1)
    )
    return " ".join(made)[:chars]


def _sse(deltas: list[dict[str, Any]], usage: dict[str, Any]) -> bytes:
    head = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "gpt-4o-mini"}
    out = [{**head, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    out.append({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    out.append({**head, "choices": [], "usage": usage})
    return b"".join(b"data: " + orjson.dumps(o) + b"\n\n" for o in out) + b"data: [DONE]\n\n"


def _reasoning_upstream(recorder: Recorder, chars: int) -> list[str]:
    """Each call answered with the next of SAME_ANSWER, after `chars` of new reasoning
    (`reasoning_content`, as DeepSeek, vLLM and OpenRouter send it), JSON or streamed
    as asked; the answers given, in order."""
    rnd, given = random.Random(1), list(SAME_ANSWER)
    usage = {"prompt_tokens": 50, "completion_tokens": 40, "total_tokens": 90}

    def answer(body: Any) -> Answer:
        content, reasoning = given.pop(0), _thinking(rnd, chars)
        if body.get("stream"):
            deltas = [{"role": "assistant", "reasoning_content": reasoning}]
            deltas += [{"content": w + " "} for w in content.split(" ")]
            return Answer(200, _sse(deltas, usage), {"content-type": "text/event-stream"})
        message = {"role": "assistant", "content": content, "reasoning_content": reasoning}
        reply = {
            "id": "c1",
            "object": "chat.completion",
            "created": 0,
            "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": usage,
        }
        return Answer(200, orjson.dumps(reply), {"content-type": "application/json"})

    recorder.answer_for = answer
    return given


@pytest.mark.parametrize(("stream", "chars"), [(False, 600), (True, 600), (True, 6000)])
def test_a_reasoning_models_loop_is_read_from_the_answers(
    tmp_path: Path, stream: bool, chars: int
) -> None:
    """A real loop (the same question, the same answer) from a model that reasons
    before it answers, its reasoning different each time: the customer is shown the
    answers alone, and the loop escalates as it does without reasoning. (The detector
    read the reasoning too: it never saw the loop; streamed reasoning past 4 KB filled
    all it reads of a reply.)"""
    with recording_upstream() as recorder:
        _reasoning_upstream(recorder, chars)
        gw = start_inprocess(tmp_path, f"sqlite:///{tmp_path}/g.db", f"{recorder.url}/v1")
        try:
            client = gw.openai()
            conv = f"reasoning-{stream}-{chars}"
            messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": SYSTEM}]
            seen = []
            for ask in LOOP_ASKS:
                messages.append({"role": "user", "content": ask})
                extra = {"X-Conversation-Id": conv, **SUPPORT}
                if stream:
                    with client.chat.completions.with_streaming_response.create(
                        model="gpt-4o-mini", messages=messages, stream=True, extra_headers=extra
                    ) as response:
                        seen.append(response.headers.get("x-gateway-escalation"))
                        content = "".join(
                            c.delta.content or "" for ch in response.parse() for c in ch.choices
                        )
                else:
                    raw = client.chat.completions.with_raw_response.create(
                        model="gpt-4o-mini", messages=messages, extra_headers=extra
                    )
                    seen.append(raw.headers.get("x-gateway-escalation"))
                    content = raw.parse().choices[0].message.content or ""
                messages.append({"role": "assistant", "content": content.strip()})
            # as test_loops' scripted loop: recorded once the third is answered
            assert seen == [None, None, None, "loop", None], seen
            assert _state(gw, conv)["escalations"] == 2
        finally:
            gw.stop()


def test_a_tool_call_is_no_answer_to_compare(tmp_path: Path) -> None:
    """The customer asks about one order three times, each time about something new;
    the model looks it up each time with the same call (the app's tool, no content),
    then answers from what it found: each answer new. The calls' arguments, the same
    every time, are not an answer the customer was shown: a call is read as an empty
    reply (never a repeat), the customer's message with it. (Three identical calls
    were three loop turns: a handoff of a conversation moving on.)"""
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "lookup_order", "arguments": '{"order_id": "ORD-55555"}'},
    }
    asks_answers = [
        ("Where is my order ORD-55555?", "It left the warehouse; tracking number TRK-81726."),
        (
            "Order ORD-55555: can I still change the delivery address?",
            "Yes: I opened address change request REQ-44310 for it, reply with the new one.",
        ),
        (
            "And for ORD-55555, will I be charged for the shipping?",
            "No: shipping was waived on it under promotion PROMO-90211, nothing more to pay.",
        ),
    ]
    usage = {"prompt_tokens": 50, "completion_tokens": 20, "total_tokens": 70}

    def completion(message: dict[str, Any], finish: str) -> Answer:
        reply = {
            "id": "c1",
            "object": "chat.completion",
            "created": 0,
            "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage,
        }
        return Answer(200, orjson.dumps(reply), {"content-type": "application/json"})

    with recording_upstream() as recorder:
        gw = start_inprocess(tmp_path, f"sqlite:///{tmp_path}/g.db", f"{recorder.url}/v1")
        try:
            client = gw.openai()
            extra = {"X-Conversation-Id": "tool-calls", **SUPPORT}
            messages: list[Any] = [{"role": "system", "content": SYSTEM}]
            seen = []
            for ask, answer in asks_answers:
                messages.append({"role": "user", "content": ask})
                calling = {"role": "assistant", "content": None, "tool_calls": [call]}
                recorder.answers.append(completion(calling, "tool_calls"))
                raw = client.chat.completions.with_raw_response.create(
                    model="gpt-4o-mini", messages=messages, extra_headers=extra
                )
                seen.append(raw.headers.get("x-gateway-escalation"))
                assert raw.parse().choices[0].message.tool_calls
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
                messages.append(
                    {"role": "tool", "tool_call_id": "call_1", "content": '{"status": "ok"}'}
                )
                recorder.answers.append(
                    completion({"role": "assistant", "content": answer}, "stop")
                )
                raw = client.chat.completions.with_raw_response.create(
                    model="gpt-4o-mini", messages=messages, extra_headers=extra
                )
                seen.append(raw.headers.get("x-gateway-escalation"))
                messages.append({"role": "assistant", "content": answer})
            assert seen == [None] * 6
            state = _state(gw, "tool-calls")
            assert state["escalations"] == 0 and state["escalation_pending"] is None, state
        finally:
            gw.stop()
