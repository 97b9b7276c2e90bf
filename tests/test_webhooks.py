"""Signed escalation webhooks: a real HTTP receiver on a loopback port checks the
`X-Gateway-Signature` header the way the README tells a tenant to."""

from __future__ import annotations

import hashlib
import hmac
import http.server
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway.loops.escalation import SECRET_ENV, signature
from tests.inprocess import InProcessGateway, start_inprocess
from tests.servers import edit_policy

SECRET = "whsec-test-0123456789"
SYSTEM = "You are the support agent of an online store."
ASKS = [
    "Where is my order ORD-55555? It has not arrived yet.",
    "My order ORD-55555 still has not arrived, where is it?",
    "I am still waiting for order ORD-55555, where is it now?",
    "Can you tell me where order ORD-55555 is? It never arrived.",
]
ANSWER = "Order ORD-55555 is in transit and should arrive within 3 to 5 business days."


def verify(secret: str, header: str, body: bytes, tolerance_s: int = 300) -> bool:
    """The README's verification snippet, as a tenant would paste it."""
    parts = dict(item.split("=", 1) for item in header.split(","))
    timestamp = int(parts["t"])
    if abs(time.time() - timestamp) > tolerance_s:
        return False  # an old (replayed) delivery
    expected = hmac.new(
        secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256
    ).hexdigest()
    return hmac.compare_digest(expected, parts["v1"])


class Receiver:
    def __init__(self) -> None:
        self.deliveries: list[tuple[bytes, str | None]] = []
        received = self.deliveries

        class Hook(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                received.append((body, self.headers.get("X-Gateway-Signature")))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.HTTPServer(("127.0.0.1", 0), Hook)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def wait(self) -> tuple[bytes, str | None]:
        deadline = time.monotonic() + 10
        while not self.deliveries:
            assert time.monotonic() < deadline, "no webhook delivery"
            time.sleep(0.05)
        return self.deliveries[0]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    hook = Receiver()
    yield hook
    hook.close()


def _escalating_gateway(tmp_path: Path, receiver: Receiver) -> InProcessGateway:
    gw = start_inprocess(tmp_path, f"sqlite:///{tmp_path / 'gateway.db'}")
    edit_policy(tmp_path, {"webhooks": {"acme": receiver.url}})
    gw.restart()
    return gw


def _loop(gw: InProcessGateway) -> list[str | None]:
    """Two ordinary turns, then the same question answered the same way until the
    loop escalates; the escalation header of each turn."""
    client = gw.openai()
    messages: list[Any] = [{"role": "system", "content": SYSTEM}]
    seen = []
    turns: list[tuple[str, str | None]] = [("Hi, I changed my phone number to 5550101.", None)]
    turns += [("Also my loyalty card is LC-7788, is it linked?", None)]
    turns += [(ask, ANSWER) for ask in ASKS]
    for text, reply in turns:
        messages.append({"role": "user", "content": text})
        extra = {"X-Conversation-Id": "webhook-loop"}
        if reply:
            extra["x-simulator-reply"] = reply
        raw = client.chat.completions.with_raw_response.create(
            model="gpt-4o-mini", messages=messages, extra_headers=extra
        )
        messages.append({"role": "assistant", "content": raw.parse().choices[0].message.content})
        seen.append(raw.headers.get("x-gateway-escalation"))
    return seen


def test_the_escalation_webhook_is_signed(
    tmp_path: Path, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SECRET_ENV, SECRET)
    gw = _escalating_gateway(tmp_path, receiver)
    try:
        assert "loop" in _loop(gw)
        body, header = receiver.wait()
    finally:
        gw.stop()
    assert header is not None and header.startswith("t=") and ",v1=" in header
    assert verify(SECRET, header, body)
    assert not verify("another-secret", header, body)
    assert not verify(SECRET, header, body.replace(b"loop", b"lOOp"))


def test_without_a_secret_the_webhook_goes_unsigned(
    tmp_path: Path, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(SECRET_ENV, raising=False)
    gw = _escalating_gateway(tmp_path, receiver)
    try:
        _loop(gw)
        _, header = receiver.wait()
    finally:
        gw.stop()
    assert header is None


def test_the_signature_is_stripes_scheme() -> None:
    body = b'{"type":"escalation"}'
    mac = hmac.new(b"k", b"1700000000." + body, hashlib.sha256).hexdigest()
    assert signature("k", body, 1_700_000_000) == f"t=1700000000,v1={mac}"
    assert not verify("k", signature("k", body, int(time.time()) - 3600), body)
