"""What the files a call sends may be billed at most, in input tokens. Pure.

A file part (a PDF given inline as `file_data` or by `file_url`) is billed as the text
the provider extracts from it plus an image of every page: its JSON in the body says
nothing of that (a 20 KB PDF can hold a hundred pages). What bounds it is the model's
context window: no call's input can be larger. A call carrying a file is held at that.
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


def worst_input(counted: int, files: bool, context_window: int) -> int:
    """A call's worst-case input tokens: its count, or with files the model's whole
    context window (when that is more)."""
    return max(counted, context_window) if files else counted
