"""Plain ASGI responses: upstream bytes relayed as they are, and OpenAI-style errors."""

from __future__ import annotations

from starlette.types import Receive, Scope, Send

from gateway.errors import GatewayError


class RawResponse:
    """A complete response whose headers are already in ASGI form."""

    def __init__(self, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
        self.status = status
        self.headers = [*headers, (b"content-length", str(len(body)).encode())]
        self.body = body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status, "headers": self.headers})
        await send({"type": "http.response.body", "body": self.body})


JSON = (b"content-type", b"application/json")


def error_response(exc: GatewayError) -> RawResponse:
    return RawResponse(exc.status, [JSON, *exc.headers()], exc.body())


def json_response(body: bytes, status: int = 200) -> RawResponse:
    return RawResponse(status, [JSON], body)
