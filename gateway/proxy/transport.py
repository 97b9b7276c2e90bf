"""A lean HTTP/1.1 transport for httpx: keep-alive pool, C parser, no per-request scans.

httpx's default pool (httpcore) checks every pooled connection on every request, with
a readability syscall each; at 64 concurrent requests that scan costs more CPU than the
rest of the gateway. Here a connection is an asyncio Protocol parsed by httptools (the
parser uvicorn uses): the event loop tells it when the server closes it, so the idle pool
is a plain stack and checkout is O(1): one readability check of the one connection taken
(see `_Connection.unheard_input`), never a scan of the pool.

Errors are httpx's own (`ConnectError`, `ConnectTimeout`, `ReadTimeout`,
`RemoteProtocolError`, ...), so the upstream seam translates them as for any transport.
"""

from __future__ import annotations

import asyncio
import select
import ssl
from collections import deque
from collections.abc import AsyncIterator
from typing import cast

import httptools
import httpx

_PAUSE_AT = 1 << 20  # stop reading from a server that is ahead of its client by 1 MiB
# A response head larger than this (status line and headers, with any 1xx heads before
# it), or with more header lines, fails as malformed: httptools has no limit, and an
# upstream sending endless headers grew the process by their size. httpx's own pool
# (httpcore, over h11) allows the same 100 KiB.
MAX_HEAD_BYTES = 100 * 1024
MAX_HEADERS = 500
_Key = tuple[bytes, bytes, int]


class _HeadTooLarge(Exception):
    """Raised in the parser's callback: past `MAX_HEAD_BYTES` or `MAX_HEADERS`."""


def _head_too_large() -> httpx.RemoteProtocolError:
    return httpx.RemoteProtocolError(
        f"upstream response head larger than {MAX_HEAD_BYTES} bytes or {MAX_HEADERS} headers"
    )


