"""What a proxy adds to a request, the gateway beside its peers in one run: CPU per
request, requests/s per core, added latency (vs calling the upstream directly) and added
delay of the first streamed byte.

    python bench/proxy_overhead.py [--targets gateway,portkey,litellm] [--requests 400]
        [--cells 60-json-1,60-json-64,1-stream-8,1-stream-1] [--shapes growing,repeat]
        [--repeats 2] [--store URL] [--workers N] [--ceiling]

Every target is started as its own process (`bench/peers.py`; peers are optional, see
bench/README.md) against the same simulated upstream. The target under test is pinned to
core 0 (with every thread it has), the simulator and this load generator to core 1.
Cells run target after target, alternating for `--repeats` rounds, and each figure is
printed with its ratio to the peer named by `--ratio-to` measured in the same round.

Two traffic shapes, as a stateless app sends them:
- growing: each conversation resends its whole history plus one new turn per request.
  A cell "60-json" plays turns 60-79 of each conversation (turns up to 59 are sent
  first, untimed); "1-..." is a new one-turn conversation per request.
- repeat: the byte-identical body again and again (a client's retries, or a load tool).

Numbers only; no assertions.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import os
import statistics
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from peers import PeerMissing, Target, start_target  # noqa: E402

from gateway.proxy.transport import _Connection, _request_bytes  # noqa: E402
from tests.servers import TENANT_KEYS, start_simulator, stop  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")
TURNS_PER_CONVERSATION = 20  # timed turns of each growing conversation


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and every process under it (uvicorn's workers)."""
    total = 0.0
    for p in [pid, *_descendants(pid)]:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / TICK
    return total


def switches(pid: int) -> int:
    """Context switches of every thread of a process and of the processes under it: a
    thread handing the GIL to another, or waiting for it, is one."""
    total = 0
    for p in [pid, *_descendants(pid)]:
        for task in Path(f"/proc/{p}/task").glob("*"):
            with contextlib.suppress(OSError):  # a thread that ended meanwhile
                for line in (task / "status").read_text().splitlines():
                    if "ctxt_switches:" in line:
                        total += int(line.split()[-1])
    return total


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def pin(pid: int, cores: set[int]) -> None:
    """Pin a process, each of its threads and its children."""
    for p in [pid, *_descendants(pid)]:
        for task in Path(f"/proc/{p}/task").iterdir():
            with contextlib.suppress(OSError):  # a thread that ended meanwhile
                os.sched_setaffinity(int(task.name), cores)


def system_prompt(tag: str) -> str:
    return f"You are a support agent for an online store ({tag}). " * 20


def user_turn(n: int, tag: str) -> dict[str, str]:
    """A customer's turn; no two conversations say the same (as no two customers do)."""
    text = f"Turn {n} of {tag}: my order ORD-{n:05d} " + "details " * 150
    return {"role": "user", "content": text}


def agent_turn(n: int) -> dict[str, str]:
    return {"role": "assistant", "content": f"Noted for turn {n}. " + "reply " * 40}


def messages(turn: int, tag: str) -> list[dict[str, str]]:
    """A conversation's request at user turn `turn` (1-based): its history and the turn."""
    out = [{"role": "system", "content": system_prompt(tag)}]
    for n in range(turn - 1):
        out += [user_turn(n, tag), agent_turn(n)]
    return [*out, user_turn(turn - 1, tag)]


@dataclass(frozen=True)
class Cell:
    turns: int
    stream: bool
    concurrency: int

    @classmethod
    def parse(cls, text: str) -> Cell:
        turns, kind, conc = text.split("-")
        return cls(int(turns), kind == "stream", int(conc))

    def __str__(self) -> str:
        return f"{self.turns}-turn {'stream' if self.stream else 'json'} c={self.concurrency}"


def payload(target: Target, msgs: list[dict[str, str]], stream: bool, conv: str) -> bytes:
    body = orjson.dumps(
        {"model": "gpt-4o-mini", "stream": stream, "max_tokens": 16, "messages": msgs}
    )
    headers = {**target.headers, "Content-Type": "application/json", "X-Conversation-Id": conv}
    return _request_bytes(httpx.Request("POST", target.url, content=body, headers=headers), body)


