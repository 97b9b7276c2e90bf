"""UsageTap: what the client receives of an SSE stream, and what the gateway reads."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import given
from hypothesis import strategies as st

from gateway.proxy.streaming import UsageTap
from tests.inprocess import InProcessGateway


def event(obj: dict[str, Any]) -> bytes:
    return b"data: " + orjson.dumps(obj) + b"\n\n"


def chunk(content: str | None, finish: str | None = None, usage: bool = False) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [
            {"index": 0, "delta": {"content": content} if content else {}, "finish_reason": finish}
        ],
    }
    if usage:
        obj["usage"] = None
    return obj


USAGE = {"prompt_tokens": 12, "completion_tokens": 3}


def upstream(asked: bool) -> list[bytes]:
    events = [
        event(chunk("Hel", usage=asked)),
        event(chunk("lo", usage=asked)),
        event(chunk(None, "stop", usage=asked)),
    ]
    if asked:
        events.append(
            event(
                {
                    "id": "c1",
                    "object": "chat.completion.chunk",
                    "model": "m-2024",
                    "choices": [],
                    "usage": USAGE,
                }
            )
        )
    return [*events, b"data: [DONE]\n\n"]


def relay(tap: UsageTap, pieces: list[bytes]) -> bytes:
    return b"".join(tap.feed(p) for p in pieces) + tap.finish()


def test_hides_what_the_client_did_not_ask_for() -> None:
    tap = UsageTap(hide_usage=True)
    assert relay(tap, upstream(asked=True)) == b"".join(upstream(asked=False))
    assert tap.usage == USAGE and tap.model == "m-2024"


def test_passes_everything_when_the_client_asked() -> None:
    tap = UsageTap(hide_usage=False)
    assert relay(tap, upstream(asked=True)) == b"".join(upstream(asked=True))
    assert tap.usage == USAGE


def test_holds_the_end_until_finish() -> None:
    tap = UsageTap(hide_usage=True)
    sent = [tap.feed(e) for e in upstream(asked=True)]
    assert sent[0] and sent[1]
    assert sent[2:] == [b"", b"", b""]  # finish chunk, usage chunk, [DONE] wait for the booking
    assert tap.finish() == event(chunk(None, "stop")) + b"data: [DONE]\n\n"


def test_an_empty_or_null_finish_reason_is_not_the_end() -> None:
    """SGLang, older Ollama and some hosted servers send `"finish_reason": ""` on every
    chunk (KoboldCpp: "null"): each was taken for the end, so everything after the first
    content chunk waited until the call was booked, and the client saw nothing stream."""
    for mid in ("", "null"):
        tap = UsageTap(hide_usage=True)
        events = [event(chunk(w, mid)) for w in ("Hel", "lo", " there")]
        assert [tap.feed(e) for e in events] == events, mid  # each relayed as it comes
        assert not tap.ended
        assert tap.feed(event(chunk(None, "stop"))) == b""  # the real end waits
        assert tap.ended


def test_what_follows_a_finish_reason_is_held_only_while_it_is_an_end() -> None:
    """An upstream that keeps streaming past a finish_reason held every later event, in
    one buffer copied whole at each event: relayed on past the size of an end's chunks."""
    tap = UsageTap(hide_usage=True)
    assert tap.feed(event(chunk(None, "stop"))) == b""
    sent = b"".join(tap.feed(event(chunk("x" * 1000))) for _ in range(200))
    assert len(sent) > 100_000  # not held to the last byte
    whole = event(chunk(None, "stop")) + event(chunk("x" * 1000)) * 200
    assert sent + tap.finish() == whole  # nothing lost, nothing reordered


def test_usage_inside_a_content_chunk_is_read_and_removed() -> None:
    obj = chunk("x", "stop")
    obj["usage"] = USAGE
    tap = UsageTap(hide_usage=True)
    out = relay(tap, [event(obj)])
    assert tap.usage == USAGE and b"usage" not in out and b'"content":"x"' in out


def test_crlf_events_and_streamed_text() -> None:
    tap = UsageTap(hide_usage=True)
    body = b"data: " + orjson.dumps(chunk("a b")) + b"\r\n\r\n" + b"data: [DONE]\r\n\r\n"
    assert relay(tap, [body[:7], body[7:30], body[30:]]) == body
    assert tap.streamed_text() == "a b" and tap.usage is None


@given(st.lists(st.integers(min_value=1, max_value=40), max_size=30), st.booleans())
def test_any_split_of_the_bytes_gives_the_same_result(cuts: list[int], asked: bool) -> None:
    whole = b"".join(upstream(asked=True))
    pieces, pos = [], 0
    for cut in cuts:
        pieces.append(whole[pos : pos + cut])
        pos += cut
    pieces.append(whole[pos:])
    tap = UsageTap(hide_usage=not asked)
    assert relay(tap, pieces) == b"".join(upstream(asked=asked))
    assert tap.usage == USAGE


def test_the_answer_shown_is_choice_zeros_content_without_reasoning() -> None:
    """What the episode card keeps of a streamed answer: what the customer was shown."""
    thinking = chunk(None)
    thinking["choices"][0]["delta"] = {"reasoning_content": "They are angry; promise a refund?"}
    tap = UsageTap(hide_usage=True)
    relay(tap, [event(thinking), *upstream(asked=False)])
    assert tap.answer_text() == "Hello"
    assert "refund" in tap.streamed_text()  # the estimate still counts every token
    second = chunk("Bonjour")
    second["choices"][0]["index"] = 1
    tap = UsageTap(hide_usage=True)
    relay(tap, [event(chunk("Hello")), event(second), b"data: [DONE]\n\n"])
    assert tap.answer_text() == ""  # which choice the app showed is not known
    call = chunk(None)
    call["choices"][0]["delta"] = {"tool_calls": [{"index": 0, "function": {"name": "refund"}}]}
    tap = UsageTap(hide_usage=True)
    relay(tap, [event(chunk("Let me check.")), event(call), b"data: [DONE]\n\n"])
    assert tap.answer_text() == ""


def test_the_sdks_response_stream_helper_reads_the_simulated_stream(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """`client.responses.stream()` rebuilds the response from its events: the simulator
    sent text deltas with no item or part added before them, and the helper raised
    "Received a content event for output index None before receiving its output item"."""
    client = sqlite_app_gateway.openai()
    with client.responses.stream(model="gpt-4o-mini", input="Where is my parcel?") as stream:
        deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert final.output_text == "".join(deltas) and final.output_text
    assert final.usage is not None and final.usage.output_tokens > 0
    [record] = sqlite_app_gateway.admin("/admin/ledger").json()["records"]
    assert record["output_tokens"] == final.usage.output_tokens
