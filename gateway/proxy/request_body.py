"""Reading a client's body: size-limited, JSON-checked, with errors that name the field."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from typing import Any

import orjson
from starlette.requests import ClientDisconnect, Request

from gateway import offload
from gateway.errors import (
    ClientClosedRequest,
    InvalidRequest,
    PayloadTooLarge,
    RequestTimeout,
    TooManyBodyBytes,
)

# orjson parses JSON nested up to 1024 levels but writes at most 254: a body the gateway
# read and must write again (upstream, the conversation record) stays this far below that.
_WRAPPING = 16  # levels the gateway may wrap around a client's JSON when it stores it
MAX_JSON_DEPTH = 254 - _WRAPPING


class BodyBytes:
    """The body bytes each tenant has buffered in this process while its bodies arrive
    (one per process, shared by every config generation; one event loop, no lock)."""

    def __init__(self) -> None:
        self.held: dict[str, int] = {}

    def of(self, tenant: str, most: int) -> TenantBody:
        return TenantBody(self, tenant, most)


class TenantBody:
    """One body's share of its tenant's `BodyBytes`: `take` each chunk as it arrives,
    `release` all of them once the body is read or given up."""

    def __init__(self, pool: BodyBytes, tenant: str, most: int) -> None:
        self.pool, self.tenant, self.most, self.taken = pool, tenant, most, 0

    def take(self, size: int) -> None:
        held = self.pool.held.get(self.tenant, 0) + size
        if held > self.most:
            raise TooManyBodyBytes(
                f"This tenant's request bodies still arriving at the gateway already hold "
                f"its limit of {self.most} bytes; retry when they are sent."
            )
        self.pool.held[self.tenant] = held
        self.taken += size

    def release(self) -> None:
        left = self.pool.held.get(self.tenant, 0) - self.taken
        self.taken = 0
        if left > 0:
            self.pool.held[self.tenant] = left
        else:
            self.pool.held.pop(self.tenant, None)


async def read_body(
    request: Request, limit: int, timeout_s: float, share: TenantBody | None = None
) -> bytes:
    """The whole body, within `limit` bytes and `timeout_s` seconds; each chunk taken
    from the tenant's `share` while the body arrives (all given back when it is read, or
    refused)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isascii() and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge(f"Request body is over the gateway's limit of {limit} bytes.")
    chunks = []
    size = 0
    try:
        async with asyncio.timeout(timeout_s):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise PayloadTooLarge(
                        f"Request body is over the gateway's limit of {limit} bytes."
                    )
                if share is not None:
                    share.take(len(chunk))
                chunks.append(chunk)
    except TimeoutError as exc:
        raise RequestTimeout(
            f"The request body was not sent within the gateway's {timeout_s:g} seconds."
        ) from exc
    except ClientDisconnect as exc:
        raise ClientClosedRequest("The client closed the connection mid-request.") from exc
    finally:
        if share is not None:
            share.release()
    return b"".join(chunks)


# A body orjson would parse as JSON (its first byte, past whitespace, opens an array or
# an object); a multipart upload's `[` and `{` bytes are never counted.
_JSON_START = re.compile(rb"[ \t\r\n]*[\[{]")


def check_containers(raw: bytes, most: int) -> None:
    """Refuses a JSON body of more than `most` arrays and objects, or of more than
    VALUES_PER_CONTAINER times as many values (a flat array of millions of numbers holds
    one), before it is parsed, counted at C speed: its `[` and `{` bytes, and its commas.
    Each takes two bytes at least, so a body of up to `2 * most` bytes is never counted.
    Past a bound, counted again without what is inside strings (a customer pasting a JSON
    export into a message holds hundreds of thousands of brackets in one string), unless
    it holds more than `2 * most` strings to tell apart."""
    if len(raw) // 2 <= most or not _JSON_START.match(raw):
        return
    if _within(raw, most):
        return
    # Escapes out first: a run of backslashes pairs off from its start, as JSON reads it.
    bare = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    if bare.count(b'"') <= 4 * most and _within(_STRING.sub(b"", bare), most):
        return
    raise InvalidRequest(
        f"Request body holds more than the gateway's limit of {most} JSON arrays and "
        f"objects, or of {VALUES_PER_CONTAINER * most} values.",
        code="too_many_json_containers",
    )


def _within(text: bytes, most: int) -> bool:
    containers = text.count(b"[") + text.count(b"{")
    return containers <= most and text.count(b",") <= VALUES_PER_CONTAINER * most


