"""Calls in flight, journaled on disk: a call forwarded and not yet booked is a line
of this process's journal (`gateway-inflight-<pid>-<nonce>.jsonl`, beside the spill
file), its end another. A process killed outright (kill -9, the OOM killer) leaves the
calls it was serving there, which the provider bills and nobody booked: the next start
of the gateway books each of them, estimated, at its input and its whole output ceiling
(what the provider may have billed), under the id the call would have been booked with,
so a call booked just before the kill is not booked twice (the stores ignore an id they
hold). A clean stop ends every call first, and removes the journal.

A journal is held under an exclusive `flock` by the process writing it, for its whole
life: a starting process takes only journals it can lock, so never a live one's, even
in another container sharing the folder (where pids say nothing). The writes append one
line to a file opened once, to the page cache: they survive the process being killed,
not the machine going down, at a few microseconds a call. Past COMPACT_LINES lines the
journal is written again holding only the calls still open."""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import time
from pathlib import Path
from typing import Any

import orjson

from gateway.ids import new_id
from gateway.throttled_log import warn_throttled

log = logging.getLogger("gateway.ledger.inflight")
COMPACT_LINES = 10_000  # a journal this long is written again with the calls still open
RETRY_S = 10.0  # after a write the disk refused, the journal is tried again this late


class InFlight:
    """This process's journal of calls in flight."""

    def __init__(self, folder: Path, stem: str = "gateway-inflight") -> None:
        self.folder, self.stem = folder, stem
        self.path = folder / f"{stem}-{os.getpid()}-{new_id()[:12]}.jsonl"
        self._fd: int | None = None
        self._open: dict[str, bytes] = {}  # each open call's line, to write them again
        self._lines = 0
        self._retry_at = 0.0
        self._stale = True  # the file is not the open calls' lines: write them again

    def begin(self, entry: dict[str, Any]) -> str:
        """Journal a call about to be forwarded (`entry`: what booking it at its ceiling
        needs: gateway.ledger.accounting.Accountant.left_behind); its booking's id."""
        call = new_id()  # gateway.ids: no system call
        line = orjson.dumps({"begun": call, "at": time.time(), **entry}) + b"\n"
        self._open[call] = line
        self._write(line)
        return call

    def end(self, call: str | None) -> None:
        """The call was booked, or released without being billed. Never raises."""
        if call is None or self._open.pop(call, None) is None:
            return
        self._write(orjson.dumps({"ended": call}) + b"\n")

    def close(self) -> None:
        """At a clean stop: the journal goes once no call is open in it."""
        if not self._open:
            self.path.unlink(missing_ok=True)
        if self._fd is not None:
            os.close(self._fd)  # the lock goes with it
            self._fd = None

    def _write(self, line: bytes) -> None:
        """`line` appended; or the whole journal written again, with the open calls
        alone, when it is new, past its length (COMPACT_LINES, or twice the calls open),
        or a write failed since (the lines skipped meanwhile are in it then). A write
        the disk refuses is not tried again for RETRY_S: calls go on, and a kill
        meanwhile loses them, as without a journal."""
        if self._retry_at > time.monotonic():
            self._stale = True
            return
        try:
            if self._stale or self._lines >= max(COMPACT_LINES, 2 * len(self._open)):
                self._rewrite()
            elif self._fd is not None and os.write(self._fd, line) == len(line):
                self._lines += 1
            else:
                raise OSError("a short write")
        except OSError as exc:
            self._stale, self._retry_at = True, time.monotonic() + RETRY_S
            warn_throttled(log, "cannot write the in-flight journal %s: %s", self.path, exc)

    def _rewrite(self) -> None:
        """The journal as the open calls alone: a new file, locked, written, then put in
        the old one's place (the lock moves with it)."""
        fresh = self.path.with_name(f"{self.path.name}.new")
        fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            lines = b"".join(self._open.values())
            if os.write(fd, lines) != len(lines):
                raise OSError("a short write")
            os.replace(fresh, self.path)
        except OSError:
            os.close(fd)
            fresh.unlink(missing_ok=True)
            raise
        if self._fd is not None:
            os.close(self._fd)
        self._fd, self._lines, self._stale = fd, len(self._open), False


def left_behind(
    folder: Path, stem: str = "gateway-inflight"
) -> tuple[list[dict[str, Any]], list[Journal]]:
    """The calls journaled by processes no longer running and never ended, and the
    journals they were read from, held locked (`Journal.remove` once the calls are
    booked or spilled, `Journal.keep` to leave them for the next start). Unreadable
    lines (a write the kill cut short) are skipped; a journal that cannot be read is
    left where it is."""
    found: list[dict[str, Any]] = []
    taken: list[Journal] = []
    for path in folder.glob(f"{stem}-*.jsonl.new"):  # a rewrite a kill cut short
        if (left := Journal.take(path)) is not None:
            left.remove()  # the journal it was to replace is whole: read below
    for path in sorted(folder.glob(f"{stem}-*.jsonl")):
        journal = Journal.take(path)
        if journal is None:
            continue  # a live process's, or already taken
        begun: dict[str, dict[str, Any]] = {}
        for line in journal.lines:
            try:
                doc = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if isinstance(doc, dict) and isinstance(doc.get("begun"), str):
                begun[doc["begun"]] = doc
            elif isinstance(doc, dict) and isinstance(doc.get("ended"), str):
                begun.pop(doc["ended"], None)
        found += begun.values()
        taken.append(journal)
    return found, taken


class Journal:
    """A dead process's journal, locked by the process taking it."""

    def __init__(self, path: Path, fd: int, lines: list[bytes]) -> None:
        self.path, self._fd, self.lines = path, fd, lines

    @classmethod
    def take(cls, path: Path) -> Journal | None:
        """The journal, locked and read; None when its writer lives (it holds the lock),
        when another starting process took it first, or when it cannot be read."""
        try:
            fd = os.open(path, os.O_RDWR)  # an exclusive lock over NFS needs it
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if os.fstat(fd).st_ino != os.stat(path).st_ino:
                raise FileNotFoundError(path)  # removed (or rewritten) meanwhile
            with open(fd, "rb", closefd=False) as fh:
                lines = fh.read().splitlines()
        except OSError as exc:
            os.close(fd)
            if not isinstance(exc, BlockingIOError | FileNotFoundError):
                warn_throttled(log, "cannot read the in-flight journal %s: %s", path, exc)
            return None
        return cls(path, fd, lines)

    def remove(self) -> None:
        with contextlib.suppress(OSError):
            self.path.unlink(missing_ok=True)
        self.keep()

    def keep(self) -> None:
        os.close(self._fd)
