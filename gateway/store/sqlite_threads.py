"""The SQLite store's threads: each owns one connection and runs one job at a time.

SQLite calls block, so they run off the event loop. Every job has a deadline: SQLite
waits for another process's lock only until then (its busy timeout), and the caller
stops waiting at the deadline even when the thread itself is wedged (a stuck disk, a
job queued behind one that is). So no store call waits longer than `timeout_s`.
SQLite's errors are translated here, once, naming the SQLite error code.

Writes queued at once run together: the writer takes every write job waiting behind the
one it picks up and runs them in one transaction, each in a savepoint of its own, with
one COMMIT (most of what a small write costs). Each caller is answered only after that
COMMIT, so "written" still means committed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from gateway.errors import StoreRejected, StoreUnavailable
from gateway.store.fail_fast import FailFast

T = TypeVar("T")

# The data's fault, not the store's: retrying the same record cannot help.
_REJECTED = (OverflowError, sqlite3.IntegrityError, sqlite3.InterfaceError, sqlite3.DataError)
_OPEN_ATTEMPTS = 50
MIN_FREE_BYTES = 1024 * 1024  # less free disk than this is a full disk
TOGETHER_MAX = 64  # write jobs run in one transaction at most
_TOGETHER = threading.local()  # `active`: the thread runs jobs inside a shared transaction


class Expired(sqlite3.OperationalError):
    """A job's deadline passed while it waited for the thread."""


