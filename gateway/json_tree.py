"""Walking a parsed JSON body: every object under a value, at any depth. Iterative (a
client's nesting is bounded when its body is read, gateway.proxy.request_body, but no
recursion is spent on it)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any


def objects_under(value: Any) -> Iterator[dict[str, Any]]:
    """Every JSON object in `value` (itself included), parents before their children.
    Every value is stacked and the scalars dropped as they come off: filtering them first
    cost four times as much over a body of many small arrays (the number of arrays and
    objects a body holds is bounded when it is read, `limits.max_body_containers`)."""
    todo = [value]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            yield node
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)


def type_of(node: Mapping[str, Any]) -> str | None:
    """An object's `type` when it is a string (a client may send a list or an object
    there, which no set of known types may be asked about: it is not hashable)."""
    kind = node.get("type")
    return kind if isinstance(kind, str) else None
