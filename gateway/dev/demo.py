"""`gateway demo`: the simulator and the gateway on the embedded store, a handful of
multi-turn conversations through the official openai SDK, then the spend table."""

from __future__ import annotations

import socket
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path

import httpx
import openai
import uvicorn
from openai.types.chat import ChatCompletionMessageParam

from gateway.config import load_settings, tenants_path
from gateway.ops.tenants import add_tenant
from gateway.proxy.app import create_app

ADMIN_KEY = "demo-admin-key"
TOPICS = {
    "acme": ("order ORD-48213 arrived damaged", "refund status for invoice INV-2231"),
    "globex": ("upgrade from basic to pro plan", "reset two-factor authentication"),
}
SYSTEM = (
    "You are a careful customer-service agent for an online store. Answer briefly, "
    "confirm identifiers back to the customer, and never invent order data. " * 12
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class DemoFolderTaken(Exception):
    """--dir holds files the demo would write over (an earlier demo's, a deployment's)."""


def _claim(workdir: Path) -> Path:
    """The demo's config.yaml, made in a folder holding none of the demo's files, so a
    second demo (at once, or later) or a deployment's config.yaml is never written over."""
    workdir.mkdir(parents=True, exist_ok=True)
    config = workdir / "config.yaml"
    ours = (config, workdir / "demo.db", tenants_path(workdir / "policies"))
    held = [p for p in ours if p.exists()]
    if not held:
        try:
            config.open("x").close()  # the claim: of two demos at once, one makes it
        except FileExistsError:
            held = [config]
    if held:
        raise DemoFolderTaken(
            f"--dir {workdir} already holds {', '.join(str(p) for p in held)}: the demo "
            "writes config.yaml, demo.db and policies/ there; give it a new or empty folder"
        )
    return config


@contextmanager
def _running_gateway(workdir: Path) -> Iterator[str]:
    config = workdir / "config.yaml"
    config.write_text(
        "upstream:\n  base_url: simulator\nstore: sqlite:///demo.db\npolicies: policies\n"
        "admin:\n  key_env: DEMO_ADMIN_KEY\n"
        "prices:\n  local-llama:\n    input_per_mtok: 0.05\n    output_per_mtok: 0.10\n"
        # The demo prints its own story; a served gateway logs a line per request.
        "logging:\n  access_log: 'off'\n"
    )
    settings = load_settings(config, {"DEMO_ADMIN_KEY": ADMIN_KEY})
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("the gateway failed to start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def _converse(
    client: openai.OpenAI, tenant: str, topic: str, turns: int, stream: bool
) -> dict[str, str]:
    """Play a conversation; return the gateway's headers of its last turn."""
    messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": SYSTEM}]
    headers = {"X-Conversation-Id": f"{tenant}-{topic[:12]}", "X-Customer-Id": f"{tenant}-c1"}
    last: dict[str, str] = {}
    for turn in range(turns):
        messages.append({"role": "user", "content": f"Turn {turn + 1}: about {topic}. " * 8})
        if stream:
            with client.chat.completions.with_streaming_response.create(
                model="gpt-4o-mini", messages=messages, stream=True, extra_headers=headers
            ) as response:
                last = {k.lower(): v for k, v in response.headers.items()}
                reply = "".join(
                    c.choices[0].delta.content or "" for c in response.parse() if c.choices
                )
        else:
            raw = client.chat.completions.with_raw_response.create(
                model="gpt-4o-mini", messages=messages, extra_headers=headers
            )
            last = {k.lower(): v for k, v in raw.headers.items()}
            reply = raw.parse().choices[0].message.content or ""
        messages.append({"role": "assistant", "content": reply})
    return last


def _table(rows: list[dict[str, str | int]]) -> str:
    head = (
        f"{'tenant':<8} {'plan':<6} {'requests':>8} {'fresh in':>9} {'cached in':>9} "
        f"{'output':>7} {'cached %':>8} {'cost USD':>12}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        fresh, cached = int(r["fresh_input_tokens"]), int(r["cached_input_tokens"])
        share = 100 * cached / (fresh + cached) if fresh + cached else 0.0
        lines.append(
            f"{r['tenant']!s:<8} {r['plan']!s:<6} {r['requests']:>8} {fresh:>9} {cached:>9} "
            f"{r['output_tokens']:>7} {share:>7.1f}% {Decimal(str(r['cost_usd'])):>12.6f}"
        )
    return "\n".join(lines)


def run_demo(workdir: Path | None) -> int:
    with tempfile.TemporaryDirectory(prefix="gateway-demo-") as tmp:
        root = workdir or Path(tmp)
        try:
            _claim(root)
        except DemoFolderTaken as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        except OSError as exc:
            print(f"error: --dir {root}: {exc.strerror}", file=sys.stderr)
            return 1
        keys = {
            name: add_tenant(root / "policies", name, plan)
            for name, plan in (("acme", "pro"), ("globex", "basic"))
        }
        with _running_gateway(root) as url:
            print(f"gateway on {url} (simulated upstream, SQLite store at {root / 'demo.db'})")
            for tenant, topics in TOPICS.items():
                client = openai.OpenAI(base_url=f"{url}/v1", api_key=keys[tenant], max_retries=0)
                for n, topic in enumerate(topics):
                    turns = 40 if n == 0 else 4
                    last = _converse(client, tenant, topic, turns, stream=n == 1)
                    print(
                        f"  {tenant}: {turns}-turn conversation about {topic!r} "
                        f"({'streamed' if n == 1 else 'JSON'}): class {last['x-gateway-class']}, "
                        f"last window {last['x-gateway-window-tokens']} history tokens, "
                        f"{last['x-gateway-evicted-turns']} messages summarized"
                    )
            spend = httpx.get(
                f"{url}/admin/spend", headers={"Authorization": f"Bearer {ADMIN_KEY}"}
            )
            if spend.status_code != 200:
                print(
                    f"error: /admin/spend answered {spend.status_code}: {spend.text}",
                    file=sys.stderr,
                )
                return 1
            print(f"\nSpend for {spend.json()['period']} (from /admin/spend):\n")
            print(_table(spend.json()["tenants"]))
    return 0
