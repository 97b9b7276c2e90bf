"""Relaying a server-sent-event stream chunk by chunk while reading its usage.

The gateway asks the upstream for `stream_options.include_usage` even when the client
did not; `UsageTap` then hides what the client did not ask for (the usage-only chunk
and the `"usage": null` field on every other chunk), so the client gets exactly the
chunks it would have got from the upstream. Events are only scanned, not parsed,
unless they mention usage: the per-chunk cost stays constant.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
import orjson
from starlette.types import Receive, Scope, Send

from gateway.errors import GatewayError, UpstreamReplyTooLarge
from gateway.ledger.usage import web_searches_made
from gateway.proxy.reply_text import generated_delta, message_texts

log = logging.getLogger("gateway.proxy.streaming")
# After `[DONE]`, what is read of the rest of an upstream's body (its chunked terminator)
# so its connection can be reused: at most this long and this much.
DRAIN_S = 0.25
DRAIN_BYTES = 64 * 1024

# One event past `limits.max_reply_bytes` (this by default) with no end in sight: an
# upstream that never sends the blank line would otherwise grow the process without end.
MAX_EVENT_BYTES = 16 * 1024 * 1024
_DONE = b"data: [DONE]"
# Upstream bytes relayed (about 60 chat chunks) before the relay lets the event loop run
# other tasks: neither the upstream's buffered bytes nor the client's send make it wait
# when both keep up, so one fast stream ran through up to 1 MiB of events (the
# transport's buffer) while every other request on the loop waited.
_TURN_BYTES = 16 * 1024
# A choice's finish_reason that ends it: a string, neither empty nor "null" (SGLang,
# older Ollama and some hosted servers send "" on every chunk; KoboldCpp sent "null").
_FINISHED = re.compile(rb'"finish_reason"\s*:\s*"(?!"|null")')
# What a stream's end holds back until the call is booked: its last chunks and [DONE].
# More than this after a finish_reason is no end: what was held goes on, as it came.
_HOLD_BYTES = 64 * 1024
_USAGE_NULL = re.compile(rb'\s*,\s*"usage"\s*:\s*null|"usage"\s*:\s*null\s*,\s*')


def is_event_stream(content_type: str) -> bool:
    """Whether a Content-Type names an event stream: media types are case-insensitive
    and may carry parameters (`Text/Event-Stream; charset=utf-8`)."""
    return content_type.partition(";")[0].strip().lower() == "text/event-stream"


# How an event stream's body begins (after any blank lines or a byte-order mark): a
# field or a comment.
_SSE_STARTS = (b"data:", b":", b"event:", b"id:", b"retry:")


def reads_as_events(start: bytes) -> bool:
    """Whether a body beginning with `start` is an event stream, whatever its label."""
    return start.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(_SSE_STARTS)


def _event_end(buffer: bytes | bytearray, start: int, searched: int = 0) -> int:
    """End (exclusive) of the event beginning at `start`, or -1 if it is incomplete.
    Searches only as far as the first blank line, so many events cost linear time; and
    not the first `searched` bytes, known to hold none (an event fed in many pieces)."""
    at = max(start, searched - 3)  # a blank line may begin in the bytes searched
    lf = buffer.find(b"\n\n", at)
    crlf = buffer.find(b"\r\n\r\n", at, lf + 4 if lf >= 0 else len(buffer))
    if crlf >= 0 and (lf < 0 or crlf < lf):
        return crlf + 4
    return lf + 2 if lf >= 0 else -1


def _event_json(event: bytes) -> Any:
    data = b"".join(line[5:].lstrip() for line in event.splitlines() if line.startswith(b"data:"))
    if not data or data == b"[DONE]":
        return None
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return None


def _one_line_json(event: bytes) -> bool:
    """Whether `event` is one `data: {...}` line and its blank line, as (nearly) every
    event of a chat stream is: its JSON is then `event[6:-2]`, as `_event_json` reads it."""
    return (
        event.startswith(b"data: {")
        and event.endswith(b"}\n\n")
        and event.find(b"\n") == len(event) - 2
        and b"\r" not in event
    )


def _finished(event: bytes) -> bool:
    """A finish_reason that ends a choice in `event` (`_FINISHED`); a chunk whose every
    finish_reason is `null`, as every chunk but the last is, costs two byte counts."""
    n = event.count(b'"finish_reason"')
    return bool(n) and event.count(b'"finish_reason":null') != n and bool(_FINISHED.search(event))


_SPACE = b" \t\n\r\x0b\x0c"  # what `\s` matches in a bytes pattern


def _without_usage_null(event: bytes) -> bytes:
    r"""`_USAGE_NULL.sub(b"", event, count=1)`, found from the first `"usage"` on: every
    match holds one, so none starts before the spaces and comma in front of the first.
    (The pattern begins with `\s*`: searched from the start, it cost 10 µs an event.)"""
    at = event.find(b'"usage"')
    if at < 0:
        return event
    if (
        at >= 2
        and event[at - 1] == 0x2C  # ","
        and event[at - 2] not in _SPACE
        and event.startswith(b'"usage":null', at)
    ):
        return event[: at - 1] + event[at + 12 :]  # `,"usage":null`, as most have it
    start = at
    while start and event[start - 1] in _SPACE:
        start -= 1
    if start and event[start - 1] == 0x2C:  # ","
        start -= 1
        while start and event[start - 1] in _SPACE:
            start -= 1
    found = _USAGE_NULL.match(event, start) or _USAGE_NULL.search(event, start)
    return event if found is None else event[: found.start()] + event[found.end() :]


class UsageTap:
    def __init__(
        self,
        hide_usage: bool,
        hold_on_finish: bool = True,
        max_event_bytes: int | None = None,
        rewrite: Callable[[bytes], bytes] | None = None,
    ) -> None:
        self.hide_usage = hide_usage
        # Each whole event passes through it first (what a reply echoes of the request
        # the gateway rewrote, gateway.proxy.cache_scope).
        self.rewrite = rewrite
        self.max_event_bytes = max_event_bytes or MAX_EVENT_BYTES
        # With n > 1 choices one finishing is not the end: hold only from [DONE] then.
        self.hold_on_finish = hold_on_finish
        self.usage: dict[str, Any] | None = None
        self.model: str | None = None
        self.service_tier: Any = None  # the tier that served it, as its usage event says
        self.web_searches: int | None = None  # a Responses stream's, once it completed
        # A chat stream's end was read: a choice's finish_reason, or [DONE].
        self.ended = False
        # `[DONE]` was read: nothing follows it, and the relay need not wait for the
        # upstream to close its stream (anything after it is dropped).
        self.done = False
        # The stream was relayed whole (set by StreamRelay before its `on_done`): the
        # upstream's reply reached its end and its stream closed cleanly, with the client
        # still there when the relay got to that end. False when the upstream broke off
        # or the client went first.
        self.whole = False
        self._buffer = bytearray()
        self._searched = 0  # bytes of the buffer known to hold no event's end
        # What a stream keeps is its generated text (at most `max_event_bytes` of it),
        # read from each data event as it passes (its one JSON parse), not its events.
        self._texts: list[str] = []  # every generated delta (streamed_text)
        self._text_chars = 0
        self._answer: list[str] | None = []  # choice 0's content; None: none to show
        self._held: list[bytes] = []
        self._held_bytes = 0

    def feed(self, chunk: bytes) -> bytes:
        """Take upstream bytes; return the bytes to send to the client now. Raises once
        an unfinished event holds more than `max_event_bytes` (the events before it were
        returned by the calls before)."""
        if len(self._buffer) > self.max_event_bytes:
            raise UpstreamReplyTooLarge(
                f"An event of the upstream's stream is larger than the gateway accepts "
                f"(limits.max_reply_bytes: {self.max_event_bytes} bytes): the stream was cut "
                "there."
            )
        if (
            not self._buffer
            and not self.done
            and chunk.find(b"\n") == len(chunk) - 2 > 0
            and chunk[-1] == 0x0A
        ):  # one line and a blank line: one whole event, as most chunks are; no copies
            return self._hold_the_end(self._take(chunk))
        self._buffer += chunk
        out = []
        start = 0
        # (an event fed in many pieces is searched once, not from its start at each)
        while not self.done and (end := _event_end(self._buffer, start, self._searched)) >= 0:
            kept = self._hold_the_end(self._take(bytes(self._buffer[start:end])))
            if kept:
                out.append(kept)
            start = end
        del self._buffer[: len(self._buffer) if self.done else start]
        self._searched = len(self._buffer)
        return b"".join(out)

    def finish(self) -> bytes:
        """The held-back end of the stream, to send once the call is booked."""
        rest = bytes(self._buffer)
        self._buffer.clear()
        self._searched = 0
        tail = self._take(rest) if rest.strip() else rest
        self._note_end(rest)
        return b"".join(self._held) + tail

    def _note_end(self, event: bytes) -> tuple[bool, bool]:
        """(a finish_reason, [DONE]) in `event`; either marks the stream's end read."""
        finished = _finished(event)
        done = event.startswith(_DONE)
        self.ended = self.ended or finished or done
        self.done = self.done or done
        return finished, done

    def _hold_the_end(self, event: bytes) -> bytes:
        # A client takes a finish_reason or [DONE] as "complete": from the first of them
        # on, events wait until the call is booked (they follow each other closely).
        finished, done = self._note_end(event)
        if self._held or done or (self.hold_on_finish and finished):
            self._held.append(event)
            self._held_bytes += len(event)
            if self._held_bytes <= _HOLD_BYTES or self.done:
                return b""
            held = b"".join(self._held)  # chunks still coming: relayed, not held whole
            self._held.clear()
            self._held_bytes = 0
            return held
        return event

    def _take(self, event: bytes) -> bytes:
        return self._process(event if self.rewrite is None else self.rewrite(event))

    def _process(self, event: bytes) -> bytes:
        """The event as the client gets it; its usage, model and texts read on the way.
        A one-line event is parsed once, and its texts read from that parse; any other
        is read as it leaves (`_keep`), as the client gets it."""
        if _one_line_json(event):
            try:
                obj = orjson.loads(event[6:-2])
            except orjson.JSONDecodeError:
                return event
            if not isinstance(obj, dict):
                return event
            if b'"usage"' in event and not (event := self._usage(event, obj)):
                return event
            self._read(obj)
            return event
        usage = b'"usage"' in event and isinstance(obj := _event_json(event), dict)
        if usage and not (event := self._usage(event, obj)):
            return event  # the usage-only chunk, hidden
        self._keep(event)
        return event

    def _usage(self, event: bytes, obj: dict[str, Any]) -> bytes:
        """Reads the usage an event holds; the event without what the client did not ask
        for: nothing of the usage-only chunk, no `"usage": null` (one member of one line
        of a JSON object taken out: what is read of it is the same)."""
        usage = obj.get("usage")
        holder = obj
        if usage is None and isinstance(obj.get("response"), dict):  # Responses API events
            holder = obj["response"]
            usage = holder.get("usage")
        if isinstance(usage, dict):
            self.usage = usage
            self.model = holder.get("model") if isinstance(holder.get("model"), str) else None
            self.service_tier = holder.get("service_tier")
            if holder is not obj:
                self.web_searches = web_searches_made(holder)
        if not self.hide_usage:
            return event
        if isinstance(usage, dict) and holder is obj:
            if not obj.get("choices"):
                return b""  # the usage-only chunk the client did not ask for
            del obj["usage"]
            return b"data: " + orjson.dumps(obj) + b"\n\n"
        if usage is None:
            return _without_usage_null(event)
        return event

    def _keep(self, event: bytes) -> None:
        """Reads a data event's texts; a comment or keep-alive holds none."""
        if b"data:" not in event or event.startswith(_DONE):
            return
        obj = _event_json(event)
        if isinstance(obj, dict):
            self._read(obj)

    def _read(self, obj: dict[str, Any]) -> None:
        """Reads one event's generated text and what it adds to the answer."""
        choices = obj.get("choices")
        if (
            type(choices) is list
            and len(choices) == 1
            and type(choice := choices[0]) is dict
            and type(delta := choice.get("delta")) is dict
            and len(delta) <= 2
            and type(content := delta.get("content")) is str
            and (len(delta) == 1 or "role" in delta)
            and "text" not in choice
            and "type" not in obj
        ):
            # A chat chunk of one choice's content (and role), as most are.
            self._add_text(content)
            if self._answer is not None:
                if choice.get("index", 0) != 0:
                    self._answer = None
                elif self._text_chars <= self.max_event_bytes:
                    self._answer.append(content)
            return
        self._read_texts(obj)
        if self._answer is not None:
            self._read_answer(obj, self._answer)

    def _add_text(self, text: str) -> None:
        if self._text_chars <= self.max_event_bytes:  # past that, estimates are capped
            self._texts.append(text)
            self._text_chars += len(text)

    def _read_texts(self, obj: dict[str, Any]) -> None:
        if generated_delta(obj.get("type")) and isinstance(obj.get("delta"), str):
            self._add_text(obj["delta"])  # Responses API: text, arguments, reasoning...
        for choice in obj.get("choices") or ():
            if not isinstance(choice, dict):
                continue
            if isinstance(choice.get("text"), str):  # legacy completions
                self._add_text(choice["text"])
            if isinstance(choice.get("delta"), dict):
                for text in message_texts(choice["delta"]):
                    self._add_text(text)

    def _read_answer(self, obj: dict[str, Any], parts: list[str]) -> None:
        for choice in obj.get("choices") or ():
            delta = choice.get("delta") if isinstance(choice, dict) else None
            if not isinstance(delta, dict):
                continue
            if choice.get("index", 0) != 0 or delta.get("tool_calls"):
                self._answer = None
                return
            if isinstance(delta.get("content"), str) and self._text_chars <= self.max_event_bytes:
                parts.append(delta["content"])

    def streamed_text(self) -> str:
        """Every content/reasoning/tool-argument delta (or completion text) seen so far,
        for an estimate."""
        return "".join(self._texts)

    def answer_text(self) -> str:
        """The content the customer was shown: choice 0's content deltas; "" when the
        stream had several choices or called the app's tools (reasoning never counts)."""
        return "".join(self._answer or ())