async def still_there(request: Request) -> None:
    """Raises ClientClosedRequest when the client left while its call waited to be
    forwarded (for other calls' holds to settle, for the store, for a summary):
    forwarded, it would be billed for an answer nobody reads."""
    if await request.is_disconnected():
        raise ClientClosedRequest("The client closed the connection before the call was forwarded.")


# Values a body may hold per array or object it may hold (`limits.max_body_containers`):
# parsing and walking a million takes the loop ~0.2 s; a chat call of 150,000 short
# messages holds ~300,000.
VALUES_PER_CONTAINER = 5


# A JSON string once its escaped quotes and backslashes are gone: linear in `re` (a
# string runs to the next quote; only a last one left open is read to the end).
_STRING = re.compile(rb'"[^"]*"')


def json_object(raw: bytes, most_containers: int) -> dict[str, Any]:
    """A client's body as a JSON object, its size in arrays and objects
    (`check_containers`) and its depth checked."""
    check_containers(raw, most_containers)
    try:
        body = offload.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InvalidRequest(
            f"Request body is not valid JSON: {exc.args[0]}", code="invalid_json"
        ) from exc
    if not isinstance(body, dict):
        raise InvalidRequest("Request body must be a JSON object.", code="invalid_json")
    _check_depth(body)
    return body


def _check_depth(body: dict[str, Any]) -> None:
    """orjson, in C, as the depth gauge: writing the body inside `_WRAPPING` lists fails
    exactly when the body is nested deeper than MAX_JSON_DEPTH."""
    wrapped: Any = body
    for _ in range(_WRAPPING):
        wrapped = [wrapped]
    try:
        orjson.dumps(wrapped)
    except orjson.JSONEncodeError as exc:
        raise InvalidRequest(
            f"Request body is nested too deeply (at most {MAX_JSON_DEPTH} levels).",
            code="invalid_json",
        ) from exc


def json_object_or_none(raw: bytes) -> dict[str, Any] | None:
    """A body's JSON object, or None when it is not one (no error: for bodies the
    gateway only reads from, such as an upstream's reply)."""
    try:
        obj = offload.loads(raw) if raw else None
    except orjson.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None


# A model id is a short name; a longer one is hostile (it would be logged, priced and
# stored as sent).
MAX_MODEL_CHARS = 256


def model_of(body: Mapping[str, Any] | None) -> str | None:
    """A body's `model` when it is a non-empty string, else None; one past
    MAX_MODEL_CHARS is refused."""
    model = body.get("model") if body is not None else None
    if not isinstance(model, str) or not model:
        return None
    if len(model) > MAX_MODEL_CHARS:
        raise InvalidRequest(
            f"'model' is at most {MAX_MODEL_CHARS} characters.", param="model", code="invalid_model"
        )
    return model


def positive_int(value: Any) -> int | None:
    """A JSON field meant as a count (`n`, `max_tokens`): an int above 0, else None."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


def choices_field(body: Mapping[str, Any], key: str, most: int | None = None) -> int | None:
    """`n` or `best_of`: how many replies the upstream generates and bills. Absent or
    null is None (one); anything but an integer from 1 (to `most`) is refused: "8" or
    8.0, which a provider may read as 8, would otherwise be held as one reply."""
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidRequest(f"'{key}' must be an integer of at least 1.", param=key)
    if most is not None and value > most:
        raise InvalidRequest(f"'{key}' may be at most {most}.", param=key)
    return value


def retry_marked(count: str | None) -> bool:
    """A request the client says is a retry: `x-stainless-retry-count` (sent by the
    OpenAI SDKs, 0 on a first try) of 1 or more; digits only, never converted (a header
    of thousands of digits)."""
    return count is not None and count.isascii() and count.isdigit() and count.strip("0") != ""


def ask_stream_usage(body: dict[str, Any]) -> bool:
    """Make a streamed call's body ask for the usage chunk; True when the gateway added
    the request (the client did not ask, so the chunk is hidden from it again)."""
    options = body.get("stream_options")
    if isinstance(options, dict) and options.get("include_usage") is True:
        return False
    body["stream_options"] = {
        **(options if isinstance(options, dict) else {}),
        "include_usage": True,
    }
    return True


def check_messages(messages: list[Any]) -> None:
    """A chat call's `messages`: at least one, each an object with a string `role`
    (which roles the model takes is the provider's to say); anything else is refused
    before it is held, read into the conversation's record or forwarded."""
    if not messages:
        raise InvalidRequest("'messages' must hold at least one message.", param="messages")
    for i, message in enumerate(messages):
        if type(message) is not dict or type(message.get("role")) is not str:
            raise InvalidRequest(
                f"'messages[{i}]' must be an object with a string 'role'.",
                param=f"messages[{i}]",
            )
