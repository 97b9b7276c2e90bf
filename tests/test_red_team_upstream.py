"""What a red-team read found at the gateway's upstream seam (2026-12, seventeenth
session), each reproduced through the openai SDK against the gateway in this process in
front of a loopback upstream that answers with the raw bytes each test scripts: an
operator's price skipped for the dated snapshot a reply names, compressed replies relayed
undecoded, a response head without a size limit, and redirects relayed with what their
body echoed."""

from __future__ import annotations

import asyncio
import gzip
import json
import logging
import threading
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any, Self

import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from gateway.ledger.usage import TokenUsage
from gateway.spend.pricing import PriceEntry, Pricer, snapshot_base
from tests.inprocess import InProcessGateway
from tests.servers import PROVIDER_KEY

SHORT: list[ChatCompletionMessageParam] = [
    {"role": "user", "content": "Hello there, tell me something about my order."}
]
USAGE = {"prompt_tokens": 20, "completion_tokens": 7, "total_tokens": 27}
# An answer: the raw bytes to write, given the request's headers and JSON body.
Script = Callable[[dict[str, str], Any], bytes]


class RawUpstream:
    """A loopback HTTP/1.1 server in a thread: each request is answered with what
    `script` makes of it, written as it is, and the connection closed."""

    def __init__(self) -> None:
        self.script: Script = lambda headers, body: json_reply(completion())
        self.seen: list[dict[str, Any]] = []
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.url = ""

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)

        async def start() -> asyncio.Server:
            server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
            self.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
            self._ready.set()
            return server

        server = self._loop.run_until_complete(start())
        self._loop.run_forever()
        server.close()
        for task in asyncio.all_tasks(self._loop):  # connections a subclass keeps open
            task.cancel()
        self._loop.run_until_complete(asyncio.sleep(0))
        self._loop.run_until_complete(server.wait_closed())
        self._loop.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            headers: dict[str, str] = {}
            for line in head.decode("latin-1").split("\r\n")[1:]:
                name, _, value = line.partition(":")
                if value:
                    headers[name.strip().lower()] = value.strip()
            length = int(headers.get("content-length", "0"))
            raw = await reader.readexactly(length) if length else b""
            body = json.loads(raw) if raw else None
            self.seen.append({"headers": headers, "body": body})
            writer.write(self.script(headers, body))
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    def __enter__(self) -> Self:
        self._thread.start()
        assert self._ready.wait(10), "the loopback upstream did not start"
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)


def completion(model: str = "gpt-4o", usage: dict[str, int] | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-x",
        "object": "chat.completion",
        "created": 1,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Hello world"},
                "finish_reason": "stop",
            }
        ],
        "usage": usage or USAGE,
    }


def sse_events(model: str = "gpt-4o") -> bytes:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-x",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": word}) for word in ("Hello", " wor", "ld", " ção")]
    events.append(chunk({}, "stop"))
    events.append({**chunk({}), "choices": [], "usage": USAGE})
    return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + (
        b"data: [DONE]\n\n"
    )


def http(
    status: int, body: bytes, content_type: bytes, *extra: bytes, reason: bytes = b"OK"
) -> bytes:
    head = [
        b"HTTP/1.1 %d %s" % (status, reason),
        b"content-type: " + content_type,
        b"content-length: %d" % len(body),
        *extra,
    ]
    return b"\r\n".join(head) + b"\r\n\r\n" + body


def json_reply(obj: Any, *extra: bytes, status: int = 200, reason: bytes = b"OK") -> bytes:
    return http(status, json.dumps(obj).encode(), b"application/json", *extra, reason=reason)


@pytest.fixture(name="upstream")
def upstream_fixture() -> Iterator[RawUpstream]:
    with RawUpstream() as up:
        yield up


def gateway_on(root: Path, upstream: RawUpstream, **extra: Any) -> InProcessGateway:
    gw = InProcessGateway(root, f"{upstream.url}/v1", f"sqlite:///{root / 'gateway.db'}", **extra)
    gw.start()
    return gw


@pytest.fixture(name="gw")
def gw_fixture(tmp_path: Path, upstream: RawUpstream) -> Iterator[InProcessGateway]:
    gw = gateway_on(tmp_path, upstream)
    yield gw
    gw.stop()


def ledger(gw: InProcessGateway) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = gw.admin("/admin/ledger").json()["records"]
    return records


# -- 1: the operator's price, for the dated snapshot the reply names --------------------

