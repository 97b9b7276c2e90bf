"""The gateway's exception tree.

Every error a client can see is a `GatewayError`; each subclass fixes the HTTP status
and the OpenAI error `type`/`code`, so SDKs raise their usual exceptions. Low-level
errors (httpx, redis, sqlite) are translated into these in one place each, with
`raise ... from exc`; nothing else reaches the client.
"""

from __future__ import annotations

import orjson


class GatewayError(Exception):
    status = 500
    type = "api_error"
    code = "internal_error"
    reached_upstream = False  # set when the request may have been processed upstream
    # False: sending it again cannot pass. The OpenAI SDKs retry 408, 409, 429 and 5xx
    # answers twice by default, unless `x-should-retry: false` says so.
    retries_help = True

    def __init__(self, message: str, *, param: str | None = None, code: str | None = None):
        super().__init__(message)
        self.message = message
        self.param = param
        if code is not None:
            self.code = code

    def body(self) -> bytes:
        return error_body(self.message, self.type, self.code, self.param)

    def headers(self) -> list[tuple[bytes, bytes]]:
        """Response headers the error carries beside its body."""
        return [] if self.retries_help else [(b"x-should-retry", b"false")]


def error_body(message: str, type_: str, code: str | None, param: str | None = None) -> bytes:
    return orjson.dumps(
        {"error": {"message": message, "type": type_, "param": param, "code": code}}
    )


class InvalidRequest(GatewayError):
    status = 400
    type = "invalid_request_error"
    code = "invalid_request"


class AuthenticationFailed(GatewayError):
    status = 401
    type = "invalid_request_error"
    code = "invalid_api_key"


class NotFound(GatewayError):
    status = 404
    type = "invalid_request_error"
    code = "not_found"


class PayloadTooLarge(GatewayError):
    status = 413
    type = "invalid_request_error"
    code = "request_too_large"


class RequestTimeout(GatewayError):
    """408: the client did not send its whole body within `limits.body_timeout_s`. The
    rest of the body is never read: the connection is closed."""

    status = 408
    type = "invalid_request_error"
    code = "request_timeout"

    def headers(self) -> list[tuple[bytes, bytes]]:
        return [(b"connection", b"close")]


class Conflict(GatewayError):
    """409: the request names state that belongs to someone else (a conversation id
    already used for another customer)."""

    status = 409
    type = "invalid_request_error"
    code = "conflict"
    retries_help = False


class ChangedMeanwhile(Conflict):
    """409: what the request changes kept being changed by other requests while it ran;
    nothing was written, and sending it again can pass."""

    code = "changed_meanwhile"
    retries_help = True


class RateLimited(GatewayError):
    """429: a requests or tokens rate limit (gateway.spend.rate_limits) is reached. As
    OpenAI answers it: `type` "requests" or "tokens", code `rate_limit_exceeded`, with
    `Retry-After` (a retry then can pass: the SDKs wait for it and retry) and the
    `x-ratelimit-*` headers; `x-should-retry: false` for a call larger than the limit."""

    status = 429
    type = "requests"
    code = "rate_limit_exceeded"

    def __init__(self, message: str, *, kind: str, headers: list[tuple[bytes, bytes]]) -> None:
        super().__init__(message)
        self.type = kind
        self._headers = headers

    def headers(self) -> list[tuple[bytes, bytes]]:
        return list(self._headers)


class TooManyBodyBytes(GatewayError):
    """429: the tenant's bodies still arriving at this process already hold
    `limits.max_tenant_body_bytes`: its own load. The rest of this body is never read:
    the connection is closed."""

    status = 429
    type = "requests"
    code = "too_many_body_bytes_in_flight"

    def headers(self) -> list[tuple[bytes, bytes]]:
        return [(b"connection", b"close")]


class ClientClosedRequest(GatewayError):
    """The client went away before its request was read; nobody is left to answer."""

    status = 499
    type = "invalid_request_error"
    code = "client_closed_request"


class UpstreamUnreachable(GatewayError):
    status = 502
    type = "api_error"
    code = "upstream_unreachable"


class UpstreamTimeout(GatewayError):
    status = 504
    type = "api_error"
    code = "upstream_timeout"


class StoreUnavailable(GatewayError):
    status = 503
    type = "api_error"
    code = "store_unavailable"


class StoreBusy(StoreUnavailable):
    """The store answers, but this process has no connection free for it in time: its
    own load, not an outage. The spend guard never lets a call through unguarded on it."""


class StoreRejected(GatewayError):
    """The store is up but refuses this data (a counter would overflow, a value does
    not fit its column): retrying cannot help, unlike `StoreUnavailable`."""

    code = "store_rejected"
    retries_help = False


class UpstreamReplyTooLarge(GatewayError):
    status = 502
    type = "api_error"
    code = "upstream_reply_too_large"
    reached_upstream = True  # the upstream answered: the call is booked as an estimate
    retries_help = False  # the upstream would write it again, and bill it again


class ConfigError(Exception):
    """Invalid configuration: one entry per problem, each naming file, key and reason."""

    def __init__(self, problems: list[tuple[str, str, str]]):
        self.problems = problems
        super().__init__("; ".join(f"{f}: {k}: {r}" for f, k, r in problems))

    def lines(self) -> list[str]:
        return [f"{file}: {key}: {reason}" for file, key, reason in self.problems]


class ConfigRejected(GatewayError):
    """A reload found problems: every one is listed, and nothing changed."""

    status = 400
    type = "invalid_request_error"
    code = "invalid_config"

    def __init__(self, problems: list[tuple[str, str, str]]):
        self.problems = problems
        lines = [f"{file}: {key}: {reason}" for file, key, reason in problems]
        super().__init__(
            f"The config was not reloaded ({len(lines)} problem(s); the running config "
            "stays): " + "; ".join(lines)
        )
        self.lines = lines

    def body(self) -> bytes:
        error = orjson.loads(super().body())
        error["error"]["problems"] = self.lines
        return orjson.dumps(error)
