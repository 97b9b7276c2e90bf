"""`gateway serve --workers N`: gone workers' metric files are merged, their counts kept."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, Counter, Histogram, multiprocess
from prometheus_client import values as prom_values
from prometheus_client.values import MultiProcessValue

from gateway.ops.metrics_files import forget_gone_workers


def _gone_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _totals(folder: Path) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry, str(folder))  # type: ignore[no-untyped-call]
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in registry.collect()
        for s in family.samples
    }


def _count_as(pid: int, amount: float) -> None:
    """What a worker of this pid writes: a counter and a histogram."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(prom_values, "ValueClass", MultiProcessValue(lambda: pid))  # type: ignore[no-untyped-call]
        registry = CollectorRegistry()
        Counter("calls", "Calls.", ["route"], registry=registry).labels("chat").inc(amount)
        Histogram("took_seconds", "Took.", registry=registry, buckets=(1.0,)).observe(amount)


def test_gone_workers_files_are_merged_and_their_counts_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    for amount in (1.0, 2.0, 4.0):  # three workers, each restarted since (a reload)
        _count_as(_gone_pid(), amount)
    before = _totals(tmp_path)
    forget_gone_workers()
    _count_as(_gone_pid(), 8.0)  # one more reload
    forget_gone_workers()
    after = _totals(tmp_path)
    assert sorted(p.name for p in tmp_path.glob("*.db")) == [
        "counter_merged.db",
        "histogram_merged.db",
    ]
    assert before[("calls_total", (("route", "chat"),))] == 7.0
    assert after[("calls_total", (("route", "chat"),))] == 15.0
    assert after[("took_seconds_count", ())] == 4.0
    assert after[("took_seconds_sum", ())] == 15.0
