"""What one hostile request costs the gateway, and what it does to everyone else.

    python bench/hostile_bodies.py [--store URL] [--only NAME] [--short-messages N]
        [--nested N] [--repeat K] [--poll PATH] [--port P] [--max-body-containers C]

Starts the simulated upstream and the gateway (one worker) as subprocesses, then sends
each adversarial body (40 KB strings that made backtracking regexes quadratic, 9 MB
bodies of one huge message and of thousands of messages; with `--short-messages N`, a
history of N short messages too; with `--nested N`, a chat, a Responses and a
moderations body whose one part carries N small arrays ten deep, 10 N arrays in all,
each sent to its route), `--repeat` times each, while another client polls /healthz (or
`--poll /livez`) every 20 ms. Prints the gateway's CPU seconds for the request (from
/proc/<pid>/stat, utime + stime, so it includes the polls) and the polled route's
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

from tests.hostile import (  # noqa: E402
    NESTED_ROUTES,
    hostile_bodies,
    nested_arrays_body,
    probe,
    short_messages_body,
)
from tests.servers import TENANT_KEYS, start_gateway, start_simulator, stop  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--store", default=os.environ.get("REDIS_URL"))
    parser.add_argument("--only", default=None, help="run the bodies whose name contains this")
    parser.add_argument("--short-messages", type=int, default=0, help="a history of N too")
    parser.add_argument("--nested", type=int, default=0, help="N nested arrays, per route")
    parser.add_argument("--repeat", type=int, default=1, help="send each body K times")
    parser.add_argument("--poll", default="/healthz", help="the route polled meanwhile")
    parser.add_argument("--port", type=int, default=None, help="the simulator's (gateway +1)")
    parser.add_argument("--max-body-containers", type=int, default=None)
    args = parser.parse_args()
    bodies = {name: ("/v1/chat/completions", body) for name, body in hostile_bodies().items()}
    if args.short_messages:
        bodies[f"{args.short_messages} short msgs"] = (
            "/v1/chat/completions",
            short_messages_body(args.short_messages),
        )
    for route, path in NESTED_ROUTES.items() if args.nested else ():
        bodies[f"{args.nested} nested {route}"] = (path, nested_arrays_body(route, args.nested))
    most = args.max_body_containers
    limits = {"limits": {"max_body_containers": most}} if most is not None else {}
    sim, upstream = start_simulator(args.port)
    with tempfile.TemporaryDirectory() as tmp:
        store = args.store or f"sqlite:///{Path(tmp) / 'gateway.db'}"
        port = args.port + 1 if args.port else None
        gw = start_gateway(Path(tmp), upstream, store, port=port, **limits)
        try:
            print(
                f"{'body':<24}{'bytes':>10}{'status':>8}{'cpu s':>8}{'wall s':>8}"
                f"{args.poll + ' p50 ms':>16}{'max ms':>8}"
            )
            for name, (path, body) in bodies.items():
                if args.only and args.only not in name:
                    continue
                for _ in range(args.repeat):
                    p = probe(
                        gw.url, gw.proc.pid, TENANT_KEYS["acme"], body, path=path, poll=args.poll
                    )
                    print(
                        f"{name:<24}{len(body):>10}{p.status:>8}{p.cpu_s:>8.2f}{p.wall_s:>8.2f}"
                        f"{p.healthz_p50:>16.1f}{p.healthz_max:>8.1f}",
                        flush=True,
                    )
        finally:
            gw.stop()
            stop(sim)


if __name__ == "__main__":
    main()
