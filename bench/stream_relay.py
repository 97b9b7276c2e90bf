"""What relaying a stream costs the gateway, and whether many streams share its event
loop: gateway CPU per relayed event, and /livez and another tenant's latency while
fast streams run. Targets as bench/proxy_overhead.py names them (`gateway`,
`gateway@/path/to/tree`, an A/B against a worktree), each its own process against the
same simulated upstream, the target pinned to core 0, simulator and load to core 1.

    python bench/stream_relay.py [--targets gateway,gateway@/tmp/wt] [--repeats 2]
        [--streams 20] [--tokens 1500] [--delay-ms 10]
        [--fast-streams 100] [--fast-tokens 4000] [--seconds 10]

- cpu: `--streams` concurrent streams of `--tokens` tokens each, paced at `--delay-ms`
  per token by the simulator; the gateway's CPU (utime + stime, /proc) over the run
  divided by the events the clients read.
- fair: `--fast-streams` unpaced streams (a fast upstream), each started again when it
  ends, for `--seconds`; meanwhile /livez every 20 ms, and another tenant's one-token
  JSON calls one after another: their latencies (p50, p99, max) and how many got done.

Numbers only; no assertions.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from peers import PeerMissing, Target, start_target  # noqa: E402
from proxy_overhead import cpu_seconds, pin  # noqa: E402

from tests.servers import TENANT_KEYS, start_simulator, stop  # noqa: E402


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * q))] if xs else float("nan")


def _body(tokens: int, model: str = "gpt-4o-mini", stream: bool = True) -> dict[str, object]:
    return {
        "model": model,
        "stream": stream,
        "max_completion_tokens": tokens,
        "messages": [{"role": "user", "content": f"tell a long story {uuid.uuid4().hex}"}],
    }


async def _stream(
    client: httpx.AsyncClient, target: Target, tokens: int, delay_ms: float, seen: list[int]
) -> None:
    """One stream read to its end, counting its events (`data:` lines) into `seen[0]`."""
    headers = {
        **target.headers,
        "x-simulator-fill": "1",
        "x-simulator-chunk-delay-ms": str(delay_ms),
    }
    tail = b""
    async with client.stream("POST", target.url, json=_body(tokens), headers=headers) as r:
        async for chunk in r.aiter_raw():
            both = tail + chunk
            seen[0] += both.count(b"data:") - tail.count(b"data:")
            tail = both[-8:]


async def cpu_cell(
    target: Target, streams: int, tokens: int, delay_ms: float
) -> tuple[float, int, float]:
    """(µs of gateway CPU per event, events, seconds)."""
    limits = httpx.Limits(max_connections=streams + 8)
    async with httpx.AsyncClient(timeout=600, limits=limits) as client:
        await _stream(client, target, 5, 0, [0])  # warm: connections, imports
        seen = [0]
        c0, t0 = cpu_seconds(target.pid), time.perf_counter()
        await asyncio.gather(
            *(_stream(client, target, tokens, delay_ms, seen) for _ in range(streams))
        )
        dc, dt = cpu_seconds(target.pid) - c0, time.perf_counter() - t0
    events = seen[0]
    return dc / max(events, 1) * 1e6, events, dt


# A prober of its own (a process on the gateway's core): in the load generator's busy
# event loop, its latencies would be the load generator's own.
PROBE = """
import json, sys, time, httpx
url, seconds, method, body, key = sys.argv[1:6]
lat, end = [], time.perf_counter() + float(seconds)
with httpx.Client(timeout=120) as c:
    while time.perf_counter() < end:
        t = time.perf_counter()
        try:
            headers = {"authorization": key, "content-type": "application/json"}
            r = c.request(method, url, content=body or None, headers=headers)
            if r.status_code == 200:
                lat.append(time.perf_counter() - t)
        except httpx.HTTPError:
            pass
        time.sleep(0.02)