class _Connection(asyncio.Protocol):
    """One HTTP/1.1 connection; one request at a time."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self._fd = -1
        self.closed = False
        self._parser = httptools.HttpResponseParser(self)
        self._head: asyncio.Future[None] | None = None
        self._headers: list[tuple[bytes, bytes]] = []
        self._chunks: deque[bytes] = deque()
        self._buffered = 0
        self._data = asyncio.Event()
        self.complete = False
        self.keep_alive = False
        self.error: Exception | None = None
        self.status = 0
        self.idle_since = 0.0
        self._head_only = False
        self._until_eof = False
        self._informational = False
        self._in_head = False  # reading a response head: its bytes are counted
        self._head_bytes = 0  # bytes read since the request was sent, until its head ended
        self._header_bytes = 0  # the headers parsed so far, as bytes

    # asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports quack like asyncio.Transport without subclassing it.
        self.transport = cast(asyncio.Transport, transport)
        sock = transport.get_extra_info("socket")
        self._fd = sock.fileno() if sock is not None else -1

    def data_received(self, data: bytes) -> None:
        if self._in_head:
            self._head_bytes += len(data)
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as exc:
            if isinstance(exc.__context__, _HeadTooLarge):
                self._fail(_head_too_large())
            else:
                self._fail(httpx.RemoteProtocolError(f"malformed response from upstream: {exc}"))
            return
        # httptools keeps a header line it has not finished, however long: a head still
        # unfinished past the limit is refused before the next read adds to it.
        if self._in_head and self._head_bytes > MAX_HEAD_BYTES:
            self._fail(_head_too_large())

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if not self.complete and self._until_eof:
            self.complete = True  # a body delimited by the end of the connection
            self._data.set()
        elif not self.complete:
            self._fail(httpx.RemoteProtocolError("upstream closed the connection mid-response"))

    def _fail(self, error: Exception) -> None:
        self.closed = True
        if self.error is None:
            self.error = error
        if self._head is not None and not self._head.done():
            self._head.set_exception(error)
        self._data.set()
        if self.transport is not None:
            self.transport.close()

    # httptools callbacks
    def on_header(self, name: bytes, value: bytes) -> None:
        # Counted as they are parsed too: one read may hold a whole head past the limit.
        self._header_bytes += len(name) + len(value) + 4
        if self._header_bytes > MAX_HEAD_BYTES or len(self._headers) >= MAX_HEADERS:
            raise _HeadTooLarge  # stops the parser: `data_received` fails the response
        self._headers.append((name, value))

    def on_headers_complete(self) -> None:
        status = self._parser.get_status_code()
        if 100 <= status < 200 and status != 101:
            self._informational = True  # 100 Continue, 103 Early Hints: not the answer
            self._headers = []
            return
        self.status = status
        self._in_head = False
        names = {name.lower() for name, _ in self._headers}
        self._until_eof = (
            b"content-length" not in names
            and b"transfer-encoding" not in names
            and status not in (204, 304)
            and not self._head_only
        )
        if self._head is not None and not self._head.done():
            self._head.set_result(None)
        if self._head_only:
            self.complete, self.keep_alive = True, False  # never reuse after a HEAD
            self._data.set()

    def on_body(self, body: bytes) -> None:
        self._chunks.append(body)
        self._buffered += len(body)
        self._data.set()
        if self._buffered > _PAUSE_AT and self.transport is not None:
            self.transport.pause_reading()

    def on_message_complete(self) -> None:
        if self._informational:
            self._informational = False
            return
        self.complete = True
        # Only valid here: once the message is done the parser forgets it.
        self.keep_alive = self._parser.should_keep_alive()
        # The server's keep-alive clock starts about now (uvicorn's when it has sent the
        # response), not when the consumer is done with the body and releases it.
        self.idle_since = asyncio.get_running_loop().time()
        self._data.set()

    # used by the transport
    def start(self, payload: bytes, head_only: bool = False) -> asyncio.Future[None]:
        if self.closed or self.transport is None or self.transport.is_closing():
            raise httpx.RemoteProtocolError("upstream closed the kept-alive connection")
        self._head = asyncio.get_running_loop().create_future()
        self._head_only = head_only
        self._until_eof = False
        self._informational = False
        self.transport.resume_reading()  # a previous consumer may have left it paused
        self._headers = []
        self._in_head, self._head_bytes, self._header_bytes = True, 0, 0
        self._chunks.clear()
        self._buffered = 0
        self.complete = False
        self.keep_alive = False
        assert self.transport is not None
        self.transport.write(payload)
        return self._head

    @property
    def headers(self) -> list[tuple[bytes, bytes]]:
        return self._headers

    def reusable(self) -> bool:
        return self.complete and self.keep_alive and not self.closed

    def unheard_input(self) -> bool:
        """Whether this idle connection's socket holds something the event loop has not
        delivered yet: the server's close, most likely. A busy loop hears of a close late,
        and a request written into the closed connection is lost: so this looks at the
        socket itself (one poll, no wait) before the connection is reused."""
        if self._fd < 0:
            return False
        poller = select.poll()
        poller.register(self._fd, select.POLLIN | select.POLLPRI)
        return bool(poller.poll(0))

    async def body(self, read_timeout: float) -> AsyncIterator[bytes]:
        while True:
            while self._chunks:
                chunk = self._chunks.popleft()
                self._buffered -= len(chunk)
                if self.transport is not None and self._buffered < _PAUSE_AT // 2:
                    self.transport.resume_reading()
                yield chunk
            if self.complete:
                return
            if self.error is not None:
                raise self.error
            self._data.clear()
            try:
                async with asyncio.timeout(read_timeout):
                    await self._data.wait()
            except TimeoutError as exc:
                raise httpx.ReadTimeout("upstream sent nothing within the read timeout") from exc

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


class _ResponseStream(httpx.AsyncByteStream):
    def __init__(self, owner: HTTP11Transport, key: _Key, conn: _Connection) -> None:
        self._owner = owner
        self._key = key
        self._conn = conn
        self._done = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._conn.body(self._owner.read_timeout):
            yield chunk

    async def aclose(self) -> None:
        if not self._done:
            self._done = True
            self._owner.release(self._key, self._conn)


class HTTP11Transport(httpx.AsyncBaseTransport):
    def __init__(
        self,
        *,
        connect_timeout: float,
        read_timeout: float,
        max_idle_per_host: int = 256,
        keepalive_expiry: float = 4.0,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.keepalive_expiry = keepalive_expiry
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self._max_idle = max_idle_per_host
        self._ssl = ssl_context
        self._idle: dict[_Key, list[_Connection]] = {}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        key: _Key = (
            url.raw_scheme,
            url.raw_host,
            url.port or (443 if url.scheme == "https" else 80),
        )
        payload = _request_bytes(request, await request.aread())
        # No retry once the request is written: a POST the server may have processed must
        # not be sent twice. Stale connections are avoided instead (see `_checkout`).
        conn = self._checkout(key) or await self._connect(key)
        await self._send(conn, payload, request.method == "HEAD")
        return httpx.Response(
            conn.status,
            headers=conn.headers,
            stream=_ResponseStream(self, key, conn),
            extensions={"http_version": b"HTTP/1.1"},
        )

    async def _send(self, conn: _Connection, payload: bytes, head_only: bool) -> None:
        try:
            async with asyncio.timeout(self.read_timeout):
                await conn.start(payload, head_only)
        except TimeoutError as exc:
            conn.close()
            raise httpx.ReadTimeout("upstream sent no response head within the timeout") from exc
        except BaseException:
            conn.close()
            raise

    def _checkout(self, key: _Key) -> _Connection | None:
        """The most recently used live connection. One idle for longer than
        `keepalive_expiry` (counted from the end of its last response), or whose server
        has already closed it unheard, is closed instead: servers drop idle connections
        (uvicorn after 5 s), and a request written as they do would be lost."""
        idle = self._idle.get(key)
        now = asyncio.get_running_loop().time()
        while idle:
            conn = idle.pop()
            if (
                not conn.closed
                and now - conn.idle_since < self.keepalive_expiry
                and not conn.unheard_input()
            ):
                return conn
            conn.close()
        return None

    async def _connect(self, key: _Key) -> _Connection:
        scheme, host, port = key
        loop = asyncio.get_running_loop()
        tls = None
        if scheme == b"https":
            if self._ssl is None:
                self._ssl = httpx.create_ssl_context()
            tls = self._ssl
        try:
            async with asyncio.timeout(self.connect_timeout):
                _, conn = await loop.create_connection(
                    _Connection, host.decode("ascii"), port, ssl=tls
                )
        except TimeoutError as exc:
            raise httpx.ConnectTimeout(f"connecting to {host.decode()}:{port} timed out") from exc
        except OSError as exc:
            raise httpx.ConnectError(f"cannot connect to {host.decode()}:{port}: {exc}") from exc
        return conn

    def release(self, key: _Key, conn: _Connection) -> None:
        idle = self._idle.setdefault(key, [])
        if conn.reusable() and len(idle) < self._max_idle:
            idle.append(conn)
        else:
            conn.close()

    async def aclose(self) -> None:
        for idle in self._idle.values():
            for conn in idle:
                conn.close()
        self._idle.clear()


def _request_bytes(request: httpx.Request, body: bytes) -> bytes:
    target = request.url.raw_path
    lines = [request.method.encode("ascii") + b" " + target + b" HTTP/1.1"]
    lines += [name + b": " + value for name, value in request.headers.raw]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body
