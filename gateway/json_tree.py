"""Walking a parsed JSON body: every object under a value, at any depth. Iterative (a
client's nesting is bounded when its body is read, gateway.proxy.request_body, but no
recursion is spent on it)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any


def objects_under(value: Any) -> Iterator[Mapping[str, Any]]:
    """Every JSON object in `value` (itself included), parents before their children."""
    todo = [value]
    while todo:
        node = todo.pop()
        if isinstance(node, Mapping):
            yield node
            todo.extend(v for v in node.values() if isinstance(v, Mapping | list))
        elif isinstance(node, list):
            todo.extend(v for v in node if isinstance(v, Mapping | list))


def type_of(node: Mapping[str, Any]) -> str | None:
    """An object's `type` when it is a string (a client may send a list or an object
    there, which no set of known types may be asked about: it is not hashable)."""
    kind = node.get("type")
    return kind if isinstance(kind, str) else None