OVERRIDE = {"gpt-4o": {"input_per_mtok": "100", "output_per_mtok": "1000"}}
AT_OVERRIDE = Decimal(20 * 100 + 7 * 1000) / 1_000_000  # $0.009


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_the_operators_price_books_the_dated_snapshot_the_reply_names(
    tmp_path: Path, upstream: RawUpstream, stream: bool
) -> None:
    """OpenAI (and Azure) answer a `gpt-4o` call naming its snapshot, gpt-4o-2024-08-06:
    the call was booked at genai-prices' list price ($0.00012), not at the operator's
    `prices` entry for gpt-4o ($0.009), which the spend guard had held it at."""
    snapshot = "gpt-4o-2024-08-06"
    if stream:
        upstream.script = lambda h, b: http(200, sse_events(snapshot), b"text/event-stream")
    else:
        upstream.script = lambda h, b: json_reply(completion(snapshot))
    gw = gateway_on(tmp_path, upstream, prices=OVERRIDE)
    try:
        client = gw.openai()
        if stream:
            chunks = client.chat.completions.create(
                model="gpt-4o",
                messages=SHORT,
                stream=True,
            )
            assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        else:
            client.chat.completions.create(model="gpt-4o", messages=SHORT)
        [record] = ledger(gw)
    finally:
        gw.stop()
    assert record["model"] == snapshot  # booked as the model the reply names
    assert (record["fresh_input_tokens"], record["output_tokens"]) == (20, 7)
    assert Decimal(record["cost_usd"]) == AT_OVERRIDE


def test_a_table_entry_prices_its_models_snapshots_unless_they_have_their_own() -> None:
    table = {
        "gpt-4": PriceEntry(input_per_mtok=Decimal(1), output_per_mtok=Decimal(2)),
        "gpt-4-0314": PriceEntry(input_per_mtok=Decimal(3), output_per_mtok=Decimal(4)),
    }
    pricer = Pricer(table)
    usage = TokenUsage(fresh_input=1_000_000, output=1_000_000)
    assert pricer.cost("gpt-4-0613", usage) == Decimal(3)
    assert pricer.cost("gpt-4-0314", usage) == Decimal(7)
    assert pricer.operator_priced("gpt-4-2024-04-09")
    assert not pricer.operator_priced("gpt-4o-2024-08-06")  # another model's snapshot
    assert snapshot_base("claude-3-5-sonnet-20241022") == "claude-3-5-sonnet"
    assert snapshot_base("gpt-4o") is None and snapshot_base("o3-mini") is None


