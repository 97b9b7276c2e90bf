"""A summarized span's identity (its anchor): what tells the engine that the messages a
summary was made from are still the ones the app sends, or that the app edited one
strictly inside them (a redaction). Pure."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import orjson

from gateway.context.content_memo import ContentMemo, quick_key
from gateway.context.types import Memory
from gateway.messages import leading_system, role


def fingerprint(message: Any) -> str:
    return hashlib.blake2b(
        orjson.dumps(message, option=orjson.OPT_SORT_KEYS), digest_size=8
    ).hexdigest()


_ENDS = 32  # hex digits of an anchor that fingerprint the span's first and last message


_ANCHORS: ContentMemo[str] = ContentMemo(4096)  # spans' anchors, by quick_key


def span_anchor(transcript: Sequence[Any], head_end: int, cursor: int) -> str:
    """The summarized span's identity: its first and last message, then a hash of every
    message in it, so an app's edit (a redaction) strictly inside the span is noticed.
    A stateless app resends the span every turn: its anchor is remembered by the span's
    quick key, so the hash over it is made once, not twice per request."""
    key = quick_key(transcript[head_end:cursor])
    anchor = _ANCHORS.get(key)
    if anchor is None:
        anchor = _hashed(transcript, head_end, cursor)
        _ANCHORS.put(key, anchor)
    return anchor


def _hashed(transcript: Sequence[Any], head_end: int, cursor: int) -> str:
    span = hashlib.blake2b(
        orjson.dumps(list(transcript[head_end:cursor]), option=orjson.OPT_SORT_KEYS),
        digest_size=8,
    )
    ends = fingerprint(transcript[head_end]) + fingerprint(transcript[cursor - 1])
    return ends + span.hexdigest()


def anchored(transcript: Sequence[Any], head_end: int, cursor: int, anchor: str) -> bool:
    """Does the span still hold what was summarized? (An anchor of an earlier version
    holds the ends only.)"""
    now = span_anchor(transcript, head_end, cursor)
    return now == anchor or (len(anchor) == _ENDS and now[:_ENDS] == anchor)


def edited_within(messages: Sequence[Any], memory: Memory) -> bool:
    """The app changed a message strictly inside the summarized span: its ends are the
    ones summarized, what lies between is not."""
    transcript = messages[leading_system(messages) :]
    first_user = next((i for i, m in enumerate(transcript) if role(m) == "user"), -1)
    head_end, cursor = first_user + 1, memory.cursor
    if not memory.summary or not head_end < cursor <= len(transcript):
        return False
    now = span_anchor(transcript, head_end, cursor)
    anchor = memory.anchor
    return len(anchor) > _ENDS and now[:_ENDS] == anchor[:_ENDS] and now != anchor
