"""Calls in flight, journaled on disk: a call forwarded and not yet booked is a line
of this process's journal (`gateway-inflight-<pid>.jsonl`, beside the spill file), its
end another. A process killed outright (kill -9, the OOM killer) leaves the calls it
was serving there, which the provider bills and nobody booked: the next start of the
gateway books each of them, estimated, at its input and its whole output ceiling (what
the provider may have billed), under the id the call would have been booked with, so a
call booked just before the kill is not booked twice (both stores ignore an id they
hold). A clean stop ends every call first, and removes the journal.

The writes are appends of one line to a file opened once, to the page cache: they
survive the process being killed (not the machine going down), at a few microseconds a
call, and need no store round trip on the request path."""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Any

import orjson

from gateway.ids import new_id
from gateway.throttled_log import warn_throttled

log = logging.getLogger("gateway.ledger.inflight")
COMPACT_LINES = 10_000  # with no call open, a journal this long starts over


class InFlight:
    """This process's journal of calls in flight."""

    def __init__(self, folder: Path, stem: str = "gateway-inflight") -> None:
        self.folder, self.stem = folder, stem
        self.path = folder / f"{stem}-{_tag(os.getpid())}.jsonl"
        self._fd: int | None = None
        self._broken = False
        self._open: set[str] = set()
        self._lines = 0

    def begin(self, entry: dict[str, Any]) -> str:
        """Journal a call about to be forwarded (`entry`: what booking it at its ceiling
        needs: gateway.ledger.accounting.Accountant.left_behind); its booking's id."""
        call = new_id()  # the booking's id (gateway.ids: no system call)
        self._open.add(call)
        self._write({"begun": call, "at": time.time(), **entry})
        return call

    def end(self, call: str | None) -> None:
        """The call was booked, or released without reaching the upstream."""
        if call is None or call not in self._open:
            return
        self._open.discard(call)
        self._write({"ended": call})
        if not self._open and self._lines >= COMPACT_LINES and self._fd is not None:
            os.ftruncate(self._fd, 0)
            self._lines = 0

    def close(self) -> None:
        """At a clean stop: the journal goes once no call is open in it."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if not self._open:
            self.path.unlink(missing_ok=True)

    def _write(self, doc: dict[str, Any]) -> None:
        if self._broken:
            return
        try:
            if self._fd is None:
                flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
                self._fd = os.open(self.path, flags, 0o600)
            os.write(self._fd, orjson.dumps(doc) + b"\n")
            self._lines += 1
        except OSError as exc:
            self._broken = True  # calls go on; a kill then loses them, as without it
            warn_throttled(log, "cannot write the in-flight journal %s: %s", self.path, exc)


def left_behind(
    folder: Path, stem: str = "gateway-inflight"
) -> tuple[list[dict[str, Any]], list[Path]]:
    """The calls journaled by processes no longer running and never ended, and the
    journals they were read from (to remove once the calls are booked or spilled).
    Each journal is taken once (renamed first: two starting workers do not both take
    it). Unreadable lines (a write the kill cut short) are skipped."""
    found: list[dict[str, Any]] = []
    taken_paths: list[Path] = []
    for path in sorted(folder.glob(f"{stem}-*.jsonl")):
        tag = path.stem.removeprefix(f"{stem}-")
        pid = tag.split("-", 1)[0]
        if not pid.isdigit() or _tag(int(pid)) == tag:
            continue  # a process running now (this one too)
        taken = path.with_name(f"{path.stem}.taken-{os.getpid()}")
        try:
            path.rename(taken)
        except FileNotFoundError:
            continue  # another worker took it
        begun: dict[str, dict[str, Any]] = {}
        for line in taken.read_bytes().splitlines():
            try:
                doc = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if isinstance(doc, dict) and isinstance(doc.get("begun"), str):
                begun[doc["begun"]] = doc
            elif isinstance(doc, dict) and isinstance(doc.get("ended"), str):
                begun.pop(doc["ended"], None)
        found += begun.values()
        taken_paths.append(taken)
    return found, taken_paths


def _tag(pid: int) -> str:
    """A process as its journal names it: its pid and, on Linux, when it started (a
    restarted container's process has its predecessor's pid); "" when not running."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return ""
    except PermissionError:
        pass
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return str(pid)
    # the fields after the command (in parentheses, which may hold spaces): 22nd is start
    return f"{pid}-{stat.rsplit(')', 1)[-1].split()[19]}"
