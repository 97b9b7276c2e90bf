"""Results of deterministic work on message content, remembered by a digest of that
content. An anonymous app that resends one long history starts a conversation of its own
each time (see gateway.context.conversation_record), and would otherwise summarize and scan
the same turns from scratch on every request. Bounded: the oldest entry goes first."""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from typing import Any, Generic, TypeVar

import orjson

T = TypeVar("T")


def content_key(parts: Sequence[str], messages: Sequence[Any]) -> Hashable:
    """A memo key of some strings (who, which model, ...) and the messages' content."""
    return (tuple(parts), quick_key(messages))


def quick_key(messages: Sequence[Any]) -> Hashable:
    """A key of the messages' content for an in-process memo, costing next to nothing
    once their texts were hashed (the token counter hashes every message's content, and
    a Python string keeps its hash): a plain `{"role", "content"}` message is its two
    strings, any other its canonical JSON. String hashes are keyed per process
    (SipHash, PYTHONHASHSEED), so nobody outside can aim a collision at it."""
    items: list[Any] = []
    for m in messages:
        if type(m) is dict and len(m) == 2:
            role, content = m.get("role"), m.get("content")
            if type(role) is str and type(content) is str:
                items.append((role, content))
                continue
        items.append(orjson.dumps(m, option=orjson.OPT_SORT_KEYS))
    return (len(items), hash(tuple(items)))


class ContentMemo(Generic[T]):
    def __init__(self, kept: int) -> None:
        self._kept = kept
        self._found: OrderedDict[Hashable, T] = OrderedDict()

    def get(self, key: Hashable) -> T | None:
        found = self._found.get(key)
        if found is not None:
            with contextlib.suppress(KeyError):  # evicted meanwhile by a thread's put
                self._found.move_to_end(key)
        return found

    def put(self, key: Hashable, value: T) -> None:
        self._found[key] = value
        if len(self._found) > self._kept:
            self._found.popitem(last=False)
