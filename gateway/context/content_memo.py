"""Results of deterministic work on message content, remembered by a digest of that
content. An anonymous app that resends one long history starts a conversation of its own
each time (see gateway.context.conversations), and would otherwise summarize and scan
the same turns from scratch on every request. Bounded: the oldest entry goes first."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Generic, TypeVar

import orjson

T = TypeVar("T")


def content_key(parts: Sequence[str], messages: Sequence[Any]) -> bytes:
    digest = hashlib.blake2b(digest_size=16)
    for part in parts:
        digest.update(part.encode() + b"\x1f")
    for message in messages:
        digest.update(orjson.dumps(message, option=orjson.OPT_SORT_KEYS) + b"\x1e")
    return digest.digest()


class ContentMemo(Generic[T]):
    def __init__(self, kept: int) -> None:
        self._kept = kept
        self._found: OrderedDict[bytes, T] = OrderedDict()

    def get(self, key: bytes) -> T | None:
        found = self._found.get(key)
        if found is not None:
            self._found.move_to_end(key)
        return found

    def put(self, key: bytes, value: T) -> None:
        self._found[key] = value
        if len(self._found) > self._kept:
            self._found.popitem(last=False)
