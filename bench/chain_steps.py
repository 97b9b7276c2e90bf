"""Where a chat request's time goes, step by step: the gateway serving a cell of
`bench/proxy_overhead.py`, each step of the request chain timed (wall clock, and the
event loop thread's CPU for the whole handler), printed as medians beside the added
delay of the first byte.

    python bench/chain_steps.py [--cells 1-stream-1,60-json-1] [--shapes growing]
        [--requests 400]

The gateway runs in a child process started by this script (`--serve`), with its own
steps wrapped by timers: the figures include the timers' own cost (~1 µs a step). Steps
nest: `WindowBuilder.build` holds `TurnFacts.newest` and the others under it; the
handler (`chat_completions`) holds every step, and `Upstream.send` the upstream's own
time to its headers. Measurement only, no assertions; the gateway's behaviour is not
changed, only observed.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from peers import Target  # noqa: E402
from proxy_overhead import Cell, pct, play, scripts  # noqa: E402

from tests.servers import (  # noqa: E402
    ADMIN_KEY,
    PROVIDER_KEY,
    TENANT_KEYS,
    free_port,
    start_simulator,
    stop,
    wait_http,
    write_config,
)

# (module, class, method): the chain's steps, in the order a request meets them.
STEPS = [
    ("gateway.runtime", "Gateway", "guard_store"),
    ("gateway.context.builder", "WindowBuilder", "build"),
    ("gateway.context.conversations", "ConversationStore", "load_with_facts"),
    ("gateway.context.turn_facts", "TurnFacts", "newest"),
    ("gateway.context.episodes", "EpisodeBook", "of_customer"),
    ("gateway.context.builder", "WindowBuilder", "_compact"),
    ("gateway.spend.rate_guard", "RateGuard", "admit"),
    ("gateway.spend.guard", "SpendGuard", "reserve"),
    ("gateway.proxy.upstream", "Upstream", "send"),
    ("gateway.context.builder", "WindowBuilder", "written"),
]
HANDLER = "chat_completions"


def _timed(times: dict[str, list[float]], label: str, fn: Callable[..., Any]) -> Any:
    @functools.wraps(fn)
    async def step(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return await fn(*args, **kwargs)
        finally:
            times.setdefault(label, []).append(time.perf_counter() - start)

    return step


def serve(config: str, port: int, out: str) -> None:
    """The gateway with its steps timed; the times are written to `out` on SIGTERM."""
    import importlib

    times: dict[str, list[float]] = {}
    for module, cls, name in STEPS:
        owner = getattr(importlib.import_module(module), cls)
        setattr(owner, name, _timed(times, f"{cls}.{name}", getattr(owner, name)))
    chat = importlib.import_module("gateway.proxy.chat")  # before the app imports it
    handler = chat.chat_completions

    async def timed_handler(request: Any) -> Any:
        start, cpu = time.perf_counter(), time.thread_time()
        try:
            return await handler(request)
        finally:
            times.setdefault(HANDLER, []).append(time.perf_counter() - start)
            times.setdefault(f"{HANDLER} (loop CPU)", []).append(time.thread_time() - cpu)

    chat.chat_completions = timed_handler

    def dump(*_: Any) -> None:
        Path(out).write_bytes(orjson.dumps(times))
        os._exit(0)

    signal.signal(signal.SIGTERM, dump)
    from gateway.ops.cli import cli_logic

    cli_logic(["serve", "--config", config, "--port", str(port)])


def _start(root: Path, upstream: str) -> tuple[subprocess.Popen[bytes], Target, Path]:
    config = write_config(root, upstream, f"sqlite:///{root / 'g.db'}")
    port = free_port()
    out = root / "times.json"
    env = {**os.environ, "TEST_PROVIDER_KEY": PROVIDER_KEY, "TEST_ADMIN_KEY": ADMIN_KEY}
    argv = [sys.executable, __file__, "--serve", str(config), str(port), str(out)]
    proc = subprocess.Popen(
        ["taskset", "-c", "0", *argv], env=env, stderr=subprocess.DEVNULL, cwd=root
    )
    wait_http(f"http://127.0.0.1:{port}/livez", proc)
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    target = Target("gateway", [proc], url, {"Authorization": f"Bearer {TENANT_KEYS['acme']}"})
    return proc, target, out


def _direct(upstream: str) -> Target:
    return Target("direct", [], f"{upstream}/chat/completions", {"Authorization": "Bearer x"})


def measure(cell: Cell, shape: str, requests: int, upstream: str) -> None:
    root = Path(tempfile.mkdtemp(prefix="bench-steps-"))
    proc, target, out = _start(root, upstream)
    try:
        warm, timed = scripts(target, cell, shape, requests, "steps")
        asyncio.run(play(target.url, warm, 1))
        through = asyncio.run(play(target.url, timed, cell.concurrency))
        dwarm, dtimed = scripts(_direct(upstream), cell, shape, requests, "direct")
        asyncio.run(play(_direct(upstream).url, dwarm, 1))
        direct = asyncio.run(play(_direct(upstream).url, dtimed, cell.concurrency))
    finally:
        stop(proc)
    times: dict[str, list[float]] = orjson.loads(out.read_bytes())
    print(f"\n{cell} {shape}: {len(through.total)} requests")
    added = pct(through.first_byte, 50) - pct(direct.first_byte, 50)
    print(f"  {'first byte added (p50)':44s}{added * 1e3:8.3f} ms")
    print(f"  {'first byte, upstream alone (p50)':44s}{pct(direct.first_byte, 50) * 1e3:8.3f} ms")
    for label in [HANDLER, f"{HANDLER} (loop CPU)", *(f"{c}.{m}" for _, c, m in STEPS)]:
        values = times.get(label, [])[-len(through.total) :]  # the timed requests
        if values:
            print(f"  {label:44s}{statistics.median(values) * 1e3:8.3f} ms  (n={len(values)})")


def main() -> None:
    if sys.argv[1:2] == ["--serve"]:
        serve(sys.argv[2], int(sys.argv[3]), sys.argv[4])
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cells", default="1-stream-1,60-json-1")
    ap.add_argument("--shapes", default="growing")
    ap.add_argument("--requests", type=int, default=400)
    args = ap.parse_args()
    sim, upstream = start_simulator()
    try:
        for text in args.cells.split(","):
            for shape in args.shapes.split(","):
                measure(Cell.parse(text), shape, args.requests, upstream)
    finally:
        stop(sim)


if __name__ == "__main__":
    main()
