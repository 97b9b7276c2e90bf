"""/metrics of many tenants: rendered off the event loop, and not again for every scrape."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

import pytest

from gateway.ops.metrics import GatewayMetrics
from gateway.ops.scrape import CeilingRow
from gateway.store.records import SpendRow
from tests.inprocess import InProcessGateway


def test_a_costly_render_runs_off_the_loop_and_serves_the_scrapes_right_after(
    sqlite_app_gateway: InProcessGateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    renders: list[bool] = []  # per render: did it run on the event loop's thread?
    render = GatewayMetrics.render

    def costly(
        self: GatewayMetrics, spend: list[SpendRow] | None, ceilings: Sequence[Any] = ()
    ) -> bytes:
        try:
            asyncio.get_running_loop()
            renders.append(True)
        except RuntimeError:
            renders.append(False)
        time.sleep(0.3)  # thousands of tenants' families
        rows: Sequence[CeilingRow] = ceilings
        return render(self, spend, rows)

    monkeypatch.setattr(GatewayMetrics, "render", costly)
    first = sqlite_app_gateway.admin("/metrics")
    second = sqlite_app_gateway.admin("/metrics")
    assert first.status_code == second.status_code == 200
    assert "gateway_store_scrape_ok 1.0" in first.text
    assert second.text == first.text
    assert renders == [False]  # once, in a worker thread
