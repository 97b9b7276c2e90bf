"""The window engine's input and its view of the transcript: the messages split at the
running summary's cursor into the app's system message(s), the opening request and the
units (a turn, or an assistant's tool calls with their results) after the cursor, and the
least the current episode can be sent as (pure, no I/O)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from gateway.context.anchors import anchored
from gateway.context.prompts import summary_message
from gateway.context.types import Episode, Fact, Memory, WindowPolicy
from gateway.messages import RESULT_ROLES, SYSTEM_ROLES, leading_system, message_text, role

SUMMARY_LEAST_TOKENS = 40  # what a summary keeps when the quota leaves it no room


class Tokens(Protocol):
    def message(self, message: Any) -> int: ...

    def text(self, text: str) -> int: ...


@dataclass(frozen=True)
class WindowInput:
    messages: Sequence[Any]
    memory: Memory
    policy: WindowPolicy
    facts: Sequence[Fact] = ()
    episodes: Sequence[Episode] = ()
    operational_state: str | None = None
    subject_tags: tuple[str, ...] = ()
    scopes: tuple[str, ...] = ()
    client_max_tokens: int | None = None
    # When this conversation began: facts created before it came from elsewhere (the
    # customer's earlier conversations, the app) and sit with the episodes at the top.
    started: float = 0.0
    # The conversation's id: the facts heard in it (`Fact.heard_in`) are the customer's
    # own statements here, visible whatever the scopes.
    conversation: str = ""
    # The pause since the last turn outlasted the provider's prompt cache (the policy's
    # cache_idle_s): this request is billed fresh whatever it holds.
    cache_cold: bool = False


@dataclass(frozen=True)
class Segments:
    system: list[Any]
    transcript: list[Any]
    head_end: int
    unit_starts: tuple[int, ...]  # starts of the units at or after the cursor
    memory: Memory  # validated against this transcript

    @property
    def summarized(self) -> bool:
        """Whether a running summary stands for turns between the opening and the cursor."""
        return bool(self.memory.summary and self.memory.cursor > self.head_end)


def split(messages: Sequence[Any], memory: Memory) -> Segments:
    """Work here follows the turns after the cursor, not the whole history."""
    k = leading_system(messages)
    system, transcript = list(messages[:k]), list(messages[k:])
    first_user = next((i for i, m in enumerate(transcript) if role(m) == "user"), -1)
    head_end = first_user + 1
    cursor = memory.cursor
    valid = (
        memory.summary
        and head_end < cursor <= len(transcript)
        and (cursor == len(transcript) or role(transcript[cursor]) not in RESULT_ROLES)
        and anchored(transcript, head_end, cursor, memory.anchor)
    )
    if not valid:
        memory = Memory(cursor=head_end)
    # A unit never separates an assistant's tool calls (or legacy function call) from
    # their results, so a kept transcript never starts on a result.
    starts = [
        i for i in range(memory.cursor, len(transcript)) if role(transcript[i]) not in RESULT_ROLES
    ]
    return Segments(system, transcript, head_end, tuple(starts), memory)


def cost(messages: Sequence[Any], tokens: Tokens) -> int:
    return sum(tokens.message(m) for m in messages)


def kept_instructions(seg: Segments, room: int, tokens: Tokens) -> list[Any]:
    """The app's system or developer messages among the folded turns ("identity
    verified: from now on reply in formal Spanish") that are sent on verbatim, in their
    order: the newest first that fit in `room` (what the app's opening system
    message(s) leave of `system_budget`). One that a later one replaces (the same label,
    "Current time: ...", "Relevant documents: ..." sent each turn, or the same text) is
    not kept, nor one that does not fit (a pasted document): both are folded with their
    turns."""
    if not seg.summarized:
        return []
    t, h, cursor = seg.transcript, seg.head_end, seg.memory.cursor
    seen = {_kind(m) for m in t[cursor:] if role(m) in SYSTEM_ROLES}
    kept = []
    for message in reversed(t[h:cursor]):
        if role(message) not in SYSTEM_ROLES:
            continue
        kind = _kind(message)
        if kind is not None and kind in seen:
            continue
        seen.add(kind)
        if (need := tokens.message(message)) <= room:
            kept.append(message)
            room -= need
    return kept[::-1]


def _kind(message: Any) -> str | None:
    """What a later instruction replaces: one headed by a label of two to four words
    and no digit, its colon followed by a space ("Current time: ...", "Relevant
    documents: ...") by the next with that label; any other ("Note: ...", "At 10:30
    ...", a link) by the same text again. None for one without text."""
    text = " ".join(message_text(message).lower().split())
    if not text:
        return None
    head, colon, rest = text.partition(":")
    label = colon and rest[:1] == " " and 2 <= len(head.split()) <= 4
    return head + ":" if label and not any(c.isdigit() for c in head) else text


def least_transcript(seg: Segments, p: WindowPolicy, tokens: Tokens) -> int:
    """The least the current episode can be sent as: the opening request and the last
    `keep_last_messages` (from a unit's start) verbatim, plus the shortest summary of
    what lies between them; or the whole transcript when that is smaller."""
    t, h, cursor = seg.transcript, seg.head_end, seg.memory.cursor
    protected_from = len(t) - p.keep_last_messages
    start = max((s for s in seg.unit_starts if s <= protected_from), default=cursor)
    head, whole, kept = cost(t[:h], tokens), cost(t[cursor:], tokens), cost(t[start:], tokens)
    if start <= cursor and not seg.summarized:
        return head + whole  # nothing can leave
    # A summary gives way down to SUMMARY_LEAST_TOKENS (one shorter stays as it is).
    text = SUMMARY_LEAST_TOKENS
    if seg.summarized:
        text = min(text, tokens.text(seg.memory.summary))
    least = tokens.message(summary_message("", h, start)) + text
    return head + kept + least if seg.summarized else head + min(whole, kept + least)
