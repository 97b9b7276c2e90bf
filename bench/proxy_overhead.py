"""What the gateway adds to a request: latency (vs. calling the upstream directly),
CPU per request, and delay of the first streamed byte.

    python bench/proxy_overhead.py [--requests 400] [--target gateway|minimal] [--store URL]

Starts the simulated upstream and the target (one worker) as separate processes, drives
them with an async httpx client, and reads the target's CPU time from /proc. Prints a
table; numbers only, no assertions.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import orjson
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gateway.proxy.transport import _Connection, _request_bytes  # noqa: E402
from tests.servers import (  # noqa: E402
    TENANT_KEYS,
    free_port,
    start_gateway,
    start_simulator,
    stop,
    wait_http,
)

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def conversation(turns: int) -> list[dict]:
    msgs = [{"role": "system", "content": "You are a support agent for an online store. " * 20}]
    for n in range(turns - 1):
        msgs.append(
            {"role": "user", "content": f"Turn {n}: my order ORD-{n:05d} " + "details " * 150}
        )
        msgs.append({"role": "assistant", "content": f"Noted for turn {n}. " + "reply " * 40})
    return msgs


@dataclass
class Sample:
    total: list[float]
    first_byte: list[float]


def request_bytes(url: str, key: str, history: list[dict], n: int, stream: bool) -> bytes:
    body = orjson.dumps(
        {
            "model": "gpt-4o-mini",
            "stream": stream,
            "max_tokens": 16,
            "messages": [*history, {"role": "user", "content": f"new question {n}"}],
        }
    )
    req = httpx.Request(
        "POST",
        url,
        content=body,
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    return _request_bytes(req, body)


async def run_load(
    url: str, key: str, history: list[dict], requests: int, concurrency: int, stream: bool
) -> Sample:
    """A light load generator: raw keep-alive HTTP/1.1 connections (the gateway's own
    protocol class), requests serialized up front, so the client costs little CPU."""
    host, port = httpx.URL(url).host, httpx.URL(url).port
    payloads = [request_bytes(url, key, history, n, stream) for n in range(requests)]
    totals: list[float] = []
    firsts: list[float] = []
    loop = asyncio.get_running_loop()
    todo = iter(payloads)

    async def worker() -> None:
        _, conn = await loop.create_connection(_Connection, host, port)
        try:
            for payload in todo:
                start = time.perf_counter()
                await conn.start(payload)
                first = 0.0
                async for _ in conn.body(60):
                    if not first:
                        first = time.perf_counter() - start
                assert conn.status == 200, conn.status
                totals.append(time.perf_counter() - start)
                firsts.append(first)
        finally:
            conn.close()

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return Sample(totals, firsts)


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] if len(values) > 2 else values[0]


def measure(
    target_url: str,
    pid: int,
    direct_url: str,
    history: list[dict],
    requests: int,
    concurrency: int,
    stream: bool,
) -> dict[str, float]:
    key = TENANT_KEYS["acme"]
    asyncio.run(run_load(direct_url, key, history, 50, concurrency, stream))  # warm up both
    asyncio.run(run_load(target_url, key, history, 50, concurrency, stream))
    direct = asyncio.run(run_load(direct_url, key, history, requests, concurrency, stream))
    cpu0 = cpu_seconds(pid)
    via = asyncio.run(run_load(target_url, key, history, requests, concurrency, stream))
    cpu = (cpu_seconds(pid) - cpu0) / requests
    return {
        "direct_p50": pct(direct.total, 50),
        "via_p50": pct(via.total, 50),
        "added_p50": pct(via.total, 50) - pct(direct.total, 50),
        "added_p99": pct(via.total, 99) - pct(direct.total, 99),
        "cpu": cpu,
        "first_byte_added_p50": pct(via.first_byte, 50) - pct(direct.first_byte, 50),
    }


def start_minimal(upstream: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "bench" / "minimal_passthrough.py"), upstream, str(port)]
    )
    wait_http(f"http://127.0.0.1:{port}/v1/chat/completions", proc)
    return proc, f"http://127.0.0.1:{port}/v1/chat/completions"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--target", choices=["gateway", "minimal"], default="gateway")
    parser.add_argument("--store", default=None, help="store URL (default: SQLite in a temp dir)")
    parser.add_argument("--concurrency", default="1,64")
    parser.add_argument(
        "--ceiling",
        action="store_true",
        help="configure spend ceilings, so every call reserves and settles",
    )
    args = parser.parse_args()
    sim, upstream = start_simulator()
    tmp = Path(tempfile.mkdtemp(prefix="bench-"))
    try:
        if args.target == "gateway":
            gw = start_gateway(tmp, upstream, args.store or f"sqlite:///{tmp / 'g.db'}")
            if args.ceiling:
                ceiling = {"monthly_usd": 1_000_000, "daily_usd": 1_000_000, "action": "block"}
                (tmp / "policies" / "spend.yaml").write_text(
                    yaml.safe_dump({"plans": {"pro": ceiling}})
                )
                gw.restart()
            proc, url = gw.proc, f"{gw.v1}/chat/completions"
        else:
            proc, url = start_minimal(upstream)
        direct = f"{upstream}/chat/completions"
        # One core for the proxy under test, the other for the upstream and the load.
        os.sched_setaffinity(proc.pid, {0})
        os.sched_setaffinity(sim.pid, {1})
        os.sched_setaffinity(0, {1})
        print(
            f"target={args.target} store={args.store or 'sqlite'} requests={args.requests} "
            f"ceilings={'on' if args.ceiling else 'off'}"
        )
        print(
            f"{'case':<28}{'direct p50':>11}{'via p50':>9}{'added p50':>10}{'added p99':>10}"
            f"{'CPU/req':>9}{'1st byte+':>10}"
        )
        for turns in (1, 60):
            history = conversation(turns)[:-1] if turns == 1 else conversation(turns)
            for stream in (False, True):
                for conc in (int(c) for c in args.concurrency.split(",")):
                    r = measure(url, proc.pid, direct, history, args.requests, conc, stream)
                    name = f"{turns}-turn {'stream' if stream else 'json'} c={conc}"
                    print(
                        f"{name:<28}{r['direct_p50'] * 1e3:>9.2f}ms{r['via_p50'] * 1e3:>7.2f}ms"
                        f"{r['added_p50'] * 1e3:>8.2f}ms{r['added_p99'] * 1e3:>8.2f}ms"
                        f"{r['cpu'] * 1e3:>7.2f}ms"
                        f"{(r['first_byte_added_p50'] * 1e3 if stream else float('nan')):>8.2f}ms",
                        flush=True,
                    )
    finally:
        stop(proc)
        stop(sim)


if __name__ == "__main__":
    main()