def scripts(
    target: Target, cell: Cell, shape: str, requests: int, run: str
) -> tuple[list[list[bytes]], list[list[bytes]]]:
    """(untimed warm-up scripts, timed scripts): each script is one connection's requests
    in order. A conversation's turns stay on one script, so they arrive in order."""
    if shape == "repeat":
        body = payload(target, messages(cell.turns, run), cell.stream, f"{run}-r")
        per = math.ceil(requests / cell.concurrency)
        return [[body] * 5], [[body] * per for _ in range(cell.concurrency)]
    if cell.turns == 1:
        timed = [
            [payload(target, messages(1, f"{run}-{i}"), cell.stream, f"{run}-{i}")]
            for i in range(requests)
        ]
        return [], timed
    count = max(cell.concurrency, math.ceil(requests / TURNS_PER_CONVERSATION))
    per = math.ceil(requests / count)
    warm, timed = [], []
    for i in range(count):
        tag = f"{run}-{i}"
        warm.append([payload(target, messages(cell.turns - 1, tag), cell.stream, tag)])
        timed.append(
            [payload(target, messages(cell.turns + t, tag), cell.stream, tag) for t in range(per)]
        )
    return warm, timed


@dataclass
class Sample:
    total: list[float]
    first_byte: list[float]


async def play(url: str, todo: list[list[bytes]], concurrency: int) -> Sample:
    """A light load generator: raw keep-alive HTTP/1.1 connections (the gateway's own
    protocol class), requests serialized up front, so the client costs little CPU."""
    host, port = httpx.URL(url).host, httpx.URL(url).port
    totals: list[float] = []
    firsts: list[float] = []
    loop = asyncio.get_running_loop()
    queue: Iterator[list[bytes]] = iter(todo)

    async def worker() -> None:
        _, conn = await loop.create_connection(_Connection, host, port)
        try:
            for script in queue:
                for body in script:
                    start = time.perf_counter()
                    await conn.start(body)
                    first = 0.0
                    async for _ in conn.body(60):
                        if not first:
                            first = time.perf_counter() - start
                    if conn.status != 200:
                        raise RuntimeError(f"{url} answered {conn.status}")
                    totals.append(time.perf_counter() - start)
                    firsts.append(first)
        finally:
            conn.close()

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return Sample(totals, firsts)


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] if len(values) > 2 else values[0]


@dataclass
class Figures:
    cpu: float  # seconds per request
    rps_per_core: float
    added_p50: float
    added_p99: float
    first_byte_added: float
    switches: float  # context switches per request, the target's threads together


def measure(
    target: Target, direct: Target, cell: Cell, shape: str, requests: int, run: str
) -> Figures:
    for t in (direct, target):  # a JIT, caches and pools warm up on their own traffic
        warm, timed = scripts(t, cell, shape, min(requests, 100), run + "w")
        asyncio.run(play(t.url, [*warm, *timed], cell.concurrency))
    warm_d, timed_d = scripts(direct, cell, shape, requests, run + "d")
    warm_t, timed_t = scripts(target, cell, shape, requests, run + "t")
    asyncio.run(play(direct.url, warm_d, cell.concurrency))
    asyncio.run(play(target.url, warm_t, cell.concurrency))
    d = asyncio.run(play(direct.url, timed_d, cell.concurrency))
    cpu0, switches0 = cpu_seconds(target.pid), switches(target.pid)
    v = asyncio.run(play(target.url, timed_t, cell.concurrency))
    cpu = (cpu_seconds(target.pid) - cpu0) / len(v.total)
    switched = (switches(target.pid) - switches0) / len(v.total)
    return Figures(
        cpu=cpu,
        rps_per_core=1 / cpu if cpu else float("inf"),
        added_p50=pct(v.total, 50) - pct(d.total, 50),
        added_p99=pct(v.total, 99) - pct(d.total, 99),
        first_byte_added=pct(v.first_byte, 50) - pct(d.first_byte, 50)
        if cell.stream
        else float("nan"),
        switches=switched,
    )


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--targets",
        default="gateway",
        help="gateway,portkey,litellm,minimal; gateway@DIR: the gateway of the tree at DIR (A/B)",
    )
    parser.add_argument("--cells", default="60-json-1,60-json-64,1-stream-8,1-stream-1")
    parser.add_argument("--shapes", default="growing,repeat")
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--ratio-to", default="portkey")
    parser.add_argument("--store", default=None, help="gateway store URL (default: SQLite)")
    parser.add_argument("--workers", type=int, default=1, help="gateway worker processes")
    parser.add_argument("--cores", default="0", help="cores for the target, e.g. 0 or 0,1")
    parser.add_argument(
        "--ceiling", action="store_true", help="gateway: spend ceilings, so calls reserve"
    )
    return parser.parse_args()


