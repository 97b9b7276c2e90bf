"""The gateway in this process: `create_app` under Starlette's TestClient (which runs the
lifespan), the simulated upstream started by that lifespan (`base_url: simulator`), the
official openai SDK as the client over the TestClient's transport. No port, no fork, no
interpreter start: most behaviour is tested here; tests/servers.py keeps the subprocess
servers for what needs a process boundary (kill -9, --workers, signals, SSE timing)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import openai
from starlette.testclient import TestClient

from gateway.config import SIMULATOR, load_settings
from gateway.proxy.app import create_app
from gateway.runtime import Gateway
from tests.servers import ADMIN_KEY, PROVIDER_KEY, TENANT_KEYS, write_config

ENV = {"TEST_PROVIDER_KEY": PROVIDER_KEY, "TEST_ADMIN_KEY": ADMIN_KEY}


class InProcessGateway:
    """What a test needs of a running gateway, as GatewayProc offers it for a subprocess:
    `v1`, `keys`, `admin()`, `restart()`; requests go through `http` (a TestClient)."""

    url = "http://testserver"

    def __init__(self, root: Path, upstream_url: str, store_url: str, **extra: Any) -> None:
        self.root = root
        self.keys = dict(TENANT_KEYS)
        self.config = write_config(root, upstream_url, store_url, **extra)
        self.http: TestClient = self._client()
        self._running = False

    def _client(self) -> TestClient:
        env = {**os.environ, **ENV}
        for name in ("GATEWAY_UPSTREAM_URL", "GATEWAY_STORE_URL", "GATEWAY_ADMIN_KEY"):
            env.pop(name, None)
        settings = load_settings(self.config, env)
        # raise_server_exceptions off: a failure must reach the client as the gateway's
        # own 500, as it would over a socket.
        return TestClient(create_app(settings), raise_server_exceptions=False)

    @property
    def v1(self) -> str:
        return f"{self.url}/v1"

    @property
    def gateway(self) -> Gateway:
        """The running gateway's parts (store, metrics, upstream), for reading state back."""
        gw: Gateway = self.http.app.state.gateway  # type: ignore[attr-defined]
        return gw

    @property
    def upstream_url(self) -> str:
        """The upstream the gateway forwards to (the in-process simulator's loopback URL)."""
        return self.gateway.upstream.base_url

    def openai(self, tenant: str = "acme", **kwargs: Any) -> openai.OpenAI:
        return openai.OpenAI(
            base_url=self.v1,
            api_key=self.keys[tenant],
            max_retries=0,
            http_client=self.http,
            **kwargs,
        )

    def admin(self, path: str, **params: Any) -> httpx2.Response:
        return self.http.get(path, params=params, headers={"Authorization": f"Bearer {ADMIN_KEY}"})

    def start(self) -> None:
        self.http.__enter__()
        self._running = True

    def stop(self) -> None:
        if self._running:
            self._running = False
            self.http.__exit__(None, None, None)

    def restart(self) -> None:
        """Stop (lifespan shutdown) and start again from the files on disk, as a new process
        would: policy and config edits are read anew."""
        self.stop()
        self.http = self._client()
        self.start()


def start_inprocess(
    root: Path, store_url: str, upstream_url: str = SIMULATOR, **extra: Any
) -> InProcessGateway:
    gw = InProcessGateway(root, upstream_url, store_url, **extra)
    gw.start()
    return gw


class SimulatorLog:
    """What the simulated upstream saw and billed, from a given moment on (as
    tests.conftest.UpstreamLog, for the simulator the in-process gateway started)."""

    def __init__(self, gw: InProcessGateway) -> None:
        self.gw = gw
        self.start = len(self.all())

    def all(self) -> list[dict[str, Any]]:
        base = self.gw.upstream_url.removesuffix("/v1")
        entries: list[dict[str, Any]] = httpx.get(f"{base}/sim/usage").json()
        return entries

    def since(self) -> list[dict[str, Any]]:
        return self.all()[self.start :]


def play_turns(
    gw: InProcessGateway,
    system: str,
    ids: tuple[str, str, str],
    texts: list[str],
    **headers: str,
) -> list[Any]:
    """A stateless app's conversation through the SDK: each text a customer turn sent
    with the whole history so far (`ids`: conversation, customer, channel headers; the
    simulator logs each prompt); the messages with every reply, at the end."""
    conversation, customer, channel = ids
    messages: list[Any] = [{"role": "system", "content": system}]
    for text in texts:
        say(
            gw,
            messages,
            text,
            **{"X-Conversation-Id": conversation, "X-Customer-Id": customer},
            **{"X-Channel": channel, **headers},
        )
    return messages


def say(gw: InProcessGateway, messages: list[Any], text: str, **headers: str) -> str:
    """One customer turn of a stateless app: `text` appended to `messages` and sent whole
    through the SDK with `headers` (the simulator logs the prompt), the reply appended;
    the reply's text."""
    messages.append({"role": "user", "content": text})
    reply = gw.openai().chat.completions.create(
        model="gpt-4o-mini",
        messages=messages,
        extra_headers={"X-Simulator-Log-Messages": "1", **headers},
    )
    answer = reply.choices[0].message.content or ""
    messages.append({"role": "assistant", "content": answer})
    return answer


def running(root: Path, store_url: str, **extra: Any) -> Iterator[InProcessGateway]:
    gw = start_inprocess(root, store_url, **extra)
    try:
        yield gw
    finally:
        gw.stop()
