"""What one hostile request costs the gateway, and what it does to everyone else.

    python bench/hostile_bodies.py [--store URL] [--only NAME] [--short-messages N]
        [--repeat K]

Starts the simulated upstream and the gateway (one worker) as subprocesses, then sends
each adversarial body (40 KB strings that made backtracking regexes quadratic, 9 MB
bodies of one huge message and of thousands of messages; with `--short-messages N`, a
history of N short messages too), `--repeat` times each, while another client polls
/healthz every 20 ms. Prints the gateway's CPU seconds for the request (from
/proc/<pid>/stat, utime + stime, so it includes the /healthz polls) and the /healthz
latency p50 and max meanwhile. Numbers only, no assertions.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.hostile import hostile_bodies, probe, short_messages_body  # noqa: E402
from tests.servers import TENANT_KEYS, start_gateway, start_simulator, stop  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--store", default=os.environ.get("REDIS_URL"))
    parser.add_argument("--only", default=None, help="run the bodies whose name contains this")
    parser.add_argument("--short-messages", type=int, default=0, help="a history of N too")
    parser.add_argument("--repeat", type=int, default=1, help="send each body K times")
    args = parser.parse_args()
    bodies = hostile_bodies()
    if args.short_messages:
        bodies[f"{args.short_messages} short msgs"] = short_messages_body(args.short_messages)
    sim, upstream = start_simulator()
    with tempfile.TemporaryDirectory() as tmp:
        store = args.store or f"sqlite:///{Path(tmp) / 'gateway.db'}"
        gw = start_gateway(Path(tmp), upstream, store)
        try:
            print(
                f"{'body':<22}{'bytes':>10}{'status':>8}{'cpu s':>8}{'wall s':>8}"
                f"{'healthz p50 ms':>16}{'max ms':>8}"
            )
            for name, body in bodies.items():
                if args.only and args.only not in name:
                    continue
                for _ in range(args.repeat):
                    p = probe(gw.url, gw.proc.pid, TENANT_KEYS["acme"], body)
                    print(
                        f"{name:<22}{len(body):>10}{p.status:>8}{p.cpu_s:>8.2f}{p.wall_s:>8.2f}"
                        f"{p.healthz_p50:>16.1f}{p.healthz_max:>8.1f}",
                        flush=True,
                    )
        finally:
            gw.stop()
            stop(sim)


if __name__ == "__main__":
    main()