class SQLiteThread:
    """One thread and the connection that lives on it."""

    def __init__(
        self, path: str, name: str, timeout_s: float, setup: Callable[[sqlite3.Connection], None]
    ) -> None:
        self.path = path
        self.name = name
        self.timeout_s = timeout_s
        self._setup = setup
        self._worker = _Worker(f"sqlite-{name}", self._run_together)
        self._conn: sqlite3.Connection | None = None
        self._busy_ms = -1  # the connection's busy timeout as last set
        self._job_started: float | None = None
        # The SQLite error code of the last job, None once a job succeeds (for /healthz).
        self.last_failure: str | None = None
        # After a job timed out or failed, the next jobs fail at once for a second: a
        # locked file costs each request nothing, instead of a whole busy timeout each.
        self._fail_fast = FailFast()
        self.jobs_together = 0  # jobs run in a transaction shared with others, so far

    def busy_for(self) -> float:
        """Seconds the job now running has run; 0 when the thread is idle."""
        started = self._job_started
        return 0.0 if started is None else time.monotonic() - started

    async def run(
        self,
        fn: Callable[[sqlite3.Connection], T],
        timeout_s: float | None = None,
        *,
        together: bool = False,
    ) -> T:
        """Run `fn(connection)` on the thread. A short `timeout_s` (a health probe) neither
        trips nor waits for the fail-fast state. `together`: `fn` writes in one
        `transaction` (or one statement), so it may share a transaction with other such
        jobs queued at the same time."""
        if timeout_s is not None:
            return await self._attempt(fn, timeout_s)
        with self._fail_fast.guard():
            return await self._attempt(fn, self.timeout_s, together)

    @property
    def failing(self) -> bool:
        """The last job failed for the store's sake (and none has succeeded since)."""
        return self._fail_fast.failing

    async def _attempt(
        self, fn: Callable[[sqlite3.Connection], T], timeout: float, together: bool = False
    ) -> T:
        deadline = time.monotonic() + timeout
        job = self._worker.submit(self._call, (fn, deadline), together)
        # The job's own future times out (asyncio.wait_for would wrap it in a second
        # future and callback on each of the store calls every request makes).
        timer = asyncio.get_running_loop().call_later(timeout, _time_out, job)
        try:
            result: T = await job
            return result
        except TimeoutError as exc:
            raise StoreUnavailable(
                f"store (sqlite {self.path}) {self.name} thread did not answer within {timeout:g} s"
            ) from exc
        except _REJECTED as exc:
            raise StoreRejected(f"store (sqlite {self.path}) refused the data: {exc}") from exc
        except sqlite3.Error as exc:
            code = getattr(exc, "sqlite_errorname", None) or type(exc).__name__
            raise StoreUnavailable(f"store (sqlite {self.path}) failed: {code}: {exc}") from exc
        finally:
            timer.cancel()

    def _call(self, fn: Callable[[sqlite3.Connection], T], deadline: float) -> T:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise Expired(f"waited too long behind other work on the {self.name} thread")
        self._job_started = time.monotonic()
        try:
            conn = self._connection(remaining)
            # Give up on a lock a little before the caller gives up on us. Rounded down to
            # steps of a twentieth of the timeout, and set again only when that step
            # changes: a statement less on most jobs, never a wait past the target.
            step = max(int(self.timeout_s * 45), 1)
            busy_ms = int(remaining * 900) // step * step
            if busy_ms != self._busy_ms:
                conn.execute(f"PRAGMA busy_timeout = {busy_ms}")
                self._busy_ms = busy_ms
            result = fn(conn)
        except _REJECTED:
            self.last_failure = None  # the store works; the data does not fit
            raise
        except sqlite3.Error as exc:
            self.last_failure = getattr(exc, "sqlite_errorname", None) or type(exc).__name__
            raise
        finally:
            self._job_started = None
        self.last_failure = None
        return result

    def _run_together(self, jobs: list[_Job]) -> None:
        """Write jobs queued at once, in one transaction: each in its own savepoint (see
        `transaction`), so one that fails takes back only its own writes, and all
        answered after the one COMMIT. When SQLite ended the transaction itself (some
        errors do) or the COMMIT failed, nothing of it was written: each job runs again
        alone, as it would have without the others."""
        live = [job for job in jobs if not job[3].done()]
        if not live:
            return
        outcomes: list[tuple[Any, BaseException | None]] = []
        conn = None
        self._job_started = time.monotonic()  # waiting for the file or its lock counts too
        try:
            conn = self._connection(max(min(j[1][1] for j in live) - time.monotonic(), 0.0))
            conn.execute("BEGIN IMMEDIATE")
            _TOGETHER.active = True
            try:
                for call, args, _, _, _ in live:
                    try:
                        outcomes.append((call(*args), None))
                    except BaseException as exc:  # handed to its caller
                        if not conn.in_transaction:
                            raise
                        outcomes.append((None, exc))
            finally:
                _TOGETHER.active = False
            self._job_started = time.monotonic()  # a COMMIT stuck on the disk is seen too
            conn.execute("COMMIT")
        except BaseException:  # noqa: BLE001 - each job runs again, alone
            self._job_started = None
            if conn is not None:
                with contextlib.suppress(sqlite3.Error):
                    rollback(conn)
            for call, args, loop, future, _ in live:
                _Worker.one(call, args, loop, future)
            return
        self._job_started = None
        self.jobs_together += len(live)
        for (_, _, loop, future, _), (result, error) in zip(live, outcomes, strict=True):
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(_answer, future, result, error)

    def _connection(self, wait_s: float) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = self._open(wait_s)
        return self._conn

    def _open(self, wait_s: float) -> sqlite3.Connection:
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        on_disk = self.path != ":memory:" and not self.path.startswith("file:")
        new = on_disk and not os.path.exists(self.path)
        # Several processes may open a new file at once; switching it to WAL can answer
        # "locked" without waiting on the busy timeout, so the set-up itself retries.
        for attempt in range(_OPEN_ATTEMPTS):
            conn = sqlite3.connect(self.path, isolation_level=None, timeout=wait_s)
            if new:
                # A file it made is its owner's alone (it holds customers' text), before
                # the set-up makes its -wal and -shm, which SQLite gives the database
                # file's mode. (chmod, not an open and close of the file: closing any
                # descriptor of it drops every SQLite lock this process holds on it.)
                with contextlib.suppress(FileNotFoundError):
                    os.chmod(self.path, 0o600)
            try:
                self._setup(conn)
                return conn
            except sqlite3.OperationalError as exc:
                conn.close()
                if "locked" not in str(exc) or attempt == _OPEN_ATTEMPTS - 1:
                    raise
                time.sleep(0.02 * (attempt + 1))
        raise AssertionError("unreachable")

    async def close(self) -> None:
        def _close(conn: sqlite3.Connection) -> None:
            conn.close()
            self._conn, self._busy_ms = None, -1

        if self._conn is not None:
            # A wedged thread is left behind rather than hanging the shutdown.
            with contextlib.suppress(StoreUnavailable):
                await self._attempt(_close, self.timeout_s)  # past any fail-fast state
        self._worker.stop()


