"""What the simulated upstream answers: reply text, usage in each provider's shape,
completions and stream chunks. Deterministic for a given request."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import orjson
import tiktoken

from gateway.proxy import made_up_replies as completions

CREATED = 1_700_000_000  # fixed: the same request always gets the same reply
MAX_OUTPUT_TOKENS = 16_384  # a reply with no ceiling stops here at the latest

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


def reply_text(
    messages: list[Any], limit: int | None, encoding: tiktoken.Encoding, variant: int = 0
) -> list[str]:
    """The reply, in streaming pieces; never more than `limit` tokens, like a provider.
    `variant` picks another sample for the same prompt (the choices of `n`)."""
    last = next(
        (
            m.get("content")
            for m in reversed(messages)
            if isinstance(m, dict) and m.get("role") == "user"
        ),
        "",
    )
    last = last if isinstance(last, str) else ""
    seed = int(hashlib.blake2b(last.encode(), digest_size=4).hexdigest(), 16) + variant * 7
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


def filled_text(limit: int | None, encoding: tiktoken.Encoding) -> list[str]:
    """A reply that uses its whole output ceiling (a client asking for a long answer);
    without a ceiling, a model's typical maximum. Never over the ceiling."""
    want = max(limit if limit is not None else MAX_OUTPUT_TOKENS, 1)
    long = (" ".join(_WORDS) + " ") * (want // len(_WORDS) + 2)
    text = encoding.decode(encoding.encode(long)[:want])
    while len(encoding.encode(text, disallowed_special=())) > want:
        text = text[:-1]
    words = text.split(" ")
    return [w + " " for w in words[:-1]] + [words[-1]]


def tool_tokens(body: dict[str, Any], encoding: tiktoken.Encoding) -> int:
    """What the definitions the messages do not show cost: the tools (rendered, with a
    few tokens of framing each), legacy functions, a response format's schema."""
    total = 0
    for key in ("tools", "functions", "response_format"):
        value = body.get(key)
        if value:
            total += len(encoding.encode(orjson.dumps(value).decode(), disallowed_special=()))
            total += 8 * len(value) + 12 if isinstance(value, list) else 4
    return total


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
    cid: str, model: str, text: str, usage: dict[str, Any] | None, tier: str | None = None
) -> dict[str, Any]:
    return completions.completion_body(cid, model, CREATED, text, usage, tier)


def chunks(
    cid: str,
    model: str,
    pieces: list[str],
    usage: dict[str, Any],
    asked: bool,
    report: bool,
    tier: str | None = None,
) -> Iterator[bytes]:
    return completions.stream_events(
        cid,
        model,
        CREATED,
        pieces,
        usage=usage if asked and report else None,
        null_usage=asked,
        fingerprint="fp_sim",
        service_tier=tier,
    )


def choices_body(body: dict[str, Any], texts: list[str]) -> dict[str, Any]:
    """A completion body with one choice per text (`n`)."""
    first = body["choices"][0]
    body["choices"] = [
        {**first, "index": i, "message": {**first["message"], "content": text}}
        for i, text in enumerate(texts)
    ]
    return body


def choices_chunks(
    cid: str,
    model: str,
    replies: list[list[str]],
    usage: dict[str, Any],
    asked: bool,
    report: bool,
    tier: str | None = None,
) -> Iterator[bytes]:
    """Stream events of `n` choices: each choice's role, pieces in turn, finishes."""
    events = [
        list(chunks(cid, model, pieces, usage, asked, report, tier))[:-1] for pieces in replies
    ]
    tail = list(chunks(cid, model, [], usage, asked, report, tier))[2:]  # [usage], [DONE]
    for i, stream in enumerate(events):
        body = stream[: len(replies[i]) + 2]  # role, pieces, finish
        events[i] = [_reindex(e, i) for e in body]
    longest = max(len(e) for e in events)
    for step in range(longest):
        for stream in events:
            if step < len(stream):
                yield stream[step]
    yield from tail


def _reindex(event: bytes, index: int) -> bytes:
    obj = orjson.loads(event.removeprefix(b"data: "))
    for choice in obj["choices"]:
        choice["index"] = index
    return b"data: " + orjson.dumps(obj) + b"\n\n"
