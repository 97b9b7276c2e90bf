"""The one seam to the upstream provider: a single httpx client, owned by the lifespan.

Network failures are translated here, once, into the gateway's errors naming the
upstream; a response is always closed by whoever holds it (see `StreamRelay`). Every
byte of a reply passes here on its way to the tenant, so here it loses what the tenant
may not see (gateway.proxy.upstream_errors): an error answer is rebuilt, and an error
object in a 2xx body or a stream's event is scrubbed as one, with the provider key.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import AsyncIterator, Callable, Iterable
from functools import lru_cache
from http.cookiejar import CookieJar, DefaultCookiePolicy
from urllib.parse import quote

import httpx

from gateway.errors import (
    GatewayError,
    InvalidRequest,
    UpstreamReplyTooLarge,
    UpstreamTimeout,
    UpstreamUnreachable,
)
from gateway.ops import tracing
from gateway.proxy.content_encoding import Undecodable, content_decoder
from gateway.proxy.request_log import REQUEST_ID
from gateway.proxy.streaming import MAX_EVENT_BYTES
from gateway.proxy.upstream_errors import (
    ERROR_BODY_LIMIT,
    StreamScrub,
    scrubbed_error,
    scrubbed_reply,
    withheld_anywhere,
)
from gateway.spend.hold import Reservation

# What a decoded request path may keep as it is when it is encoded again for the upstream.
_PATH_SAFE = "/:@!$&'()*+,;=-._~"

# Request headers forwarded to the provider: those that shape the call. Anything else
# (the app's own X-* headers, cookies, `api-key`, `x-api-key`, provider account headers)
# stays here: the provider hears only the gateway's key and the gateway's account.
FORWARDED = frozenset(
    {"content-type", "accept", "user-agent", "openai-beta", "openai-version", "idempotency-key"}
)


def _tenants_key(tenant: str, key: bytes) -> bytes:
    """An idempotency key scoped to its tenant: two tenants sending the same key (a
    counter, a request hash) must not be one call to the provider, which would answer
    the second with the first's response."""
    scope = hashlib.blake2b(tenant.encode(), digest_size=6).hexdigest().encode()
    return scope + b"-" + key


# The SDKs' own telemetry (os, runtime, retry count), and the test hooks of the built-in
# simulated upstream (gateway/dev/simulator.py), which a real provider ignores.
FORWARDED_PREFIXES = ("x-stainless-", "x-simulator-")
# Response headers relayed back. Not the provider's account, rate-limit or cookie headers
# (openai-organization, x-ratelimit-*, set-cookie), nor date/server, which uvicorn sets.
RELAYED = frozenset(
    {
        "content-type",
        "content-disposition",
        "cache-control",
        "retry-after",
        "x-request-id",
        "openai-processing-ms",
        "openai-version",
    }
)


class UpstreamReplyUnreadable(GatewayError):
    """A successful reply in a content-encoding the gateway cannot decode (`br`, `zstd`,
    ...: it asks for `identity`), or whose compressed bytes are corrupt."""

    status = 502
    type = "api_error"
    code = "upstream_reply_unreadable"
    reached_upstream = True  # the upstream answered: the call is booked as an estimate
    retries_help = False  # the upstream would send it so again, and bill it again


