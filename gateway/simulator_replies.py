"""What the simulated upstream answers: reply text, usage in each provider's shape,
completions and stream chunks. Deterministic for a given request."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import tiktoken

from gateway import completions

CREATED = 1_700_000_000  # fixed: the same request always gets the same reply

_WORDS = (
    "I",
    "understand",
    "your",
    "request",
    "and",
    "will",
    "check",
    "the",
    "details",
    "now",
    "please",
    "allow",
    "me",
    "a",
    "moment",
    "to",
    "review",
    "everything",
    "carefully",
    "today",
)


def reply_text(messages: list[Any], limit: int | None, encoding: tiktoken.Encoding) -> list[str]:
    """The reply, in streaming pieces; never more than `limit` tokens, like a provider."""
    last = next(
        (
            m.get("content")
            for m in reversed(messages)
            if isinstance(m, dict) and m.get("role") == "user"
        ),
        "",
    )
    last = last if isinstance(last, str) else ""
    seed = int(hashlib.blake2b(last.encode(), digest_size=4).hexdigest(), 16)
    words = [f"Re: {' '.join(last.split()[:6])}."] + [
        _WORDS[(seed + i) % len(_WORDS)] for i in range(12 + seed % 40)
    ]
    pieces = [w + " " for w in words[:-1]] + [words[-1]]
    if limit is None:
        return pieces
    kept: list[str] = []
    used = 0
    for piece in pieces:
        cost = len(encoding.encode(piece, disallowed_special=()))
        if used + cost > max(limit, 1):
            break
        kept.append(piece)
        used += cost
    return kept or [encoding.decode(encoding.encode(pieces[0])[: max(limit, 1)])]


def usage_for(model: str, prompt_tokens: int, cached: int, completion: int) -> dict[str, Any]:
    if model.startswith("claude"):
        return {
            "input_tokens": prompt_tokens - cached,
            "cache_read_input_tokens": cached,
            "cache_creation_input_tokens": 0,
            "output_tokens": completion,
        }
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion,
        "total_tokens": prompt_tokens + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
        "completion_tokens_details": {"reasoning_tokens": 0},
    }
    if model.startswith("deepseek"):
        usage["prompt_cache_hit_tokens"] = cached
        usage["prompt_cache_miss_tokens"] = prompt_tokens - cached
    return usage


def completion_body(
    cid: str, model: str, text: str, usage: dict[str, Any] | None
) -> dict[str, Any]:
    return completions.completion_body(cid, model, CREATED, text, usage)


def chunks(
    cid: str, model: str, pieces: list[str], usage: dict[str, Any], asked: bool, report: bool
) -> Iterator[bytes]:
    return completions.stream_events(
        cid,
        model,
        CREATED,
        pieces,
        usage=usage if asked and report else None,
        null_usage=asked,
        fingerprint="fp_sim",
    )