class StreamRelay:
    """ASGI response: relays upstream bytes through a `UsageTap` as they arrive.

    `on_done(tap)` books the call. It runs exactly once, shielded from cancellation,
    after the upstream response is closed: before the end of the stream (finish_reason,
    `[DONE]`) is sent when the stream completes (the upstream closed it, or `[DONE]` was
    read: the upstream's connection is closed then), so a client that saw the end is booked; or
    as soon as the relay stops when the client disconnects or the upstream breaks off.
    `tap.whole` tells them apart: True only in the first case, and only once the end
    (a finish_reason or `[DONE]`) was read.
    """

    def __init__(
        self,
        status: int,
        headers: list[tuple[bytes, bytes]],
        chunks: AsyncIterator[bytes],
        close_upstream: Callable[[], Awaitable[None]],
        tap: UsageTap,
        on_done: Callable[[UsageTap], Awaitable[None]],
    ) -> None:
        self.status = status
        self.headers = headers
        self._chunks = chunks
        self._close_upstream = close_upstream
        self.tap = tap
        self._on_done = on_done
        self._settled = False

    async def _settle(self) -> None:
        if not self._settled:
            self._settled = True
            with anyio.CancelScope(shield=True):
                try:
                    await self._close_upstream()
                finally:  # the booking (and the reservation's end) must not be skipped
                    await self._on_done(self.tap)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Relays until the stream ends or the client goes: a watcher task waits for the
        disconnect and cancels the relay (one plain task per stream, not a task group)."""
        relay = asyncio.current_task()
        assert relay is not None
        state = {"relaying": True, "gone": False}

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            if state["relaying"]:
                state["gone"] = True
                relay.cancel()

        watcher: asyncio.Task[None] | None = None
        try:
            await send(
                {"type": "http.response.start", "status": self.status, "headers": self.headers}
            )
            watcher = asyncio.get_running_loop().create_task(watch())
            tail = None
            try:
                tail = await self._relay(send)
            except asyncio.CancelledError:
                # Ours (the client went): the relay just stops. Anyone else's: it stands.
                if not state["gone"] or relay.uncancel() > 0:
                    raise
            finally:
                state["relaying"] = False
            await self._settle()
            if tail is not None:
                await send({"type": "http.response.body", "body": tail, "more_body": False})
        finally:
            if watcher is not None:
                watcher.cancel()
            await self._settle()

    async def _drained(self) -> bool:
        """After `[DONE]`: the rest of the upstream's body read (its chunked terminator,
        the next packet or two) within DRAIN_S and DRAIN_BYTES, so its connection is
        whole and goes back to the pool; whether it ended. An upstream that keeps the
        stream open, or sends keep-alives after it, is cut: its connection closed."""
        read = 0
        try:
            async with asyncio.timeout(DRAIN_S):
                async for chunk in self._chunks:
                    read += len(chunk)
                    if read > DRAIN_BYTES:
                        return False
        except (TimeoutError, GatewayError):
            return False
        return True

    async def _relay(self, send: Send) -> bytes | None:
        """Relays the upstream's chunks; returns the stream's end to send once the call is
        booked, or None when the upstream broke off. (The status is sent already: such
        a stream ends without its final chunk, so the server drops the connection and
        the client sees a broken stream, not a complete-looking truncated reply.)"""
        turn = 0  # upstream bytes relayed since the relay last let other tasks run
        try:
            async for chunk in self._chunks:
                for at in range(0, len(chunk), _TURN_BYTES):
                    piece = chunk[at : at + _TURN_BYTES] if len(chunk) > _TURN_BYTES else chunk
                    out = self.tap.feed(piece)
                    if out:
                        await send({"type": "http.response.body", "body": out, "more_body": True})
                    if self.tap.done:
                        break
                    turn += len(piece)
                    if turn >= _TURN_BYTES:
                        turn = 0
                        await asyncio.sleep(0)
                if self.tap.done:
                    # The end: settled now, not when the upstream closes its stream (one
                    # that keeps it open, or sends keep-alives after it, would hold the
                    # client's end and the booking until its timeout). `_settle` closes it.
                    break
        except GatewayError as exc:
            log.warning("upstream stream broke off: %s", exc.message)
            return None
        # left at [DONE] with more coming: the iterator ends before its response closes
        aclose = getattr(self._chunks, "aclose", None)
        if self.tap.done and not await self._drained() and aclose is not None:
            await aclose()
        tail = self.tap.finish()
        # Reached with the client still there (its leaving cancels the relay): all but
        # the held end was sent to it, and the end goes once the call is booked.
        self.tap.whole = self.tap.ended
        return tail