class _Worker:
    """One thread running jobs in order, each answered on an asyncio future of the loop
    that asked. (A ThreadPoolExecutor's job is a concurrent future with a lock and a
    condition of its own, wrapped in an asyncio future: twice the objects and the
    callbacks, on every store call of every request.) A daemon thread: one wedged in a
    SQLite call does not hold the interpreter's exit. Jobs submitted `together` that
    wait in a row are handed to `together(jobs)` at once (at most TOGETHER_MAX)."""

    def __init__(self, name: str, together: Callable[[list[_Job]], None]) -> None:
        self._name = name
        self._together = together
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._stopped = False

    def submit(
        self, fn: Callable[..., T], args: tuple[Any, ...], together: bool = False
    ) -> asyncio.Future[T]:
        if self._stopped:
            raise StoreUnavailable(f"store thread {self._name} is closed")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
            self._thread.start()
        self._jobs.put((fn, args, loop, future, together))
        return future

    def stop(self) -> None:
        """The thread ends after the jobs already queued (not waited for); later jobs
        are refused."""
        self._stopped = True
        if self._thread is not None:
            self._jobs.put(None)
            self._thread = None

    def _run(self) -> None:
        held: deque[_Job | None] = deque()  # taken from the queue, not to run together
        while (job := held.popleft() if held else self._jobs.get()) is not None:
            group = [job]
            while job[4] and len(group) < TOGETHER_MAX:
                try:
                    more = self._jobs.get_nowait()
                except queue.Empty:
                    break
                if more is None or not more[4]:
                    held.append(more)
                    break
                group.append(more)
            if len(group) > 1:
                self._together(group)
            else:
                self.one(*job[:4])
            del job, group  # nothing of a finished job stays referenced while the thread waits

    @staticmethod
    def one(
        fn: Callable[..., Any],
        args: tuple[Any, ...],
        loop: asyncio.AbstractEventLoop,
        future: asyncio.Future[Any],
    ) -> None:
        if future.done():  # cancelled, or its caller timed out while it waited
            return
        try:
            result, error = fn(*args), None
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller
            result, error = None, exc
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(_answer, future, result, error)


# (function, its arguments, the loop that asked, its future, may run together)
_Job = tuple[
    Callable[..., Any], tuple[Any, ...], asyncio.AbstractEventLoop, "asyncio.Future[Any]", bool
]


def _time_out(job: asyncio.Future[Any]) -> None:
    """The caller stops waiting; the thread skips the job if it has not started it."""
    if not job.done():
        job.set_exception(TimeoutError())


def _answer(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():  # cancelled, or timed out while the thread ran it
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


def rollback(conn: sqlite3.Connection) -> None:
    """Undo the open transaction, if any: SQLite has already rolled it back after some
    errors (SQLITE_FULL at COMMIT), and a second ROLLBACK would fail and hide them."""
    if conn.in_transaction:
        conn.execute("ROLLBACK")


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """A write transaction (BEGIN IMMEDIATE ... COMMIT, rolled back on any error); in a
    job run together with others, a savepoint of their shared transaction instead, so
    that an error takes back this job's writes only."""
    if getattr(_TOGETHER, "active", False):
        conn.execute("SAVEPOINT job")
        try:
            yield
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK TO job")
                conn.execute("RELEASE job")
            raise
        conn.execute("RELEASE job")
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise


def take_write_lock(conn: sqlite3.Connection) -> None:
    """Take the write lock and let go, writing nothing; raises when it cannot."""
    conn.execute("BEGIN IMMEDIATE")
    rollback(conn)


def write_lock_probe(conn: sqlite3.Connection) -> str | None:
    """Could a write start now? Takes the write lock and lets go, writing nothing.
    The SQLite error code when it cannot (SQLITE_BUSY: someone holds the lock)."""
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        return getattr(exc, "sqlite_errorname", None) or str(exc)
    rollback(conn)
    return None


def free_bytes(path: str) -> int:
    try:
        stat = os.statvfs(os.path.dirname(os.path.abspath(path)))
    except OSError:
        return MIN_FREE_BYTES  # unknown: do not cry wolf
    return stat.f_bavail * stat.f_frsize
