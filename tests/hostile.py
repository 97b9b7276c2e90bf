"""Hostile request bodies, and a probe that sends one to a gateway subprocess while
another client polls /healthz (or /livez). Shared by tests/test_hostile_cpu.py and
bench/hostile_bodies.py."""

from __future__ import annotations

import os
import statistics
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import orjson

TICK = os.sysconf("SC_CLK_TCK")
KB = 1024

# Strings that made backtracking regexes quadratic: every position starts a match
# attempt that runs to the end of the run before failing.
ADVERSARIAL_TEXTS = {
    "digits-commas": "1," * (20 * KB),  # amount: \d[\d,]*... then no currency
    "dotted-words": "a." * (20 * KB),  # email: [\w.+-]+ then no @
    "capitals": "A" * (40 * KB),  # identifier: [A-Z]{2,}[A-Z0-9]*\d, no digit
    "email-ish": "a@a.a" * (8 * KB),
    "email-dots": "a@" + "a." * (20 * KB),
}


def _messages_body(messages: list[dict[str, str]]) -> bytes:
    return orjson.dumps({"model": "gpt-4o-mini", "messages": messages})


def adversarial_body(text: str) -> bytes:
    return _messages_body([{"role": "user", "content": text}])


def huge_message_body(size: int = 9 * KB * KB) -> bytes:
    """One user message of `size` bytes: prose sprinkled with identifiers and amounts."""
    unit = "My order ORD-12345 cost $1,234.50 and I wrote to ann@example.com about it. "
    return _messages_body([{"role": "user", "content": unit * (size // len(unit))}])


def many_messages_body(size: int = 9 * KB * KB, each: int = 2 * KB) -> bytes:
    """A history of `size` bytes in messages of `each` bytes, each one adversarial."""
    pieces = ["1,", "a.", "A", "a@a.a"]
    messages = []
    for n in range(size // each):
        piece = pieces[n % len(pieces)]
        role = "user" if n % 2 == 0 else "assistant"
        messages.append({"role": role, "content": piece * (each // len(piece))})
    messages.append({"role": "user", "content": "So where is my order ORD-99999?"})
    return _messages_body(messages)


def short_messages_body(count: int) -> bytes:
    """A history of `count` short messages (150,000 make ~6.5 MB): the window's passes
    over every message, not any one message's size, are what it costs."""
    roles = ("user", "assistant")
    messages = [{"role": roles[i % 2], "content": f"msg {i} ok"} for i in range(count)]
    messages.append({"role": "user", "content": "where is my order?"})
    return _messages_body(messages)


# Many small arrays, ten deep: each costs orjson an allocation with the GIL held, and the
# gateway's checks a step of their walk (the red team's shape, in an extra key of a part).
NEST = [[[[[[[[[[1]]]]]]]]]]
# Where each route carries a content part (a route: its path, and its body around one).
NESTED_ROUTES = {
    "chat": "/v1/chat/completions",
    "responses": "/v1/responses",
    "moderations": "/v1/moderations",
}


def nested_arrays_body(route: str, count: int) -> bytes:
    """A body for `route` (of NESTED_ROUTES) whose one text part carries `count` NESTs
    (10 arrays each) in an extra key: 450,000 make 9.9 MB."""
    nests = [NEST] * count
    if route == "chat":
        part = {"type": "text", "text": "hello", "x": nests}
        return orjson.dumps(
            {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": [part]}]}
        )
    if route == "responses":
        part = {"type": "input_text", "text": "hello", "x": nests}
        item = {"role": "user", "content": [part]}
        return orjson.dumps({"model": "gpt-4o-mini", "input": [item]})
    part = {"type": "text", "text": "hello", "x": nests}
    return orjson.dumps({"model": "omni-moderation-latest", "input": [part]})


def hostile_bodies() -> dict[str, bytes]:
    bodies = {f"40KB {name}": adversarial_body(text) for name, text in ADVERSARIAL_TEXTS.items()}
    bodies["9MB one message"] = huge_message_body()
    bodies["9MB many messages"] = many_messages_body()
    return bodies


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process (all its threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


@dataclass
class Probe:
    status: int
    cpu_s: float
    wall_s: float
    healthz_ms: list[float] = field(default_factory=list)

    @property
    def healthz_p50(self) -> float:
        return statistics.median(self.healthz_ms) if self.healthz_ms else float("nan")

    @property
    def healthz_max(self) -> float:
        return max(self.healthz_ms, default=float("nan"))


def _poll(url: str, stop: threading.Event, out: list[float]) -> None:
    with httpx.Client(timeout=30) as client:
        while not stop.is_set():
            started = time.perf_counter()
            client.get(url)
            out.append((time.perf_counter() - started) * 1000)
            stop.wait(0.02)


def probe(
    url: str,
    pid: int,
    key: str,
    body: bytes,
    timeout: float = 120,
    path: str = "/v1/chat/completions",
    poll: str = "/healthz",
    named: bool = True,
) -> Probe:
    """Send `body` to `path` while `poll` is polled from another thread; the gateway's
    CPU is read before and after. `named`: the call names its conversation and customer,
    as a real app's do (so the customer's facts are extracted); else the gateway knows
    the conversation by its opening."""
    latencies: list[float] = []
    stop = threading.Event()
    poller = threading.Thread(target=_poll, args=(url + poll, stop, latencies), daemon=True)
    with httpx.Client(timeout=timeout) as client:
        client.get(url + poll)  # connection and first-request costs out of the way
        before, started = cpu_seconds(pid), time.perf_counter()
        poller.start()
        while not latencies:  # `poll` is being answered before the body goes out
            time.sleep(0.005)
        try:
            response = client.post(
                url + path,
                content=body,
                headers={
                    "Authorization": f"Bearer {key}",
                    "Content-Type": "application/json",
                    **(
                        {
                            "X-Conversation-Id": f"hostile-{time.monotonic_ns()}",
                            "X-Customer-Id": "hostile-customer",
                        }
                        if named
                        else {}
                    ),
                },
            )
        finally:
            wall = time.perf_counter() - started
            stop.set()
            poller.join()
        cpu = cpu_seconds(pid) - before
    return Probe(response.status_code, cpu, wall, latencies)
