"""What a chat request of very many short messages does to everyone else.

    python bench/many_messages_stall.py [N]   (default 150,000 messages, ~6.5 MB)

Starts the simulated upstream and the gateway (one worker, SQLite) as subprocesses, then
sends the request twice while another client polls /healthz every 20 ms
(tests.hostile.probe). Prints the gateway's CPU seconds for the request and the longest
/healthz answer meanwhile: how long the event loop was held. Numbers only.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.hostile import probe
from tests.servers import TENANT_KEYS, start_gateway, start_simulator, stop


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 150_000
    roles = ("user", "assistant")
    msgs = [{"role": roles[i % 2], "content": f"msg {i} ok"} for i in range(n)]
    msgs.append({"role": "user", "content": "where is my order?"})
    body = orjson.dumps({"model": "gpt-4o-mini", "messages": msgs})
    sim, upstream = start_simulator()
    with tempfile.TemporaryDirectory() as tmp:
        gw = start_gateway(Path(tmp), upstream, f"sqlite:///{Path(tmp) / 'gateway.db'}")
        try:
            for _ in range(2):
                p = probe(gw.url, gw.proc.pid, TENANT_KEYS["acme"], body)
                print(
                    f"{n} messages, {len(body)} bytes: {p.status}, cpu {p.cpu_s:.2f} s, "
                    f"wall {p.wall_s:.2f} s, healthz p50 {p.healthz_p50:.1f} ms, "
                    f"max {p.healthz_max:.1f} ms",
                    flush=True,
                )
        finally:
            gw.stop()
            stop(sim)


if __name__ == "__main__":
    main()
