"""Reading chat messages as the API sends them: the one place that knows a message's
role, the text of its string or list content, and which messages open the list as the
app's instruction. Pure, standard library only: the engine and the loop detector use it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

SYSTEM_ROLES = frozenset({"system", "developer"})
# A tool's answer to the assistant message before it that called it (a legacy
# `function_call` is answered by role "function"): the two are never parted.
RESULT_ROLES = frozenset({"tool", "function"})


def role(message: Any) -> str:
    return str(message.get("role", "")) if isinstance(message, dict) else ""


def message_text(message: Any) -> str:
    """String content as is; list content as its text parts joined; else ""."""
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    return ""


def leading_system(messages: Sequence[Any]) -> int:
    """How many messages open the list in a system role: the app's instruction."""
    k = 0
    while k < len(messages) and role(messages[k]) in SYSTEM_ROLES:
        k += 1
    return k


def texts_of(messages: Sequence[Any], wanted: str) -> list[str]:
    """The text of every message in the `wanted` role that has any."""
    return [t for m in messages if role(m) == wanted and (t := message_text(m))]
