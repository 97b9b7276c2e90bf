"""What a red-team read found in how the gateway relays a chat reply (2026-12,
seventeenth session), each reproduced through the openai SDK against the gateway in this
process in front of a loopback upstream answering raw bytes: a 200 whose body is cut off
or an error, relayed as a 200 and booked with no output."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import openai
import pytest

from gateway.proxy import chat
from gateway.proxy.streaming import UsageTap
from tests.inprocess import InProcessGateway
from tests.servers import PROVIDER_KEY
from tests.test_red_team_upstream import (
    SHORT,
    RawUpstream,
    completion,
    gateway_on,
    gw_fixture,  # noqa: F401  (the fixture `gw`: the gateway in front of `upstream`)
    http,
    ledger,
    sse_events,
    upstream_fixture,  # noqa: F401  (the fixture `upstream`)
)

# -- 1: a 2xx body that is no reply -------------------------------------------------------

ACCENTED = {**completion(), "choices": [{**completion()["choices"][0], "index": 0}]}
ACCENTED["choices"][0]["message"] = {"role": "assistant", "content": "Olá, ação é ótima " * 8}


def _short_length(headers: dict[str, str], body: Any) -> bytes:
    """A Content-Length counting characters, not UTF-8 bytes: the body is cut there."""
    text = json.dumps(ACCENTED, ensure_ascii=False)
    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n"
    return head % len(text) + text.encode()


def _closed_halfway(headers: dict[str, str], body: Any) -> bytes:
    """No length: the body ends where the connection closes, halfway through the JSON."""
    raw = json.dumps(completion()).encode()
    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n"
    return head + raw[: len(raw) // 2]


@pytest.mark.parametrize(
    "script", [_short_length, _closed_halfway], ids=["short-content-length", "closed-halfway"]
)
def test_a_cut_off_json_reply_is_a_502_booked_at_its_ceiling(
    gw: InProcessGateway, upstream: RawUpstream, script: Any
) -> None:
    """The client got a 200 with broken JSON (the SDK failed to parse it) and the call was
    booked at its input estimate with 0 output: README says a reply cut off mid-body is
    booked at every reply's output ceiling."""
    upstream.script = script
    with pytest.raises(openai.APIStatusError) as info:
        gw.openai().chat.completions.create(model="gpt-4o-mini", messages=SHORT, max_tokens=300)
    assert info.value.status_code == 502
    assert info.value.code == "upstream_reply_unreadable"
    assert info.value.response.headers["x-should-retry"] == "false"
    [record] = ledger(gw)
    assert record["estimated"] is True
    assert record["output_tokens"] == 300


@pytest.mark.parametrize("form", ["nan", "infinity", "byte-order mark"])
def test_a_reply_the_sdk_reads_is_relayed_though_orjson_refuses_it(
    gw: InProcessGateway, upstream: RawUpstream, form: str
) -> None:
    """A self-hosted server's logprobs may hold NaN or -Infinity, and a body may open
    with a UTF-8 byte-order mark: orjson refuses both, the SDK reads both. Such a reply
    went out as a 502 booked at the ceiling (a review of b2001e4); it is relayed and
    booked from its usage."""
    reply = completion()
    reply["choices"][0]["logprobs"] = {"content": [{"token": "Hello", "logprob": "@"}]}
    text = json.dumps(reply)
    text = text.replace('"@"', {"nan": "NaN", "infinity": "-Infinity"}.get(form, "-0.5"))
    raw = ("\ufeff" if form == "byte-order mark" else "").encode() + text.encode()
    upstream.script = lambda headers, body: http(200, raw, b"application/json")
    answer = gw.openai().chat.completions.create(model="gpt-4o-mini", messages=SHORT)
    assert answer.choices[0].message.content == "Hello world"
    [record] = ledger(gw)
    assert (record["output_tokens"], record["estimated"]) == (7, False)


def test_an_error_in_a_200_is_a_502_with_the_providers_message_scrubbed(
    gw: InProcessGateway, upstream: RawUpstream
) -> None:
    """OpenRouter answers 200 with `{"error": ...}` when the provider failed after the
    answer began: it was relayed as a 200 (the SDK returned a completion without
    choices) and booked with 0 output."""
    error = {
        "error": {
            "message": f"Provider returned error (key {PROVIDER_KEY} rejected mid-answer)",
            "code": 502,
            "type": "provider_error",
        }
    }
    upstream.script = lambda h, b: http(200, json.dumps(error).encode(), b"application/json")
    with pytest.raises(openai.APIStatusError) as info:
        gw.openai().chat.completions.create(model="gpt-4o-mini", messages=SHORT, max_tokens=300)
    response = info.value.response
    assert response.status_code == 502
    assert PROVIDER_KEY not in response.text
    assert "Provider returned error" in info.value.message
    assert response.headers["x-should-retry"] == "false"
    [record] = ledger(gw)
    assert record["estimated"] is True
    assert record["output_tokens"] == 300


# -- 2: a stream labelled otherwise -------------------------------------------------------


