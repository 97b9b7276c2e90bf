"""The lean upstream transport against a raw asyncio HTTP server that misbehaves on cue."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterator

import httpx
import pytest

from gateway.proxy.transport import HTTP11Transport
from tests.servers import free_port

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return await reader.readexactly(length)


def run(
    handler: Handler,
    scenario: Callable[[str, HTTP11Transport], Awaitable[None]],
    read_timeout: float = 5,
) -> None:
    handlers: set[asyncio.Task[None]] = set()

    async def closing(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        handlers.add(task)
        try:
            await handler(reader, writer)
        finally:
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(closing, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        transport = HTTP11Transport(connect_timeout=2, read_timeout=read_timeout)
        try:
            await scenario(f"http://127.0.0.1:{port}", transport)
        finally:
            await transport.aclose()
            server.close()
            for task in handlers:
                task.cancel()
            await asyncio.gather(*handlers, return_exceptions=True)
            await server.wait_closed()

    asyncio.run(main())


async def close_after_each_response(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    body = await read_request(reader)
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
    await writer.drain()
    writer.close()  # no "Connection: close": the client believes it may keep the connection


def test_a_connection_the_server_closed_is_not_reused() -> None:
    async def scenario(url: str, transport: HTTP11Transport) -> None:
        async with httpx.AsyncClient(transport=transport) as client:
            for n in range(5):
                response = await client.post(url + "/echo", content=f"hello {n}".encode())
                assert response.text == f"hello {n}"
                await asyncio.sleep(0.01)

    run(close_after_each_response, scenario)


connections: list[asyncio.StreamWriter] = []


async def keep_alive(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    connections.append(writer)
    while True:
        try:
            body = await read_request(reader)
        except asyncio.IncompleteReadError:
            return
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        await writer.drain()


def test_a_connection_idle_past_its_expiry_is_not_reused() -> None:
    connections.clear()

    async def scenario(url: str, transport: HTTP11Transport) -> None:
        transport.keepalive_expiry = 0.2
        async with httpx.AsyncClient(transport=transport) as client:
            await client.post(url, content=b"a")
            await client.post(url, content=b"b")  # reused
            assert len(connections) == 1
            await asyncio.sleep(0.3)
            assert (await client.post(url, content=b"c")).text == "c"
            assert len(connections) == 2

    run(keep_alive, scenario)


def test_idle_time_counts_from_the_end_of_the_response_not_its_release() -> None:
    """The server's keep-alive clock starts once it has sent the response. A response held
    before its release (a slow stream client, a busy event loop) does not restart the
    pool's clock: that connection is nearer the server's close than it looks."""
    connections.clear()

    async def scenario(url: str, transport: HTTP11Transport) -> None:
        transport.keepalive_expiry = 0.2
        async with httpx.AsyncClient(transport=transport) as client:
            async with client.stream("POST", url, content=b"a") as response:
                await asyncio.sleep(0.3)  # held past the expiry, then read and released
                assert await response.aread() == b"a"
            assert (await client.post(url, content=b"b")).text == "b"
            assert len(connections) == 2

    run(keep_alive, scenario)


@contextlib.contextmanager
def closing_idle_connections(idle_s: float) -> Iterator[tuple[str, list[socket.socket]]]:
    """An echo server in threads of its own that closes a kept-alive connection idle for
    `idle_s`, as uvicorn does after 5 s: it runs on while the client's event loop is
    blocked. Yields its URL and the connections it accepted."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []

    def serve(conn: socket.socket) -> None:
        with conn, conn.makefile("rb") as reader:
            conn.settimeout(idle_s)
            try:
                while head := reader.readline():
                    length = 0
                    while (line := reader.readline()) not in (b"\r\n", b""):
                        if line.lower().startswith(b"content-length:"):
                            length = int(line.split(b":")[1])
                    body = reader.read(length)
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % length + body)
                    assert head.startswith(b"POST")
            except TimeoutError:
                return  # idle too long: closed

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return  # the listener closed
            accepted.append(conn)
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", accepted
    finally:
        listener.close()


