"""A customer erased while one of their turns is still being answered, on the embedded
SQLite store: the turn writes nothing of theirs back, not even for a moment (a row
written then taken back stays readable in SQLite's write-ahead log, which the erasure
had already scrubbed). The openai SDK as the client, the simulated upstream answering
slowly so the erasure lands mid-answer."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from tests.inprocess import InProcessGateway, say

SYSTEM = "You are a helpful support agent."
CUSTOMER = "cust-midturn"


def test_a_card_made_before_the_erasure_is_not_written_back_by_a_turn_ending_after_it(
    sqlite_app_gateway: InProcessGateway, tmp_path: Path
) -> None:
    """Conversation A's card was made by the customer's conversation B. A's next turn,
    ending after the erasure, marked that card stale: it wrote the card (name, phone)
    into the index again, then took it back; the text stayed in gateway.db-wal after
    the erasure had answered `scrubbed: true`."""
    gw = sqlite_app_gateway
    who = {"X-Customer-Id": CUSTOMER, "X-Conversation-Id": "conv-a"}
    a: list[Any] = [{"role": "system", "content": SYSTEM}]
    for text in ["Hi, I'm Marta Quintela, order 55120 is missing", "call me on +55 11 98765-4321"]:
        say(gw, a, text, **who)
    b: list[Any] = [{"role": "system", "content": SYSTEM}]
    say(gw, b, "hi", **{"X-Customer-Id": CUSTOMER, "X-Conversation-Id": "conv-b"})
    auth = {"Authorization": f"Bearer {gw.keys['acme']}"}
    export = gw.http.get(f"{gw.v1}/customers/{CUSTOMER}/export", headers=auth).json()
    assert any(e["conversation"] == "conv-a" and e.get("summary") for e in export["episodes"])

    slow = {"X-Simulator-Delay-Ms": "1500"}
    turn = threading.Thread(target=say, args=(gw, a, "any news?"), kwargs={**who, **slow})
    turn.start()
    time.sleep(0.6)
    assert turn.is_alive()
    erased = gw.http.delete(f"{gw.v1}/customers/{CUSTOMER}", headers=auth).json()
    assert erased["scrubbed"] is True
    turn.join()
    files = b"".join(p.read_bytes() for p in tmp_path.glob("gateway.db*"))
    assert b"Quintela" not in files and b"98765-4321" not in files
