"""A booking written late, after its customer was erased, is written under a pseudonym
(red-team read 23: a replica that lost the store through an outage spilled a customer's
bookings; another replica erased the customer; the first one's replay put the id back
in the ledger, an `fp-` conversation id made from it included, and in the spend
counters' names)."""

from __future__ import annotations

import asyncio
import dataclasses
import time
import uuid
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry

from gateway.context.conversation_record import conversation_fingerprint
from gateway.ledger.booking import Bookkeeper
from gateway.ops.metrics import GatewayMetrics
from gateway.store import open_store
from gateway.store.base import ERASED_DOC, ERASED_S, erased_customer, erased_key
from tests.inprocess import InProcessGateway, say
from tests.servers import TENANT_KEYS, free_port
from tests.test_store_contract import record

CUSTOMER = "cust-erased-zebulon@example.com"


def _spill_while_the_store_is_down(spill: Path, records: list) -> None:  # type: ignore[type-arg]
    """What a replica that lost its store leaves at its stop: its bookings, spilled."""

    async def outage() -> None:
        store = open_store(f"redis://127.0.0.1:{free_port()}/0")  # nothing listens
        keeper = Bookkeeper(
            store, GatewayMetrics(CollectorRegistry()), spill, max_pending=10, retry_s=0.05
        )
        writer = asyncio.create_task(keeper.run())
        await asyncio.gather(*(keeper.book(r) for r in records))
        writer.cancel()
        await keeper.close(timeout_s=0.2)
        await store.close()

    asyncio.run(outage())


def test_bookings_replayed_after_an_erasure_do_not_name_the_customer(
    sqlite_app_gateway: InProcessGateway, tmp_path: Path
) -> None:
    gw = sqlite_app_gateway
    headers = {"X-Conversation-Id": "conv-late", "X-Customer-Id": CUSTOMER}
    say(gw, [], "where is my order ORD-55120?", **headers)
    fingerprint = conversation_fingerprint("acme", CUSTOMER, [{"role": "user", "content": "x"}])
    day = time.strftime("%Y-%m-%d", time.gmtime())
    month = day[:7]
    named = f"acme|customer:{CUSTOMER}|"
    before = time.time() - 30  # calls that began before the erasure
    spilled = [
        dataclasses.replace(
            record(ts=before),
            customer=CUSTOMER,
            conversation=conversation,
            budgets=(f"acme|tenant|month|{month}", f"{named}day|{day}", f"{named}month|{month}"),
        )
        for conversation in ("conv-late", fingerprint)
    ]
    _spill_while_the_store_is_down(tmp_path / "gateway-pending-bookings.jsonl", spilled)

    auth = {"Authorization": f"Bearer {TENANT_KEYS['acme']}"}
    erased = gw.http.delete(f"/v1/customers/{CUSTOMER}", headers=auth)
    assert erased.status_code == 200 and erased.json()["found"], erased.text
    gw.restart()  # the replica back: its spill file replayed
    deadline = time.monotonic() + 10
    while gw.gateway.bookkeeper.pending or (tmp_path / "gateway-pending-bookings.jsonl").exists():
        assert time.monotonic() < deadline
        time.sleep(0.05)

    rows = asyncio.run(_rows(gw, month))
    replayed = [r for r in rows if r.id in {s.id for s in spilled}]
    assert len(replayed) == 2  # booked: nothing lost...
    assert {r.customer for r in replayed} != {CUSTOMER}
    assert all(r.customer and r.customer.startswith("erased-") for r in replayed)
    conversations = {r.conversation for r in replayed}
    assert "conv-late" in conversations  # the app's own id stays, as the erasure leaves it
    assert fingerprint not in conversations  # ...a made one does not
    assert all(CUSTOMER not in b for r in replayed for b in r.budgets)
    export = gw.http.get(f"/v1/customers/{CUSTOMER}/export", headers=auth).json()
    assert export["ledger"] == []  # and nothing names the customer again
    spent = asyncio.run(gw.gateway.store.budgets([f"{named}day|{day}", f"{named}month|{month}"]))
    assert set(spent.values()) == {(0, 0)}  # the counters under the id hold nothing again


async def _rows(gw: InProcessGateway, month: str) -> list:  # type: ignore[type-arg]
    return list(await gw.gateway.store.ledger(month, "acme", 1000))


def test_a_held_back_booking_written_under_a_pseudonym_releases_its_reservation(
    store_url: str, tmp_path: Path
) -> None:
    """Its call held a reservation under the customer's id, and Redis settles a
    reservation in the budgets its record names: renamed to the pseudonym, the booking
    left the id's day held until the reservation expired (600 s), refusing the customer's
    next calls (review of 307ce76)."""
    tenant, customer = f"t{uuid.uuid4().hex[:8]}", "cust-held"
    month = time.strftime("%Y-%m", time.gmtime())
    tenant_budget = f"{tenant}|month|{month}"
    customer_budget = f"{tenant}|customer:{customer}|month|{month}"
    budgets = [(tenant_budget, 10**12), (customer_budget, 10**9)]
    spill = tmp_path / "pending.jsonl"

    async def run() -> dict[str, tuple[int, int]]:
        store = open_store(store_url)
        reservation = uuid.uuid4().hex
        assert await store.reserve(reservation, budgets, 500_000_000, 600) is None
        began = time.time() - 5
        held = dataclasses.replace(
            record(ts=began, tenant=tenant),
            customer=customer,
            budgets=(tenant_budget, customer_budget),
            reservation=reservation,
        )
        keeper = Bookkeeper(store, GatewayMetrics(CollectorRegistry()), spill, max_pending=10)
        assert keeper.spill([held])  # held back: a stop while the store was down
        await erased_mark(store, tenant, customer)
        await store.erase_customer(tenant, customer, erased_customer(), [])
        keeper.load_spill()  # the next start
        writer = asyncio.create_task(keeper.run())
        while keeper.pending:
            await asyncio.sleep(0.01)
        writer.cancel()
        found = await store.budgets([tenant_budget, customer_budget])
        rows = await store.ledger(month, tenant, 10)
        await store.close()
        assert [r.customer for r in rows] != [customer]
        return found

    found = asyncio.run(run())
    assert found[customer_budget] == (0, 0)  # nothing spent, nothing held under the id
    assert found[tenant_budget][1] == 0  # the tenant's hold settled too


async def erased_mark(store: Any, tenant: str, customer: str) -> None:
    """As DELETE /v1/customers/{id} marks an erasure before it runs."""
    await store.put_doc(
        ERASED_DOC, tenant, erased_key(tenant, customer), {"at": time.time()}, ERASED_S
    )