@pytest.mark.parametrize(
    "label",
    [
        b"Text/Event-Stream",
        b"text/event-stream;charset=UTF-8",
        b"text/plain",
        b"application/x-ndjson",
        None,
    ],
    ids=["mixed-case", "parameters", "text-plain", "ndjson", "none"],
)
def test_a_stream_not_labelled_text_event_stream_is_relayed_and_booked_as_one(
    gw: InProcessGateway, upstream: RawUpstream, label: bytes | None
) -> None:
    """The content type was checked exactly: such a stream went down the JSON path, the
    client got it buffered with the usage chunk it did not ask for, and the call was
    booked with 0 output."""
    body = sse_events()
    if label is None:
        reply = b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n" % len(body) + body
        upstream.script = lambda h, b: reply
    else:
        upstream.script = lambda h, b: http(200, body, label)
    chunks = list(
        gw.openai().chat.completions.create(model="gpt-4o-mini", messages=SHORT, stream=True)
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == (
        "Hello world ção"
    )
    assert all(c.usage is None and c.choices for c in chunks)  # no usage chunk: not asked
    [record] = ledger(gw)
    assert (record["fresh_input_tokens"], record["output_tokens"]) == (20, 7)
    assert record["estimated"] is False


def test_json_answering_a_stream_request_is_still_read_as_json(
    gw: InProcessGateway, upstream: RawUpstream
) -> None:
    upstream.script = lambda h, b: http(200, json.dumps(completion()).encode(), b"text/plain")
    response = gw.http.post(
        "/v1/chat/completions",
        json={"model": "gpt-4o-mini", "messages": SHORT, "stream": True},
        headers={"Authorization": f"Bearer {gw.keys['acme']}"},
    )
    assert response.status_code == 200
    assert response.json()["choices"][0]["message"]["content"] == "Hello world"
    [record] = ledger(gw)
    assert (record["fresh_input_tokens"], record["output_tokens"]) == (20, 7)


# -- 3: the end of a stream is [DONE], not the connection's close -------------------------


class HeldUpstream(RawUpstream):
    """Answers every request with a chunked event stream that ends in [DONE] and then
    keeps the response open, a `: ping` comment every 0.1 s, for `hold` seconds."""

    hold = 6.0
    answering = 0  # requests still being answered

    def __exit__(self, *exc: object) -> None:
        deadline = time.monotonic() + self.hold + 2
        while self.answering and time.monotonic() < deadline:
            time.sleep(0.05)  # the gateway closed the connection: the answer notices
        super().__exit__(*exc)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        def chunk(data: bytes) -> bytes:
            return b"%x\r\n%s\r\n" % (len(data), data)

        self.answering += 1
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            await reader.readexactly(length)
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                b"transfer-encoding: chunked\r\n\r\n" + chunk(sse_events())
            )
            loop = asyncio.get_running_loop()
            until = loop.time() + self.hold
            while loop.time() < until and not (reader.at_eof() or writer.is_closing()):
                await writer.drain()
                await asyncio.sleep(0.1)
                writer.write(chunk(b": ping\n\n"))
            writer.write(b"0\r\n\r\n")
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
            self.answering -= 1


def test_a_stream_ends_at_done_though_the_upstream_keeps_it_open(tmp_path: Path) -> None:
    """An upstream that sent every chunk, the usage and [DONE], then kept the response
    open (sending keep-alives): the client got neither the finish chunk nor [DONE] (and
    the call was not booked) until the upstream closed it or its timeout passed."""
    with HeldUpstream() as upstream:
        gw = gateway_on(tmp_path, upstream)
        try:
            started = time.monotonic()
            chunks = list(
                gw.openai().chat.completions.create(
                    model="gpt-4o-mini", messages=SHORT, stream=True
                )
            )
            elapsed = time.monotonic() - started
            [record] = ledger(gw)
        finally:
            gw.stop()
    assert elapsed < HeldUpstream.hold / 2
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "Hello world ção"
    assert (record["fresh_input_tokens"], record["output_tokens"]) == (20, 7)


# -- 4: what a stream keeps ---------------------------------------------------------------


def _held_bytes(tap: UsageTap) -> int:
    """The bytes and characters a tap holds in its attributes (lists of them included)."""
    total = 0
    for value in vars(tap).values():
        items = value if isinstance(value, list) else [value]
        total += sum(len(v) for v in items if isinstance(v, bytes | bytearray | str))
    return total


@pytest.mark.parametrize(
    "filler",
    [b": p\n\n" * 250_000, b'data: {"choices":[],"usage":null}\n\n' * 30_000],
    ids=["keep-alives", "empty-chunks"],
)
def test_a_stream_does_not_keep_its_every_event(
    gw: InProcessGateway,
    upstream: RawUpstream,
    monkeypatch: pytest.MonkeyPatch,
    filler: bytes,
) -> None:
    """Every event was kept for the life of the stream, keep-alive comments included:
    5 million `: p` comments (25 MB) grew the worker by ~330 MB. (A quarter of a million
    comments, 1.5 MB, or 30,000 empty chunks, 1.1 MB: enough that keeping them passes
    the bound, few enough to stream in a few seconds.)"""
    taps: list[UsageTap] = []

    class Recorded(UsageTap):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            taps.append(self)

    monkeypatch.setattr(chat, "UsageTap", Recorded)
    events = sse_events()
    first_end = events.index(b"\n\n") + 2
    body = events[:first_end] + filler + events[first_end:]
    upstream.script = lambda h, b: http(200, body, b"text/event-stream")
    chunks = list(
        gw.openai().chat.completions.create(model="gpt-4o-mini", messages=SHORT, stream=True)
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == (
        "Hello world ção"
    )
    [tap] = taps
    assert _held_bytes(tap) < 512 * 1024, _held_bytes(tap)
    assert tap.streamed_text() == "Hello world ção"
    [record] = ledger(gw)
    assert (record["fresh_input_tokens"], record["output_tokens"]) == (20, 7)
