"""The SQLite store's threads: a job stuck in a call (a wedged disk) holds its caller
only until the caller's timeout, and a job queued behind it whose caller has given up
is never run."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest

from gateway.errors import StoreUnavailable
from gateway.store.sqlite_threads import SQLiteThread, transaction


def test_a_wedged_job_times_out_and_a_job_given_up_behind_it_never_runs(
    tmp_path: Path,
) -> None:
    release, ran = threading.Event(), []

    def stuck(conn: sqlite3.Connection) -> None:
        release.wait(10)

    def behind(conn: sqlite3.Connection) -> None:
        ran.append("behind")

    def after(conn: sqlite3.Connection) -> str:
        return "after"

    async def main() -> str:
        thread = SQLiteThread(str(tmp_path / "t.db"), "writer", 0.2, lambda conn: None)
        with pytest.raises(StoreUnavailable, match=r"did not answer within 0\.2 s"):
            await thread.run(stuck)  # answered while the job is still stuck
        with pytest.raises(StoreUnavailable):  # queued behind the stuck one, given up
            await thread.run(behind, timeout_s=0.1)
        release.set()
        answer = await thread.run(after, timeout_s=5)
        await thread.close()
        return answer

    assert asyncio.run(main()) == "after"
    assert ran == []  # its caller had stopped waiting: it was skipped, not run late


def test_writes_waiting_together_for_the_lock_show_the_writer_busy(tmp_path: Path) -> None:
    """A shared transaction waiting for another process's write lock is the writer at
    work (what /healthz reads as wedged when it lasts), not an idle thread."""
    path = str(tmp_path / "t.db")
    release = threading.Event()

    def hold(conn: sqlite3.Connection) -> None:
        release.wait(10)

    def write(conn: sqlite3.Connection) -> None:
        with transaction(conn):
            conn.execute("CREATE TABLE IF NOT EXISTS t (n INTEGER)")
            conn.execute("INSERT INTO t VALUES (1)")

    async def main() -> tuple[float, int]:
        thread = SQLiteThread(path, "writer", 5.0, lambda conn: None)
        held = asyncio.ensure_future(thread.run(hold))
        await asyncio.sleep(0.05)
        writes = asyncio.gather(*(thread.run(write, together=True) for _ in range(3)))
        await asyncio.sleep(0.05)  # all three queued behind the held job
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another process takes the write lock
        release.set()
        await held
        await asyncio.sleep(0.3)  # the three wait for the lock, together
        busy = thread.busy_for()
        other.execute("ROLLBACK")
        other.close()
        await writes
        together = thread.jobs_together
        await thread.close()
        return busy, together

    busy, together = asyncio.run(main())
    assert together == 3
    assert busy > 0
