"""What the files and tool rounds of a call may be billed at most, in input tokens. Pure.

A file part (a PDF given inline as `file_data` or by `file_url`) is billed as the text
the provider extracts from it plus an image of every page: its JSON in the body says
nothing of that (a 20 KB PDF can hold a hundred pages). What bounds it is the model's
context window: no pass of the model reads more. A call carrying a file is held at that.

A server-side tool (a web search) puts its results into the model's context, billed as
input, and the model reads its whole context again after each call of it: every tool
round may bill up to the context window once more. A call that may make `k` such calls
is held at its first pass (its count, or the window with a file) plus `k` windows.
"""

from __future__ import annotations

from typing import Any

from gateway.json_tree import objects_under, type_of

# Chat content parts and Responses input parts that carry a file.
_FILE_PARTS = frozenset({"file", "input_file"})


def has_files(value: Any) -> bool:
    """Whether a file part sits at any depth under `value` (chat messages, a Responses
    body's `input`); the body's depth is bounded when it is read."""
    return any(type_of(node) in _FILE_PARTS for node in objects_under(value))


def files_in(messages: Any) -> bool:
    """Whether a chat message's content holds a file part (one pass, every call: only
    list contents are looked at)."""
    for message in messages if isinstance(messages, list) else ():
        content = message.get("content") if type(message) is dict else None
        if type(content) is list and has_files(content):
            return True
    return False


def worst_input(counted: int, files: bool, context_window: int, tool_rounds: int = 0) -> int:
    """A call's worst-case input tokens: its count, or with files the model's whole
    context window (when that is more); plus the window again for each of `tool_rounds`
    server-side tool calls (a search) after which the model reads its context again."""
    first = max(counted, context_window) if files else counted
    return first + context_window * max(tool_rounds, 0)