class UpstreamRedirected(GatewayError):
    """A 3xx answer: redirects are not followed (the provider key would go where the
    upstream says), nor relayed (its body may echo the request's headers)."""

    status = 502
    type = "api_error"
    code = "upstream_redirected"
    retries_help = False


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
        # How errors name the upstream: scheme, host and port. Never the credentials or
        # the path (which for some providers holds an account id).
        parsed = httpx.URL(self.base_url)
        self.display = f"{parsed.scheme}://{parsed.host}" + (
            f":{parsed.port}" if parsed.port else ""
        )
        # Scrubbed from an error object: the key and the URL's credentials. Withheld from
        # the rest of a reply: only the key and a password too long to be a word.
        self._secrets = tuple(
            s for s in (api_key, parsed.password, parsed.username) if s and len(s) >= 4
        )
        self._keys = withheld_anywhere(api_key, parsed.password)
        self._auth = f"Bearer {api_key}".encode() if api_key else None
        # Told each answer's status class ("2xx".."5xx", "timeout", "unreachable"): metrics.
        self.observe: Callable[[str], None] = lambda status_class: None
        # Requests go straight to the transport: the client's layers (auth, redirects,
        # cookies) have nothing to do for a proxy and cost per request.
        self._transport = transport
        self._client = httpx.AsyncClient(
            timeout=httpx.Timeout(timeout_s, connect=connect_timeout_s),
            limits=httpx.Limits(max_connections=512, max_keepalive_connections=128),
            transport=transport,
            # No cookie jar: a provider's cookies would be replayed on every tenant's calls.
            cookies=CookieJar(policy=DefaultCookiePolicy(allowed_domains=[])),
        )
        self._timeouts = self._client.timeout.as_dict()

    def url(self, path: str, query: bytes) -> str:
        """'/v1/chat/completions' -> base_url + '/chat/completions' (base ends in /v1).

        `path` is the decoded path the gateway checked: it is encoded again, so the
        upstream decodes it to that same path (`%252e` arrives as `%252e`, not `%2e`)."""
        tail = quote(path.removeprefix("/v1"), safe=_PATH_SAFE)
        return f"{self.base_url}{tail}" + (f"?{query.decode('latin-1')}" if query else "")

    def headers(
        self, client_headers: Iterable[tuple[bytes, bytes]], tenant: str = ""
    ) -> list[tuple[bytes, bytes]]:
        """The headers to forward; a client's `Idempotency-Key` is made the `tenant`'s
        own (every tenant shares the provider account, where a key names one call)."""
        pairs = list(client_headers)
        named = _connection_tokens(pairs)
        out = [
            (k, _tenants_key(tenant, v) if name == "idempotency-key" else v)
            for k, v in pairs
            if _forwarded(name := k.decode("latin-1").lower()) and name not in named
        ]
        out.append((b"accept-encoding", b"identity"))
        if (rid := REQUEST_ID.get()) != "-":  # the provider's logs name our request
            out.append((b"x-request-id", rid.encode()))
        if self._auth is not None:
            out.append((b"authorization", self._auth))
        return out

    async def send(
        self, method: str, url: str, headers: list[tuple[bytes, bytes]], body: bytes
    ) -> httpx.Response:
        """Send and return once the response head arrived; the caller closes the response."""
        try:
            request = self._request(method, url, headers, body)
        except httpx.InvalidURL as exc:
            raise InvalidRequest(
                "The request path cannot be forwarded.", code="invalid_path"
            ) from exc
        try:
            with tracing.span("upstream", method=method):
                if self._transport is not None:
                    response = await self._transport.handle_async_request(request)
                    response.request = request
                else:
                    response = await self._client.send(request, stream=True)
            self.observe(f"{response.status_code // 100}xx")
            if response.status_code >= 400:
                return await self._scrubbed(response)
            if response.status_code >= 300:
                await response.aclose()
                raise UpstreamRedirected(
                    f"upstream {self.display} answered {response.status_code} "
                    "(a redirect, which the gateway does not follow)"
                )
            if isinstance(content_decoder(response.headers), Undecodable):
                # Not relayed as a stream (no route streams a reply without a type): its
                # reading answers 502, booked as a reply the gateway could not read.
                del response.headers["content-type"]
            return response
        except httpx.HTTPError as exc:
            raise self._translate(exc) from exc

    def _request(
        self, method: str, url: str, headers: list[tuple[bytes, bytes]], body: bytes
    ) -> httpx.Request:
        """The request `build_request` would make. For the lean transport it is made
        directly (~12 µs against ~40): the URL parsed once per distinct URL, the client's
        default headers (Accept, Connection, ...) added where the call sets none."""
        if self._transport is None:
            return self._client.build_request(method, url, headers=headers, content=body)
        names = {k.lower() for k, _ in headers}
        defaults = [(k, v) for k, v in self._client.headers.raw if k.lower() not in names]
        return httpx.Request(
            method,
            _parsed_url(url),
            headers=[*defaults, *headers],
            content=body,
            extensions={"timeout": self._timeouts},
        )

    async def _scrubbed(self, response: httpx.Response) -> httpx.Response:
        """An error answer, read (up to ERROR_BODY_LIMIT) and rebuilt in OpenAI's error
        shape without the provider key or anything key-like: providers echo keys back."""
        head = bytearray()
        try:
            if not isinstance(content_decoder(response.headers), Undecodable):
                async for chunk in self._decoded(response):
                    head += chunk
                    if len(head) > ERROR_BODY_LIMIT:
                        break
        except UpstreamReplyUnreadable:
            head.clear()  # corrupt: the status alone speaks
        finally:
            await response.aclose()
        body = scrubbed_error(response.status_code, bytes(head), self._secrets)
        headers = [
            (k, v) for k, v in response_headers(response.headers) if k.lower() != b"content-type"
        ]
        return httpx.Response(
            response.status_code,
            headers=[*headers, (b"content-type", b"application/json")],
            content=body,
            request=response.request,
        )

    # Set from `limits.max_reply_bytes` by the runtime; None reads any size.
    max_reply_bytes: int | None = None

    def scrubbed(self, status: int, body: bytes) -> bytes:
        """An upstream's error body as the client may see it: the provider key and
        anything key-like withheld."""
        return scrubbed_error(status, body, self._secrets)

    async def read(self, response: httpx.Response, most: int | None = None) -> bytes:
        """A whole non-stream reply, held in memory: so at most `max_reply_bytes` of it (or
        `most`, when lower: the gateway's own calls know how long an answer can be). A
        larger one answers 502 (the call is booked as an estimate) instead of growing the
        process by its size. Its error objects scrubbed, the provider key withheld."""
        limit = self.max_reply_bytes
        if most is not None:
            limit = most if limit is None else min(limit, most)
        try:
            declared = response.headers.get("content-length", "")
            if limit is not None and declared.isdigit() and int(declared) > limit:
                raise reply_too_large(limit)
            body = bytearray()
            async for chunk in self._decoded(response):
                body += chunk
                if limit is not None and len(body) > limit:
                    raise reply_too_large(limit)
            return scrubbed_reply(bytes(body), self._secrets, self._keys)
        except httpx.HTTPError as exc:
            raise self._translate(exc) from exc
        finally:
            await response.aclose()

    async def iter_bytes(self, response: httpx.Response) -> AsyncIterator[bytes]:
        """A stream's bytes, decoded (gzip, deflate: an upstream may ignore the
        `accept-encoding: identity` the gateway sends), in whole events, each scrubbed
        (`StreamScrub`); a body that is no stream comes whole, at its end."""
        scrub = StreamScrub(self._secrets, self._keys, self.max_reply_bytes or MAX_EVENT_BYTES)
        try:
            async for chunk in self._decoded(response):
                if out := scrub.feed(chunk):
                    yield out
            if rest := scrub.finish():
                yield rest
        except httpx.HTTPError as exc:
            raise self._translate(exc) from exc

    async def _decoded(self, response: httpx.Response) -> AsyncIterator[bytes]:
        """The body's bytes as the upstream meant them: its content-encoding undone, in
        pieces of at most `PIECE` bytes. Raises `UpstreamReplyUnreadable` for an encoding
        the gateway cannot decode, or bytes that do not decode."""
        try:
            content = response.content  # read already: an error answer `_scrubbed` rebuilt
        except httpx.ResponseNotRead:
            pass
        else:
            yield content
            return
        decoder = content_decoder(response.headers)
        if isinstance(decoder, Undecodable):
            raise UpstreamReplyUnreadable(
                f"upstream {self.display} answered in a content-encoding the gateway "
                f"cannot decode ({response.headers.get('content-encoding', '')[:40]!r})."
            )
        if decoder is None:
            async for chunk in response.aiter_raw():
                yield chunk
            return
        try:
            async for chunk in response.aiter_raw():
                for piece in decoder.feed(chunk):
                    yield piece
        except zlib.error as exc:
            raise UpstreamReplyUnreadable(
                f"upstream {self.display} sent a compressed reply that does not decode."
            ) from exc

    def _translate(self, exc: httpx.HTTPError) -> GatewayError:
        error: GatewayError
        if isinstance(exc, httpx.TimeoutException):
            error = UpstreamTimeout(f"upstream {self.display} timed out ({type(exc).__name__})")
        else:
            error = UpstreamUnreachable(
                f"upstream {self.display} unreachable or failed ({type(exc).__name__})"
            )
        self.observe("timeout" if isinstance(error, UpstreamTimeout) else "unreachable")
        # Past connecting, the request may have been processed: the caller books an estimate.
        error.reached_upstream = not isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout)
        return error

    async def aclose(self) -> None:
        await self._client.aclose()