print(json.dumps(lat))
"""


async def _probe(url: str, seconds: float, method: str, body: bytes, key: str) -> list[float]:
    await asyncio.sleep(0.5)  # the streams under way
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        PROBE,
        url,
        str(seconds - 0.5),
        method,
        body.decode(),
        key,
        stdout=asyncio.subprocess.PIPE,
    )
    pin(proc.pid, {0})
    out, _ = await proc.communicate()
    lat: list[float] = orjson.loads(out)
    return lat


async def fair_cell(target: Target, streams: int, tokens: int, seconds: float) -> dict[str, Any]:
    base = target.url.split("/v1/")[0]
    stop_at = time.perf_counter() + seconds
    relayed = [0]

    async def noisy(client: httpx.AsyncClient) -> None:
        while time.perf_counter() < stop_at:
            try:
                await asyncio.wait_for(
                    _stream(client, target, tokens, 0, relayed),
                    max(stop_at - time.perf_counter(), 0.01),
                )
            except (TimeoutError, httpx.HTTPError):
                return

    limits = httpx.Limits(max_connections=streams + 8)
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:
        await _stream(client, target, 5, 0, [0])
        c0 = cpu_seconds(target.pid)
        victim = f"Bearer {TENANT_KEYS['globex']}"
        probes = asyncio.gather(
            _probe(f"{base}/livez", seconds, "GET", b"", ""),
            _probe(target.url, seconds, "POST", orjson.dumps(_body(1, stream=False)), victim),
        )
        await asyncio.gather(*(noisy(client) for _ in range(streams)))
        livez, other = await probes
        cpu = cpu_seconds(target.pid) - c0
    res: dict[str, Any] = {"events/s": relayed[0] / seconds, "cpu": cpu / seconds}
    for key, xs in (("livez", livez), ("victim", other)):
        res[key] = (len(xs), pct(xs, 0.5) * 1e3, pct(xs, 0.99) * 1e3, max(xs or [0]) * 1e3)
    return res


def _fair(r: dict[str, Any]) -> str:
    line = f"{r['events/s']:.0f} events/s relayed, gateway {r['cpu']:.0%} of a core"
    for key, name in (("livez", "livez"), ("victim", "other tenant's calls")):
        n, p50, p99, most = r[key]
        line += f" | {name} n={n} p50={p50:.1f}ms p99={p99:.1f}ms max={most:.0f}ms"
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", default="gateway")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--streams", type=int, default=20)
    parser.add_argument("--tokens", type=int, default=1500)
    parser.add_argument("--delay-ms", type=float, default=10)
    parser.add_argument("--fast-streams", type=int, default=100)
    parser.add_argument("--fast-tokens", type=int, default=4000)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--cells", default="cpu,fair")
    args = parser.parse_args()
    sim, upstream = start_simulator()
    targets: list[Target] = []
    try:
        for name in args.targets.split(","):
            try:
                targets.append(start_target(name, upstream))
            except PeerMissing as exc:
                print(f"skipped {name}: {exc}")
        pin(sim.pid, {1})
        os.sched_setaffinity(0, {1})
        for t in targets:
            pin(t.pid, {0})
        cells = args.cells.split(",")
        for rnd in range(args.repeats):
            for t in targets if rnd % 2 == 0 else targets[::-1]:
                if "cpu" in cells:
                    us, events, dt = asyncio.run(
                        cpu_cell(t, args.streams, args.tokens, args.delay_ms)
                    )
                    print(
                        f"cpu  {t.name:<22} {args.streams} streams x {args.tokens} tokens "
                        f"@{args.delay_ms:g}ms: {events} events in {dt:.1f}s, "
                        f"{us:.1f} us gateway CPU/event",
                        flush=True,
                    )
                if "fair" in cells:
                    r = asyncio.run(fair_cell(t, args.fast_streams, args.fast_tokens, args.seconds))
                    print(
                        f"fair {t.name:<22} {args.fast_streams} fast streams: {_fair(r)}",
                        flush=True,
                    )
    finally:
        for t in targets:
            t.stop()
        stop(sim)


if __name__ == "__main__":
    main()
