"""Peers to measure beside the gateway in one run: Portkey's gateway (Node) and LiteLLM's
proxy, each pointed at the same simulated upstream. Install steps: bench/README.md.

Each `start_*` returns a running `Target`: the process whose CPU is read, the chat URL,
and the headers a request to it needs. A peer that is not installed raises
`PeerMissing` with the command that installs it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.servers import TENANT_KEYS, free_port, start_gateway, stop, wait_http  # noqa: E402

PEERS_DIR = Path(os.environ.get("BENCH_PEERS_DIR", ROOT / "bench" / ".peers"))
PORTKEY_JS = PEERS_DIR / "portkey" / "node_modules" / "@portkey-ai" / "gateway" / "build"
LITELLM_BIN = PEERS_DIR / "litellm-venv" / "bin" / "litellm"
# Its proxy refuses to start without one; the clients of the bench send it.
LITELLM_MASTER_KEY = "sk-bench-litellm-master-key-0123456789abcdef"


class PeerMissing(RuntimeError):
    pass


@dataclass
class Target:
    name: str
    procs: list[subprocess.Popen[bytes]]
    url: str  # POST here: the chat completions endpoint
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def pid(self) -> int:
        return self.procs[0].pid

    def stop(self) -> None:
        for proc in self.procs:
            stop(proc)


def start_gateway_target(
    upstream: str, store: str | None, workers: int = 1, spend: dict[str, object] | None = None
) -> Target:
    tmp = Path(tempfile.mkdtemp(prefix="bench-gw-"))
    gw = start_gateway(tmp, upstream, store or f"sqlite:///{tmp / 'g.db'}", workers=workers)
    if spend is not None:  # ceilings: every call reserves and settles
        (tmp / "policies" / "spend.yaml").write_text(yaml.safe_dump(spend))
        gw.restart()
    key = TENANT_KEYS["acme"]
    return Target("gateway", [gw.proc], f"{gw.v1}/chat/completions", _auth(key))


def _gateway_from(
    tree: Path, upstream: str, store: str | None, workers: int, spend: dict[str, object] | None
) -> Target:
    """The gateway as the tree at `tree` has it (its package first on PYTHONPATH)."""
    if not (tree / "gateway" / "__init__.py").exists():
        raise PeerMissing(f"no gateway package under {tree}")
    # `python -m` puts the working directory (this checkout) before PYTHONPATH:
    # PYTHONSAFEPATH leaves it out, so the tree's package is the one imported.
    before = {name: os.environ.get(name) for name in ("PYTHONPATH", "PYTHONSAFEPATH")}
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(tree.resolve()), before["PYTHONPATH"]) if p
    )
    os.environ["PYTHONSAFEPATH"] = "1"
    try:
        target = start_gateway_target(upstream, store, workers, spend)
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    target.name = f"gateway@{tree.name}"
    return target


def start_portkey(upstream: str) -> Target:
    script = PORTKEY_JS / "start-server.js"
    node = shutil.which("node")
    if node is None or not script.exists():
        raise PeerMissing(f"Portkey is not installed under {PEERS_DIR}: see bench/README.md")
    port = free_port()
    proc = subprocess.Popen(
        [node, str(script), f"--port={port}", "--headless"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "NODE_ENV": "production"},
    )
    wait_http(f"http://127.0.0.1:{port}/", proc)
    headers = {
        **_auth(TENANT_KEYS["acme"]),
        "x-portkey-provider": "openai",
        "x-portkey-custom-host": upstream,
    }
    return Target("portkey", [proc], f"http://127.0.0.1:{port}/v1/chat/completions", headers)


def start_litellm(upstream: str) -> Target:
    if not LITELLM_BIN.exists():
        raise PeerMissing(f"LiteLLM is not installed under {PEERS_DIR}: see bench/README.md")
    tmp = Path(tempfile.mkdtemp(prefix="bench-litellm-"))
    config = {
        "model_list": [
            {
                "model_name": "gpt-4o-mini",
                "litellm_params": {
                    "model": "openai/gpt-4o-mini",
                    "api_base": upstream,
                    "api_key": TENANT_KEYS["acme"],
                },
            }
        ],
        "litellm_settings": {"telemetry": False, "drop_params": True},
        "general_settings": {"master_key": LITELLM_MASTER_KEY},
    }
    (tmp / "config.yaml").write_text(yaml.safe_dump(config))
    port = free_port()
    env = {
        **os.environ,
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "LITELLM_TELEMETRY": "False",
        "LITELLM_LOG": "ERROR",
    }
    proc = subprocess.Popen(
        [str(LITELLM_BIN), "--config", str(tmp / "config.yaml"), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=open(tmp / "litellm.log", "wb"),  # noqa: SIM115 - lives as long as the peer
        env=env,
        cwd=tmp,
    )
    wait_http(f"http://127.0.0.1:{port}/health/liveliness", proc, timeout=120)
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    return Target("litellm", [proc], url, _auth(LITELLM_MASTER_KEY))


def start_target(
    name: str,
    upstream: str,
    store: str | None = None,
    workers: int = 1,
    spend: dict[str, object] | None = None,
) -> Target:
    if name == "gateway":
        return start_gateway_target(upstream, store, workers, spend)
    if name.startswith("gateway@"):  # another tree of the gateway (an A/B: a worktree)
        return _gateway_from(Path(name.partition("@")[2]), upstream, store, workers, spend)
    if name == "portkey":
        return start_portkey(upstream)
    if name == "litellm":
        return start_litellm(upstream)
    if name == "minimal":
        port = free_port()
        proc = subprocess.Popen(
            [sys.executable, str(ROOT / "bench" / "minimal_passthrough.py"), upstream, str(port)]
        )
        url = f"http://127.0.0.1:{port}/v1/chat/completions"
        wait_http(url, proc)
        return Target("minimal", [proc], url, _auth(TENANT_KEYS["acme"]))
    raise ValueError(f"unknown target {name!r}")


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}
