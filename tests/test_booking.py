"""The bookkeeper against real stores: outages release callers, spills survive restarts."""

from __future__ import annotations

import asyncio
from pathlib import Path

from prometheus_client import CollectorRegistry

from gateway.booking import Bookkeeper
from gateway.metrics import GatewayMetrics
from gateway.store import open_store
from tests.servers import free_port
from tests.test_store_contract import record


def test_an_outage_releases_every_caller_and_spills_on_close(tmp_path: Path) -> None:
    spill = tmp_path / "pending.jsonl"
    records = [record(output=n) for n in range(300)]

    async def outage() -> None:
        store = open_store(f"redis://127.0.0.1:{free_port()}/0")
        keeper = Bookkeeper(store, GatewayMetrics(CollectorRegistry()), spill, retry_s=0.05)
        writer = asyncio.create_task(keeper.run())
        await asyncio.gather(*(keeper.book(r) for r in records))  # none waits for the store
        assert keeper.pending == 300
        writer.cancel()
        await keeper.close(timeout_s=0.2)
        await store.close()

    asyncio.run(outage())
    lines = spill.read_bytes().splitlines()
    assert len(lines) == 300
    spill.write_bytes(b"\n".join(lines) + b'\n{"cut short by a cra')  # a torn last line

    async def restart() -> int:
        store = open_store(f"sqlite:///{tmp_path / 'g.db'}")
        keeper = Bookkeeper(store, GatewayMetrics(CollectorRegistry()), spill)
        keeper.load_spill()
        writer = asyncio.create_task(keeper.run())
        while keeper.pending:
            await asyncio.sleep(0.01)
        writer.cancel()
        (row,) = await store.spend(None)
        await store.close()
        return row.requests

    assert asyncio.run(restart()) == 300
    assert list(tmp_path.glob("pending*")) == []  # replayed files are gone once stored
