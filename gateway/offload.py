"""Keeping one big request from stalling every other: CPU-heavy work on a big input
(parsing, tokenizing or scanning megabytes) runs in a worker thread, so the event loop
keeps serving meanwhile; small inputs stay inline, where a thread hop costs more than
the work. tiktoken and RE2 let go of the GIL while they work; orjson does not (a
parse in a thread still holds the loop: `loads`)."""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import Callable, Sequence
from typing import Any, ParamSpec, TypeVar

import orjson

OFFLOAD_CHARS = 256 * 1024

P = ParamSpec("P")
R = TypeVar("R")


async def sized(size: int, work: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """`work(*args)`, in a worker thread when `size` (characters or bytes) is big."""
    if size > OFFLOAD_CHARS:
        return await asyncio.to_thread(work, *args, **kwargs)
    return work(*args, **kwargs)


# Work that reads text in Python at some microseconds a character (the fact extractor,
# the extractive summary): past this much of it, a worker thread. A stateless app's
# first request of a long history folds it all at once: 85 KB of it inline held the
# event loop half a second (red-team read 24); a turn's own few messages stay inline.
OFFLOAD_SCAN_CHARS = 16 * 1024


async def scanning(size: int, work: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """`work(*args)`, in a worker thread when it reads more than OFFLOAD_SCAN_CHARS: it
    lets go of the GIL at each switch interval, so the loop serves others meanwhile."""
    if size > OFFLOAD_SCAN_CHARS:
        return await asyncio.to_thread(work, *args, **kwargs)
    return work(*args, **kwargs)


# The window's own passes (plan, assemble) walk every message in Python: past this many
# they take a good part of a second (150,000 short messages: ~0.3 s a pass).
OFFLOAD_MESSAGES = 2_000


async def walking(
    messages: Sequence[Any], work: Callable[P, R], *args: P.args, **kwargs: P.kwargs
) -> R:
    """`work(*args)`, in a worker thread when it walks more than OFFLOAD_MESSAGES
    `messages`."""
    if len(messages) > OFFLOAD_MESSAGES:
        return await asyncio.to_thread(work, *args, **kwargs)
    return work(*args, **kwargs)


def content_chars(messages: Sequence[Any]) -> int:
    """About what tokenizing or scanning the messages will read (all of a message but
    the plain {role, content} ones, as gateway.ledger.tokens counts them)."""
    total = 0
    for m in messages:
        plain = isinstance(m, dict) and len(m) == 2 and isinstance(m.get("content"), str)
        total += len(m["content"]) if plain else len(orjson.dumps(m))
    return total


class _CollectorPause:
    """The cyclic collector off while any thread parses: the first parse to start turns it
    off (if it was on) and the last to end turns it back on. Threads each toggling it
    themselves could leave it off for good (one reading "off" while another's parse had
    it off, then turning it off after that one turned it back on)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._parsing = 0
        self._was_on = False

    def __enter__(self) -> None:
        with self._lock:
            if self._parsing == 0:
                self._was_on = gc.isenabled()
                gc.disable()
            self._parsing += 1

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._parsing -= 1
            if self._parsing == 0 and self._was_on:
                gc.enable()


_PAUSE = _CollectorPause()
PAUSE_FROM_BYTES = 16 * 1024  # at most ~8,000 arrays and objects below it


def loads(raw: bytes | str) -> Any:
    """orjson.loads with Python's cyclic collector paused. Each array and object orjson
    builds counts toward the collector's thresholds, so JSON of many of them set off
    collections over every object of the process, several full ones (250,000 small
    arrays: ~190 ms against ~13 ms paused, in a gateway process). orjson holds the GIL
    while it parses; the pause is shared by the threads parsing at once. A short text
    (a stored document's field, most bodies) holds too few to set one off that costs:
    parsed as it is, without the pause's lock (a request reads some hundred fields)."""
    if len(raw) < PAUSE_FROM_BYTES:
        return orjson.loads(raw)
    with _PAUSE:
        return orjson.loads(raw)
