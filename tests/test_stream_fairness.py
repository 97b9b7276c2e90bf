"""Many streams share the gateway's event loop: one fast stream does not hold it while
its events are relayed; and what a stream relays (its text, its usage, its bytes) is
what the upstream sent, however its bytes were cut."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import httpx2
import openai
import orjson
from hypothesis import given
from hypothesis import strategies as st
from starlette.types import Message, Receive, Scope, Send

from gateway.proxy.streaming import UsageTap
from tests.inprocess import InProcessGateway

TOKENS = 4000  # a long answer (the simulator fills 800 events at most), written at once


def test_a_fast_stream_lets_other_requests_run_while_it_is_relayed(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """The simulator writes a whole answer at once, as a fast upstream does. The relay
    found its events buffered and the client's send never made it wait, so it relayed
    one read's worth (hundreds of events; up to 1 MiB of them) before any other task on
    the event loop ran: another request waited for it, and with many such streams a
    probe of /livez took seconds. Now it lets others run every 16 KiB it relays: another
    task gets a turn between every few dozen events, and a /livez sent once the stream
    began is answered long before its end."""
    gw = sqlite_app_gateway
    app = gw.http.app
    sent = [0]  # events of the stream sent to its client so far
    turns: list[int] = []  # `sent` at each turn another task got
    livez_at: list[int] = []  # `sent` when /livez was answered
    began = asyncio.Event()

    async def counted(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].endswith("/chat/completions"):
            await app(scope, receive, send)
            return

        async def count(message: Message) -> None:
            await send(message)
            if message["type"] == "http.response.body":
                sent[0] += message.get("body", b"").count(b"data:")
                began.set()

        await app(scope, receive, count)

    async def scenario() -> tuple[str, str]:
        transport = httpx2.ASGITransport(app=counted)
        async with httpx2.AsyncClient(transport=transport, base_url=gw.url) as http:
            client = openai.AsyncOpenAI(
                base_url=gw.v1, api_key=gw.keys["acme"], http_client=http, max_retries=0
            )
            done = asyncio.Event()

            async def other_task() -> None:
                while not done.is_set():
                    turns.append(sent[0])
                    await asyncio.sleep(0)

            async def livez() -> None:
                await began.wait()
                assert (await http.get("/livez")).status_code == 200
                livez_at.append(sent[0])

            others = [asyncio.create_task(other_task()), asyncio.create_task(livez())]
            ask: dict[str, Any] = {
                "model": "gpt-4o-mini",
                "messages": [{"role": "user", "content": "Tell me everything."}],
                "max_completion_tokens": TOKENS,
                "extra_headers": {"X-Simulator-Fill": "1"},
            }
            stream = await client.chat.completions.create(stream=True, **ask)
            parts = [c.choices[0].delta.content or "" async for c in stream if c.choices]
            done.set()
            await asyncio.gather(*others)
            whole = await client.chat.completions.create(**ask)
            return "".join(parts), whole.choices[0].message.content or ""

    streamed, whole = gw.http.portal.call(scenario)  # type: ignore[union-attr]
    assert streamed == whole and len(streamed) > 2000  # the same answer, relayed whole
    assert sent[0] > 500
    most = max(b - a for a, b in itertools.pairwise(turns))
    assert most <= 100, f"{most} events relayed before another task ran (of {sent[0]})"
    assert livez_at and livez_at[0] < sent[0] // 2, (livez_at, sent[0])


# What the upstream sends: chat chunks of any text (escapes, quotes, "usage" and
# "finish_reason" in it, non-ASCII), `"usage": null` on each as the gateway asks for,
# written compactly or with spaces, then the finish, the usage chunk and [DONE].
TEXTS = st.lists(
    st.one_of(
        st.text(max_size=12),
        st.sampled_from(['"usage": null', '"finish_reason":"stop"', "\\", '\\"', "data: x\n\n"]),
    ),
    min_size=1,
    max_size=12,
)
USAGE = {"prompt_tokens": 7, "completion_tokens": 5, "total_tokens": 12}


def _chunk(delta: dict[str, Any], finish: str | None, usage: bool) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if usage:
        obj["usage"] = None
    return obj


def _events(texts: list[str], usage: bool, spaced: bool) -> list[bytes]:
    def event(obj: dict[str, Any]) -> bytes:
        body = json.dumps(obj).encode() if spaced else orjson.dumps(obj)
        return b"data: " + body + b"\n\n"

    events = [event(_chunk({"role": "assistant", "content": ""}, None, usage))]
    events += [event(_chunk({"content": t}, None, usage)) for t in texts]
    events.append(event(_chunk({}, "stop", usage)))
    if usage:
        events.append(event({"id": "c1", "model": "m-1", "choices": [], "usage": USAGE}))
    return [*events, b"data: [DONE]\n\n"]


@given(TEXTS, st.booleans(), st.booleans(), st.lists(st.integers(1, 600), max_size=20))
def test_what_a_stream_relays_is_what_the_upstream_sent(
    texts: list[str], asked: bool, spaced: bool, cuts: list[int]
) -> None:
    """Byte for byte what the upstream sent, less what the client did not ask for (the
    usage chunk and each `"usage": null`); the text and the usage read; whatever the
    pieces the bytes came in."""
    whole = b"".join(_events(texts, usage=True, spaced=spaced))
    pieces, at = [], 0
    for cut in cuts:
        pieces.append(whole[at : at + cut])
        at += cut
    pieces.append(whole[at:])
    tap = UsageTap(hide_usage=not asked)
    relayed = b"".join(tap.feed(p) for p in pieces) + tap.finish()
    expected = b"".join(_events(texts, usage=asked, spaced=spaced))
    if spaced and not asked:  # each event as the upstream wrote it, its usage taken out
        expected = (
            b"".join(e.replace(b', "usage": null', b"") for e in _events(texts, True, spaced)[:-2])
            + b"data: [DONE]\n\n"
        )
    assert relayed == expected
    assert tap.usage == USAGE and tap.model == "m-1"
    assert tap.streamed_text() == tap.answer_text() == "".join(texts)
    assert tap.ended and tap.done