@lru_cache(maxsize=256)
def _parsed_url(url: str) -> httpx.URL:
    """Parsing a URL is most of what building a request costs; a gateway calls a few."""
    return httpx.URL(url)


def reply_too_large(limit: int) -> UpstreamReplyTooLarge:
    return UpstreamReplyTooLarge(
        f"The upstream's reply is larger than the gateway accepts "
        f"(limits.max_reply_bytes: {limit} bytes)."
    )


REASONING = ("o1", "o3", "o4", "gpt-5")


def ceiling_key(model: str) -> str:
    """The body key of a reply's output ceiling for `model`: reasoning models refuse
    `max_tokens` ("openai/o3-mini" is one too)."""
    reasoning = model.rsplit("/", 1)[-1].lower().startswith(REASONING)
    return "max_completion_tokens" if reasoning else "max_tokens"


def degraded_headers(spend: Reservation | None) -> list[tuple[bytes, bytes]]:
    """`x-gateway-degraded: FROM->TO` when the spend guard sent the call to a cheaper model."""
    if spend is None or not spend.degraded_from:
        return []
    return [(b"x-gateway-degraded", f"{spend.degraded_from}->{spend.model}".encode())]


def response_headers(headers: httpx.Headers) -> list[tuple[bytes, bytes]]:
    named = _connection_tokens(headers.raw)
    return [
        (k, v)
        for k, v in headers.raw
        if (name := k.decode("latin-1").lower()) in RELAYED and name not in named
    ]


def _forwarded(name: str) -> bool:
    return name in FORWARDED or name.startswith(FORWARDED_PREFIXES)


def _connection_tokens(pairs: Iterable[tuple[bytes, bytes]]) -> set[str]:
    """Headers a `Connection:` header names are hop-by-hop too (RFC 9110 7.6.1)."""
    named: set[str] = set()
    for key, value in pairs:
        if key.lower() == b"connection":
            named.update(t.strip().lower() for t in value.decode("latin-1").split(","))
    return named
