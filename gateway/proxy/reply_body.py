"""Reading a reply whose kind its headers do not say (a stream asked for, sent without
`text/event-stream`): its first bytes tell an event stream from JSON; the rest is read
as `Upstream.read` reads a body, up to the reply limit."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx

from gateway.proxy.upstream import reply_too_large

SNIFFED = 8  # bytes past leading whitespace that tell an event stream from JSON


async def first_bytes(chunks: AsyncIterator[bytes]) -> bytes:
    """A body's first bytes: enough to tell an event stream from JSON, or all of it."""
    start = b""
    async for chunk in chunks:
        start += chunk
        if len(start.lstrip()) >= SNIFFED:
            break
    return start


async def chained(start: bytes, chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """The bytes read first, then the rest as they come."""
    yield start
    async for chunk in chunks:
        yield chunk


async def rest_of_reply(
    limit: int | None, response: httpx.Response, start: bytes, chunks: AsyncIterator[bytes]
) -> bytes:
    """The rest of a reply whose start was read: at most `limit` bytes (the upstream's
    `max_reply_bytes`); the response closed."""
    body = bytearray(start)
    try:
        async for chunk in chunks:
            if limit is not None and len(body) > limit:
                break
            body += chunk
        if limit is not None and len(body) > limit:
            raise reply_too_large(limit)
        return bytes(body)
    finally:
        await response.aclose()
