"""Files the gateway writes that hold customers' text or ids are its owner's alone
(red-team read 23: the SQLite store, its WAL and the bookings' spill file were 0644, so
any local user could read customers' messages; the in-flight journal was already 0600)."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path

from prometheus_client import CollectorRegistry

from gateway.ledger.booking import Bookkeeper
from gateway.ops.metrics import GatewayMetrics
from gateway.store import open_store
from tests.inprocess import InProcessGateway, say
from tests.servers import free_port
from tests.test_store_contract import record

EMAIL = "zebulon.private@example.com"


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_sqlite_store_and_its_wal_are_its_owners_alone(
    sqlite_app_gateway: InProcessGateway, tmp_path: Path
) -> None:
    headers = {"X-Conversation-Id": "c-private", "X-Customer-Id": "cust-private"}
    say(sqlite_app_gateway, [], f"my email is {EMAIL}, where is my order?", **headers)
    files = [tmp_path / "gateway.db", tmp_path / "gateway.db-wal", tmp_path / "gateway.db-shm"]
    held = b"".join(f.read_bytes() for f in files[:2])
    assert EMAIL.encode() in held  # the customer's text is in them...
    assert {f.name: _mode(f) for f in files} == {f.name: 0o600 for f in files}  # ...theirs alone


def test_spilled_bookings_are_the_owners_alone(tmp_path: Path) -> None:
    spill = tmp_path / "pending.jsonl"

    async def outage() -> None:
        store = open_store(f"redis://127.0.0.1:{free_port()}/0")  # nothing listens
        keeper = Bookkeeper(
            store, GatewayMetrics(CollectorRegistry()), spill, max_pending=10, retry_s=0.05
        )
        writer = asyncio.create_task(keeper.run())
        await asyncio.gather(*(keeper.book(record(output=n)) for n in range(3)))
        writer.cancel()
        await keeper.close(timeout_s=0.2)
        await store.close()

    asyncio.run(outage())
    assert len(spill.read_bytes().splitlines()) == 3
    assert _mode(spill) == 0o600
