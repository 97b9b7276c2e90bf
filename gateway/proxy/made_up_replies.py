"""OpenAI chat-completion bodies and stream events built from text: wherever a reply is
made rather than relayed (the gateway's handoff, the simulated upstream)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import orjson


def completion_body(
    cid: str,
    model: str,
    created: int,
    text: str,
    usage: dict[str, Any] | None,
    service_tier: str | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": cid,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
    }
    if usage is not None:
        out["usage"] = usage
    if service_tier is not None:
        out["service_tier"] = service_tier
    return out


def stream_events(
    cid: str,
    model: str,
    created: int,
    pieces: Sequence[str],
    *,
    usage: dict[str, Any] | None = None,
    null_usage: bool = False,
    fingerprint: str | None = None,
    service_tier: str | None = None,
) -> Iterator[bytes]:
    """Role, one chunk per piece, finish, the usage-only chunk when `usage` is given,
    `[DONE]`. `null_usage` adds `"usage": null` to the other chunks, as OpenAI does when
    the client asked for usage; `service_tier` is on every chunk, as OpenAI puts it."""

    def chunk(choices: list[Any], **extra: Any) -> bytes:
        obj: dict[str, Any] = {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
        }
        if service_tier is not None:
            obj["service_tier"] = service_tier
        if fingerprint is not None:
            obj["system_fingerprint"] = fingerprint
        obj["choices"] = choices
        if null_usage:
            obj["usage"] = None
        obj.update(extra)
        return b"data: " + orjson.dumps(obj) + b"\n\n"

    yield chunk(
        [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]
    )
    for piece in pieces:
        yield chunk([{"index": 0, "delta": {"content": piece}, "finish_reason": None}])
    yield chunk([{"index": 0, "delta": {}, "finish_reason": "stop"}])
    if usage is not None:
        yield chunk([], usage=usage)
    yield b"data: [DONE]\n\n"