def test_a_close_the_busy_event_loop_has_not_heard_of_is_not_written_into() -> None:
    """The server closed an idle kept-alive connection while this event loop was busy
    (the gateway under load): the close waits in the socket, unheard. A request written
    into that connection is lost (the gateway answered 502 upstream_unreachable), so the
    pool looks at the socket before it reuses one."""

    async def scenario(url: str) -> None:
        transport = HTTP11Transport(connect_timeout=2, read_timeout=5)  # expiry 4 s
        async with httpx.AsyncClient(transport=transport) as client:
            assert (await client.post(url, content=b"a")).text == "a"
            time.sleep(0.3)  # the loop busy while the server closes the connection
            assert (await client.post(url, content=b"b")).text == "b"

    with closing_idle_connections(idle_s=0.1) as (url, accepted):
        asyncio.run(scenario(url))
        assert len(accepted) == 2


async def odd_responses(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    head = await reader.readuntil(b"\r\n\r\n")
    if head.startswith(b"HEAD"):
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n")
        await writer.drain()
        await asyncio.sleep(5)
    elif b"/eof" in head:
        writer.write(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end")
    else:
        writer.write(
            b"HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n"
            b"HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok"
        )
    await writer.drain()


def test_head_eof_bodies_and_informational_responses() -> None:
    async def scenario(url: str, transport: HTTP11Transport) -> None:
        async with httpx.AsyncClient(transport=transport) as client:
            head = await client.head(url)
            assert head.status_code == 200 and head.content == b""
            assert (await client.get(url + "/eof")).text == "until the end"
            hinted = await client.get(url + "/hint")
            assert (hinted.status_code, hinted.text) == (201, "ok")

    run(odd_responses, scenario, read_timeout=2)


async def chunked(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while True:
        try:
            await read_request(reader)
        except asyncio.IncompleteReadError:
            return
        writer.write(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
            b"Content-Type: text/event-stream\r\n\r\n"
        )
        for part in (b"data: 1\n\n", b"data: 2\n\n"):
            writer.write(b"%x\r\n%s\r\n" % (len(part), part))
            await writer.drain()
            await asyncio.sleep(0.01)
        writer.write(b"0\r\n\r\n")
        await writer.drain()


def test_chunked_bodies_arrive_chunk_by_chunk_and_connections_are_kept() -> None:
    async def scenario(url: str, transport: HTTP11Transport) -> None:
        async with httpx.AsyncClient(transport=transport) as client:
            for _ in range(3):
                async with client.stream("POST", url, content=b"x") as response:
                    assert response.headers["content-type"] == "text/event-stream"
                    parts = [p async for p in response.aiter_raw()]
                assert parts == [b"data: 1\n\n", b"data: 2\n\n"]
            assert len(transport._idle[(b"http", b"127.0.0.1", int(url.rsplit(":", 1)[1]))]) == 1

    run(chunked, scenario)


async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await read_request(reader)
    await asyncio.sleep(10)


async def cut_mid_body(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await read_request(reader)
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part")
    await writer.drain()
    writer.close()


def test_failures_are_httpx_errors() -> None:
    async def timeout(url: str, transport: HTTP11Transport) -> None:
        async with httpx.AsyncClient(transport=transport) as client:
            with pytest.raises(httpx.ReadTimeout):
                await client.post(url, content=b"x")

    run(silent, timeout, read_timeout=0.2)

    async def cut(url: str, transport: HTTP11Transport) -> None:
        async with httpx.AsyncClient(transport=transport) as client:
            with pytest.raises(httpx.RemoteProtocolError):
                await client.post(url, content=b"x")

    run(cut_mid_body, cut)

    async def refused() -> None:
        transport = HTTP11Transport(connect_timeout=1, read_timeout=1)
        async with httpx.AsyncClient(transport=transport) as client:
            with pytest.raises(httpx.ConnectError):
                await client.get(f"http://127.0.0.1:{free_port()}/")

    asyncio.run(refused())
