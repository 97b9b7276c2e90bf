"""Regular expressions whose running time is linear in the text: every pattern that meets
client text (the operator's in context.yaml and the gateway's own) is compiled here.

Python's `re` backtracks. `\\d[\\d,]*USD` over "1,1,1,..." starts a match at every digit
and runs to the end of the run from each, so 40 KB of it took seconds and 10 MB hours,
on the event loop. RE2 never backtracks; the price is no lookaround and no
backreferences, and `\\w \\d \\s \\b` are ASCII only (non-ASCII letters are not `\\w`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Protocol, cast

import re2  # type: ignore[import-untyped]


class LinearMatch(Protocol):
    def group(self, index: int = 0) -> str: ...


class LinearPattern(Protocol):
    """The part of a compiled RE2 pattern the gateway uses (re.Pattern's names)."""

    @property
    def pattern(self) -> str: ...

    def search(self, text: str | bytes) -> LinearMatch | None: ...

    def finditer(self, text: str) -> Iterator[LinearMatch]: ...

    def sub(self, repl: Callable[[LinearMatch], str], text: str) -> str: ...


def compile_linear(pattern: str, ignore_case: bool = False) -> LinearPattern:
    """Raises ValueError (naming the reason) for a pattern RE2 cannot run."""
    options = re2.Options()
    options.log_errors = False  # the reason goes into the error, not to stderr
    options.case_sensitive = not ignore_case
    try:
        return cast(LinearPattern, re2.compile(pattern, options))
    except re2.error as exc:
        reason = exc.args[0] if exc.args else "invalid"
        if isinstance(reason, bytes):
            reason = reason.decode(errors="replace")
        raise ValueError(
            f"{pattern!r} is not a valid RE2 regex: {reason} (patterns run in linear time: "
            "no lookbehind, lookahead or backreferences)"
        ) from exc
