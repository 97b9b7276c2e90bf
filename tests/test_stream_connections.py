"""A stream ends at `[DONE]` (fcba95c) without throwing its upstream connection away: a
provider sends the chunked body's terminator a packet after `[DONE]`, and a connection
closed before it is read cannot be reused, so every streamed call paid a new TCP (and, to
a real provider, TLS) handshake. The rest of the body is read briefly after `[DONE]`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.inprocess import InProcessGateway
from tests.test_red_team_upstream import SHORT, RawUpstream, completion, ledger, sse_events


class KeepAliveUpstream(RawUpstream):
    """A loopback HTTP/1.1 server that keeps its connections open and answers each
    request on them: a stream as chunks, its terminator 10 ms after `[DONE]`, as a
    provider's often arrives in a packet of its own. Counts the connections."""

    def __init__(self) -> None:
        super().__init__()
        self.connections = 0

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").lower()
                length = next(
                    int(line.split(":", 1)[1])
                    for line in head.split("\r\n")
                    if line.startswith("content-length:")
                )
                body: dict[str, Any] = json.loads(await reader.readexactly(length))
                if body.get("stream"):
                    writer.write(
                        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                        b"transfer-encoding: chunked\r\n\r\n"
                    )
                    events = sse_events()
                    writer.write(b"%x\r\n%s\r\n" % (len(events), events))
                    await writer.drain()
                    await asyncio.sleep(0.01)
                    writer.write(b"0\r\n\r\n")
                else:
                    reply = json.dumps(completion()).encode()
                    writer.write(
                        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                        b"content-length: %d\r\n\r\n%s" % (len(reply), reply)
                    )
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            writer.close()


@pytest.fixture
def upstream() -> Iterator[KeepAliveUpstream]:
    with KeepAliveUpstream() as up:
        yield up


def test_streamed_calls_reuse_their_upstream_connection(
    tmp_path: Path, upstream: KeepAliveUpstream
) -> None:
    gw = InProcessGateway(tmp_path, f"{upstream.url}/v1", f"sqlite:///{tmp_path / 'g.db'}")
    gw.start()
    try:
        client = gw.openai()
        texts = []
        for stream in (True, True, False, True, False, True):
            if stream:
                chunks = client.chat.completions.create(
                    model="gpt-4o-mini", messages=SHORT, stream=True
                )
                texts.append("".join(c.choices[0].delta.content or "" for c in chunks if c.choices))
            else:
                reply = client.chat.completions.create(model="gpt-4o-mini", messages=SHORT)
                texts.append(reply.choices[0].message.content or "")
        assert len(ledger(gw)) == 6
    finally:
        gw.stop()
    assert texts[0] == "Hello world ção" and texts[2] == "Hello world"
    assert upstream.connections == 1
