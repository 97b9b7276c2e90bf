"""What one SQLite store call costs the process: CPU and wall time per `SQLiteThread.run`
of a trivial statement, the thread hop and its timeout included.

    python bench/sqlite_call.py [--calls 5000] [--rounds 4]

Pin it to one core (`taskset -c 0`) to read what a request path pays on a busy core.
To compare two trees: `PYTHONSAFEPATH=1 PYTHONPATH=TREE python bench/sqlite_call.py`.
Numbers only; no assertions.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))  # after PYTHONPATH: a tree named there is the one measured

from gateway.store.sqlite_threads import SQLiteThread  # noqa: E402


def _select(conn: sqlite3.Connection) -> object:
    return conn.execute("SELECT 1").fetchone()


async def _round(path: str, calls: int) -> tuple[float, float]:
    thread = SQLiteThread(path, "bench", 5.0, lambda conn: None)
    await thread.run(_select)
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(calls):
        await thread.run(_select)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    await thread.close()
    return cpu / calls * 1e6, wall / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    import gateway

    print(f"gateway from {Path(gateway.__file__).parent}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(args.rounds):
            cpu, wall = asyncio.run(_round(str(Path(tmp) / f"r{n}.db"), args.calls))
            print(f"round {n + 1}: {cpu:6.1f} us CPU, {wall:6.1f} us wall per call")


if __name__ == "__main__":
    main()
