"""Reading a client's body: size-limited, JSON-checked, with errors that name the field."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.requests import ClientDisconnect, Request

from gateway.errors import ClientClosedRequest, InvalidRequest, PayloadTooLarge


async def read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge(f"Request body is over the gateway's limit of {limit} bytes.")
    chunks = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise PayloadTooLarge(f"Request body is over the gateway's limit of {limit} bytes.")
            chunks.append(chunk)
    except ClientDisconnect as exc:
        raise ClientClosedRequest("The client closed the connection mid-request.") from exc
    return b"".join(chunks)


def json_object(raw: bytes) -> dict[str, Any]:
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InvalidRequest(
            f"Request body is not valid JSON: {exc.args[0]}", code="invalid_json"
        ) from exc
    if not isinstance(body, dict):
        raise InvalidRequest("Request body must be a JSON object.", code="invalid_json")
    return body
