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
from gateway.store.sqlite_threads import SQLiteThread


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
