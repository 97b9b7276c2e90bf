"""What one write transaction of the SQLite store costs, step by step: CPU per BEGIN
IMMEDIATE, the read of a document's rows, the writes of two rows (a packed record row
and a big field's own row, as `gateway.store.sqlite_docs` writes a conversation
record) and the COMMIT, with the store's own pragmas (`gateway.store.sqlite._setup`).

    python bench/sqlite_transaction.py [--transactions 3000] [--rounds 2]

Pin it to one core (`taskset -c 0`) to read what a request path pays on a busy core.
Numbers only; no assertions.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from gateway.store.sqlite import _setup  # noqa: E402

STEPS = ("begin", "read", "write", "commit")
KEYS = 500  # conversations written in turn


def _round(path: Path, transactions: int) -> list[float]:
    conn = sqlite3.connect(path, isolation_level=None)
    _setup(conn)
    packed = orjson.dumps({f"f{i}": "x" * 40 for i in range(32)})
    big = orjson.dumps(["y" * 300] * 20)
    spent = [0.0] * len(STEPS)
    clock = time.process_time
    for n in range(transactions):
        ident = ("conversation", "acme", f"c{n % KEYS}")
        t0 = clock()
        conn.execute("BEGIN IMMEDIATE")
        t1 = clock()
        conn.execute(
            "SELECT field, body FROM doc_field WHERE kind = ? AND tenant = ? AND key = ?", ident
        ).fetchall()
        t2 = clock()
        conn.executemany(
            "INSERT OR REPLACE INTO doc_field VALUES (?, ?, ?, ?, ?)",
            [(*ident, "", packed), (*ident, "opening", big)],
        )
        t3 = clock()
        conn.execute("COMMIT")
        t4 = clock()
        for k, (a, b) in enumerate(((t0, t1), (t1, t2), (t2, t3), (t3, t4))):
            spent[k] += b - a
    conn.close()
    return [s / transactions * 1e6 for s in spent]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transactions", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    for rnd in range(1, args.rounds + 1):
        with tempfile.TemporaryDirectory() as tmp:
            spent = _round(Path(tmp) / "gateway.db", args.transactions)
        steps = ", ".join(f"{name} {us:5.1f}" for name, us in zip(STEPS, spent, strict=True))
        print(f"round {rnd}: µs CPU per transaction: {steps}, total {sum(spent):5.1f}")


if __name__ == "__main__":
    main()
