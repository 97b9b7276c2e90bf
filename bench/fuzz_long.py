"""A longer fuzz run than CI's: the strategies of `tests/fuzz_requests.py` against a real
gateway (simulated upstream, SQLite or Redis), collecting every failure instead of
stopping at the first, then checking that answered chat calls equal chat ledger rows.

    python bench/fuzz_long.py --examples 5000 [--store redis://127.0.0.1:6379/15]

A Redis store must be an empty database (the ledger count is compared).

Prints the number of requests by kind and status, and each distinct failure once.
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import time
from pathlib import Path

import httpx
from hypothesis import HealthCheck, given, settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fuzz_requests import Call, calls, check, send
from tests.servers import start_gateway, start_simulator, stop
from tests.test_fuzz import chat_rows


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--examples", type=int, default=3000)
    parser.add_argument("--store", default=None, help="store URL (default: a fresh SQLite file)")
    args = parser.parse_args()
    sim, sim_url = start_simulator()
    root = Path(tempfile.mkdtemp(prefix="fuzz-"))
    gw = start_gateway(root, sim_url, args.store or f"sqlite:///{root / 'gateway.db'}")
    seen: collections.Counter[tuple[str, int]] = collections.Counter()
    failures: dict[str, Call] = {}
    answered = 0
    periods = {time.strftime("%Y-%m", time.gmtime())}
    started = time.monotonic()
    try:
        with httpx.Client(base_url=gw.url, timeout=60) as client:

            @settings(
                max_examples=args.examples,
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            @given(calls)
            def one(call: Call) -> None:
                nonlocal answered
                response = send(client, call)
                seen[(call.kind, response.status_code)] += 1
                try:
                    check(call, response)
                except Exception as exc:  # noqa: BLE001 - collect, do not stop
                    failures.setdefault(f"{type(exc).__name__}: {str(exc)[:300]}", call)
                if call.kind == "chat" and response.is_success:
                    answered += 1

            one()
        periods.add(time.strftime("%Y-%m", time.gmtime()))
        time.sleep(1.0)  # the bookkeeper's last batch
        rows = chat_rows(gw, periods)
    finally:
        gw.stop()
        stop(sim)
    print(f"{sum(seen.values())} requests in {time.monotonic() - started:.0f} s")
    for (kind, status), n in sorted(seen.items()):
        print(f"  {kind:<13} {status}  {n}")
    print(f"answered chat calls {answered}, chat ledger rows {rows}")
    print(f"distinct failures: {len(failures)}")
    for text, call in failures.items():
        print(f"- {text}\n  {call}")
    tracebacks = gw.stderr().count("Traceback")
    print(f"tracebacks in the gateway's log: {tracebacks}")
    return 0 if not failures and rows == answered and not tracebacks else 1


if __name__ == "__main__":
    sys.exit(main())
