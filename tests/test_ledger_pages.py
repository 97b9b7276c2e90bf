"""Ledger pages newest first with a cursor (`Store.ledger_page`, `/admin/ledger?cursor=`),
on every backend: every row exactly once, rows booked between pages never shift them."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from gateway.ledger.usage import TokenUsage
from gateway.store import open_store
from gateway.store.records import UsageRecord
from tests.inprocess import InProcessGateway

NOV = 1_796_000_000.0  # 2026-11-30 UTC


def _record(tenant: str, ts: float) -> UsageRecord:
    return UsageRecord(
        id=uuid.uuid4().hex,
        ts=ts,
        tenant=tenant,
        plan="pro",
        model="gpt-4o-mini",
        usage=TokenUsage(fresh_input=10, output=1),
        cost_units=5,
    )


def test_pages_walk_every_row_once_newest_first(store_url: str) -> None:
    async def scenario() -> None:
        store = open_store(store_url)
        try:
            # two tenants, two months, and runs of equal timestamps
            rows = [
                _record("acme" if n % 3 else "globex", NOV - 86400 * 20 + n // 4)
                for n in range(250)
            ]
            rows += [_record("acme", NOV + 86400 * 3 + n // 4) for n in range(60)]
            await store.book_many(rows)
            mine = sorted(
                (r for r in rows if r.tenant == "acme"), key=lambda r: (r.ts, r.id), reverse=True
            )
            seen: list[str] = []
            cursor: str | None = None
            while True:
                page, cursor = await store.ledger_page("acme", None, cursor, 40)
                assert len(page) <= 40
                seen += [r.id for r in page]
                # booked meanwhile, newer than every page: never shows up in later pages
                await store.book_many([_record("acme", NOV + 86400 * 9)])
                if cursor is None:
                    break
            assert seen == [r.id for r in mine]
            november, _ = await store.ledger_page("acme", "2026-11", None, 1000)
            assert {r.period for r in november} == {"2026-11"}
            with pytest.raises(ValueError, match="cursor"):
                await store.ledger_page("acme", None, "not a cursor!", 10)
        finally:
            await store.close()

    asyncio.run(scenario())


def test_admin_ledger_pages_with_a_cursor(sqlite_app_gateway: InProcessGateway) -> None:
    gw = sqlite_app_gateway
    client = gw.openai()
    for n in range(5):
        client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": f"question {n}"}]
        )
    first = gw.admin("/admin/ledger", cursor="", limit=3).json()
    assert len(first["records"]) == 3 and first["next_cursor"]
    second = gw.admin("/admin/ledger", cursor=first["next_cursor"], limit=3).json()
    assert len(second["records"]) == 2 and second["next_cursor"] is None
    stamps = [r["ts"] for r in first["records"] + second["records"]]
    assert stamps == sorted(stamps, reverse=True)
    bad = gw.admin("/admin/ledger", cursor="%%%")
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "cursor"