def _start(args: argparse.Namespace, upstream: str, targets: list[Target]) -> None:
    """Starts each target into `targets` (so the caller stops those that started, even
    when a later one fails)."""
    spend = None
    if args.ceiling:
        ceiling = {"monthly_usd": 1_000_000, "daily_usd": 1_000_000, "action": "block"}
        spend = {"plans": {"pro": ceiling}}
    for name in args.targets.split(","):
        try:
            targets.append(start_target(name, upstream, args.store, args.workers, spend))
        except PeerMissing as exc:
            print(f"skipped {name}: {exc}")


def main() -> None:
    args = _arguments()
    sim, upstream = start_simulator()
    direct = Target("direct", [sim], f"{upstream}/chat/completions", {})
    direct.headers = {"Authorization": f"Bearer {TENANT_KEYS['acme']}"}
    targets: list[Target] = []
    try:
        _start(args, upstream, targets)
        pin(sim.pid, {1})
        os.sched_setaffinity(0, {1})
        for t in targets:
            pin(t.pid, {int(c) for c in args.cores.split(",")})
        print(
            f"targets={','.join(t.name for t in targets)} requests={args.requests} "
            f"store={args.store or 'sqlite'} workers={args.workers} cores={args.cores} "
            f"ceilings={'on' if args.ceiling else 'off'}"
        )
        print(
            f"{'cell':<22}{'shape':<9}{'target':<9}{'CPU/req':>9}{'req/s/core':>11}"
            f"{'added p50':>10}{'added p99':>10}{'1st byte+':>10}{'switch/req':>11}"
            f"  ratio to {args.ratio_to}"
        )
        for cell in (Cell.parse(c) for c in args.cells.split(",")):
            for shape in args.shapes.split(","):
                for rnd in range(args.repeats):
                    row: dict[str, Figures] = {}
                    for t in targets if rnd % 2 == 0 else targets[::-1]:
                        run = f"{t.name}{rnd}{shape[0]}{cell.turns}{cell.concurrency}"
                        row[t.name] = measure(t, direct, cell, shape, args.requests, run)
                    for t in targets:
                        _print(cell, shape, t.name, row[t.name], row.get(args.ratio_to))
    finally:
        for t in targets:
            t.stop()
        stop(sim)


def _print(cell: Cell, shape: str, name: str, f: Figures, peer: Figures | None) -> None:
    ratio = ""
    if peer is not None and peer.cpu:
        gap = (f.added_p50 - peer.added_p50) * 1e3
        ratio = f"  CPU x{f.cpu / peer.cpu:.2f}  p50 {gap:+.2f}ms"
    print(
        f"{cell!s:<22}{shape:<9}{name:<9}{f.cpu * 1e3:>7.2f}ms{f.rps_per_core:>11.0f}"
        f"{f.added_p50 * 1e3:>8.2f}ms{f.added_p99 * 1e3:>8.2f}ms"
        f"{f.first_byte_added * 1e3:>8.2f}ms{f.switches:>11.1f}{ratio}",
        flush=True,
    )


if __name__ == "__main__":
    main()
