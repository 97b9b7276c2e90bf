"""Warnings that would otherwise repeat on every request (the store is down: thousands
a second) are logged at most once per interval per message, saying how many were left
out. Sites are keyed by logger and message format, so the table stays as small as the
number of call sites."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

EVERY_S = 10.0


@dataclass(slots=True)
class _Site:
    last: float = float("-inf")
    left_out: int = 0


_SITES: dict[tuple[str, str], _Site] = {}


def warn_throttled(
    logger: logging.Logger, msg: str, *args: object, every_s: float = EVERY_S
) -> None:
    """`logger.warning(msg, *args)`, at most once per `every_s` for this message."""
    site = _SITES.setdefault((logger.name, msg), _Site())
    now = time.monotonic()
    if now - site.last < every_s:
        site.left_out += 1
        return
    if site.left_out:
        msg += " (and %d more like it in the last %.0f s)"
        args = (*args, site.left_out, now - site.last)
    site.last, site.left_out = now, 0
    logger.warning(msg, *args)