def test_a_reply_naming_an_unpriced_snapshot_is_not_logged_as_counted_unpriced(
    gw: InProcessGateway, upstream: RawUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    """The reply's model has no price, so the call is booked at the requested model's:
    the log said "no price for model ... counted unpriced" for a call that was priced."""
    upstream.script = lambda h, b: json_reply(completion("gpt-4o-mini-2099-01-01"))
    with caplog.at_level(logging.WARNING):
        gw.openai().chat.completions.create(model="gpt-4o-mini", messages=SHORT)
    [record] = ledger(gw)
    assert record["cost_usd"] is not None and Decimal(record["cost_usd"]) > 0
    assert not [r for r in caplog.records if "counted unpriced" in r.getMessage()]


# -- 2: compressed replies ---------------------------------------------------------------


def test_a_gzip_stream_is_decoded_for_the_client_and_booked_with_its_output(
    gw: InProcessGateway, upstream: RawUpstream
) -> None:
    """An upstream that ignores `accept-encoding: identity`: the gzip bytes went to the
    client as text/event-stream (the SDK failed with UnicodeDecodeError) and the call was
    booked with 0 output."""
    compressed = gzip.compress(sse_events())
    upstream.script = lambda h, b: http(
        200, compressed, b"text/event-stream", b"content-encoding: gzip"
    )
    chunks = gw.openai().chat.completions.create(
        model="gpt-4o-mini",
        messages=SHORT,
        stream=True,
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Hello world ção"
    [record] = ledger(gw)
    assert (record["fresh_input_tokens"], record["output_tokens"]) == (20, 7)
    assert record["estimated"] is False


def test_a_gzipped_error_keeps_the_providers_message(
    gw: InProcessGateway, upstream: RawUpstream
) -> None:
    error = {"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit"}}
    body = gzip.compress(json.dumps(error).encode())
    upstream.script = lambda h, b: http(
        429,
        body,
        b"application/json",
        b"content-encoding: gzip",
        b"retry-after: 7",
        reason=b"Too Many Requests",
    )
    with pytest.raises(openai.RateLimitError) as info:
        gw.openai().chat.completions.create(model="gpt-4o-mini", messages=SHORT)
    assert info.value.message.endswith(" - Rate limit reached")
    assert info.value.code == "rate_limit"
    assert ledger(gw) == []


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_reply_in_an_encoding_the_gateway_cannot_decode_is_a_502_booked_at_its_ceiling(
    gw: InProcessGateway, upstream: RawUpstream, stream: bool
) -> None:
    """`br` (no brotli decoder here): the client got an unparseable 200 and the call was
    booked with 0 output. It is refused 502 now, booked as a reply the gateway could not
    read: at every reply's output ceiling."""
    opaque = bytes(range(256)) * 3
    kind = b"text/event-stream" if stream else b"application/json"
    upstream.script = lambda h, b: http(200, opaque, kind, b"content-encoding: br")
    with pytest.raises(openai.APIStatusError) as info:
        reply = gw.openai().chat.completions.create(
            model="gpt-4o-mini",
            messages=SHORT,
            max_tokens=300,
            stream=stream,
        )
        if stream:
            list(reply)
    assert info.value.status_code == 502
    assert info.value.code == "upstream_reply_unreadable"
    assert info.value.response.headers["x-should-retry"] == "false"
    [record] = ledger(gw)
    assert record["estimated"] is True
    assert record["output_tokens"] == 300


def test_a_compressed_reply_is_held_to_the_reply_limit_as_it_is_decoded(
    tmp_path: Path, upstream: RawUpstream
) -> None:
    """50 MB of zeros in 50 KB of gzip: decoded in pieces, the limit stops it."""
    bomb = gzip.compress(b'{"x": "' + b"0" * 50_000_000)
    upstream.script = lambda h, b: http(200, bomb, b"application/json", b"content-encoding: gzip")
    gw = gateway_on(tmp_path, upstream, limits={"max_reply_bytes": 1_000_000})
    try:
        with pytest.raises(openai.APIStatusError) as info:
            gw.openai().chat.completions.create(model="gpt-4o-mini", messages=SHORT)
    finally:
        gw.stop()
    assert info.value.status_code == 502
    assert info.value.code == "upstream_reply_too_large"


# -- 3: the response head's size ---------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        [b"x-filler-%d: %s" % (i, b"a" * 1000) for i in range(400)],  # 400 KB
        [b"x-big: " + b"a" * 3_000_000],  # one line, 3 MB
        [b"x-%d: a" % i for i in range(2000)],  # many small ones
    ],
    ids=["many-large", "one-huge", "many-small"],
)
def test_a_response_head_past_the_limit_is_a_clean_502(
    gw: InProcessGateway, upstream: RawUpstream, headers: list[bytes]
) -> None:
    """httptools has no limit on a response head: 400 one-megabyte header lines grew the
    worker by 400 MB, and were relayed. It fails as httpx's pool does (100 KiB)."""
    upstream.script = lambda h, b: json_reply(completion(), *headers)
    with pytest.raises(openai.APIStatusError) as info:
        gw.openai().chat.completions.create(model="gpt-4o-mini", messages=SHORT)
    assert info.value.status_code == 502
    assert info.value.code == "upstream_unreachable"


def test_a_response_head_within_the_limit_passes(
    gw: InProcessGateway, upstream: RawUpstream
) -> None:
    headers = [b"x-filler-%d: %s" % (i, b"a" * 1000) for i in range(60)]
    upstream.script = lambda h, b: json_reply(completion(), *headers)
    reply = gw.openai().chat.completions.create(model="gpt-4o-mini", messages=SHORT)
    assert reply.choices[0].message.content == "Hello world"


# -- 4: redirects ------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_redirect_is_an_upstream_error_without_its_body(
    gw: InProcessGateway, upstream: RawUpstream, stream: bool
) -> None:
    """A 307 whose body echoed the request's Authorization header reached the client
    verbatim, the provider key in it. A 3xx is an upstream error now: OpenAI's error
    shape, nothing of the upstream's body or Location, not booked."""

    def redirect(headers: dict[str, str], body: Any) -> bytes:
        echo = {"moved": True, "authorization": headers.get("authorization")}
        return json_reply(
            echo,
            b"location: http://elsewhere.example/v1/chat/completions",
            status=307,
            reason=b"Temporary Redirect",
        )

    upstream.script = redirect
    with pytest.raises(openai.APIStatusError) as info:
        gw.openai().chat.completions.create(
            model="gpt-4o-mini",
            messages=SHORT,
            stream=stream,
        )
    assert upstream.seen[0]["headers"]["authorization"] == f"Bearer {PROVIDER_KEY}"
    response = info.value.response
    assert response.status_code == 502
    assert PROVIDER_KEY not in response.text and "elsewhere" not in response.text
    assert "location" not in response.headers
    assert response.json()["error"]["code"] == "upstream_redirected"
    assert ledger(gw) == []
