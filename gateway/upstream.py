"""The one seam to the upstream provider: a single httpx client, owned by the lifespan.

Network failures are translated here, once, into the gateway's errors naming the
upstream; a response is always closed by whoever holds it (see `StreamRelay`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable

import httpx

from gateway.errors import GatewayError, InvalidRequest, UpstreamTimeout, UpstreamUnreachable

# Never forwarded in either direction (RFC 9110 7.6.1), plus what the gateway recomputes.
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
        "content-encoding",
        "accept-encoding",
    }
)
# The app's own headers: they steer the gateway and never reach the provider.
APP_HEADERS = frozenset(
    {
        "authorization",
        "x-conversation-id",
        "x-customer-id",
        "x-channel",
        "x-customer-scopes",
        "x-conversation-class",
        "x-subject-tags",
        "x-operational-state",
        "cookie",
        # The provider account is the gateway's to choose, not the tenant's.
        "openai-organization",
        "openai-project",
    }
)
# Never relayed back: they describe the gateway's provider account or set its cookies.
PROVIDER_ONLY = frozenset({"set-cookie", "openai-organization", "openai-project"})


class Upstream:
    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        *,
        connect_timeout_s: float,
        timeout_s: float,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._auth = f"Bearer {api_key}".encode() if api_key else None
        self._client = httpx.AsyncClient(
            timeout=httpx.Timeout(timeout_s, connect=connect_timeout_s),
            limits=httpx.Limits(max_connections=512, max_keepalive_connections=128),
            transport=transport,
        )

    def url(self, path: str, query: bytes) -> str:
        """'/v1/chat/completions' -> base_url + '/chat/completions' (base ends in /v1)."""
        tail = path.removeprefix("/v1")
        return f"{self.base_url}{tail}" + (f"?{query.decode('latin-1')}" if query else "")

    def headers(self, client_headers: Iterable[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
        pairs = list(client_headers)
        named = _connection_tokens(pairs)
        out = [
            (k, v)
            for k, v in pairs
            if (name := k.decode("latin-1").lower()) not in HOP_BY_HOP
            and name not in APP_HEADERS
            and name not in named
        ]
        out.append((b"accept-encoding", b"identity"))
        if self._auth is not None:
            out.append((b"authorization", self._auth))
        return out

    async def send(
        self, method: str, url: str, headers: list[tuple[bytes, bytes]], body: bytes
    ) -> httpx.Response:
        """Send and return once the response head arrived; the caller closes the response."""
        try:
            request = self._client.build_request(method, url, headers=headers, content=body)
        except httpx.InvalidURL as exc:
            raise InvalidRequest(
                "The request path cannot be forwarded.", code="invalid_path"
            ) from exc
        try:
            return await self._client.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise self._translate(exc) from exc

    async def read(self, response: httpx.Response) -> bytes:
        try:
            return await response.aread()
        except httpx.HTTPError as exc:
            raise self._translate(exc) from exc
        finally:
            await response.aclose()

    async def iter_bytes(self, response: httpx.Response) -> AsyncIterator[bytes]:
        try:
            async for chunk in response.aiter_raw():
                yield chunk
        except httpx.HTTPError as exc:
            raise self._translate(exc) from exc

    def _translate(self, exc: httpx.HTTPError) -> GatewayError:
        error: GatewayError
        if isinstance(exc, httpx.TimeoutException):
            error = UpstreamTimeout(f"upstream {self.base_url} timed out ({type(exc).__name__})")
        else:
            error = UpstreamUnreachable(
                f"upstream {self.base_url} unreachable or failed ({type(exc).__name__})"
            )
        # Past connecting, the request may have been processed: the caller books an estimate.
        error.reached_upstream = not isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout)
        return error

    async def aclose(self) -> None:
        await self._client.aclose()


def response_headers(headers: httpx.Headers) -> list[tuple[bytes, bytes]]:
    named = _connection_tokens(headers.raw)
    return [
        (k, v)
        for k, v in headers.raw
        if (name := k.decode("latin-1").lower()) not in HOP_BY_HOP
        and name not in PROVIDER_ONLY
        and name not in named
    ]


def _connection_tokens(pairs: Iterable[tuple[bytes, bytes]]) -> set[str]:
    """Headers a `Connection:` header names are hop-by-hop too (RFC 9110 7.6.1)."""
    named: set[str] = set()
    for key, value in pairs:
        if key.lower() == b"connection":
            named.update(t.strip().lower() for t in value.decode("latin-1").split(","))
    return named
