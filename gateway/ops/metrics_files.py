"""The metric files of `gateway serve --workers N` (PROMETHEUS_MULTIPROC_DIR): each
worker writes its own; a scrape sums them all. A worker that is gone (killed, or
restarted on a reload) leaves files behind: its live gauges are dropped, and its
counters, histograms and summaries are added into one file per kind, so no count is lost
and no scrape reads a file per worker that ever ran."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest, multiprocess
from prometheus_client.mmap_dict import MmapedDict


def forget_gone_workers() -> None:
    """Under PROMETHEUS_MULTIPROC_DIR (`gateway serve --workers N`): the live gauges
    (`gateway_config_info`, `gateway_pending_bookings`) of workers no longer running,
    dropped. A worker killed, or restarted on a reload, left its files, and /metrics
    showed its config sha and its pending bookings for good. Called as a worker starts;
    a worker that stops drops its own (`worker_stopped`)."""
    folder = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not folder:
        return
    for path in Path(folder).glob("gauge_live*_*.db"):
        pid = path.stem.rsplit("_", 1)[-1]
        if pid.isdigit() and not _running(int(pid)):
            multiprocess.mark_process_dead(int(pid), folder)  # type: ignore[no-untyped-call]
    _merge_gone_workers(Path(folder))


# Counters, histograms and summaries sum across processes: a gone worker's file is added
# into one file per kind (MERGED), so reloads (every SIGHUP restarts the workers) do not
# leave a file per worker for every scrape to read, and no count is lost.
_SUMMED = ("counter", "histogram", "summary")
MERGED = "merged"  # counter_merged.db, ...: what gone workers counted


def _merge_gone_workers(folder: Path) -> None:
    """Each gone worker's counter, histogram and summary files, added into the kind's
    MERGED file, then deleted; under a lock of the folder (workers start together)."""
    with open(folder / "merge.lock", "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for kind in _SUMMED:
            gone = [
                path
                for path in folder.glob(f"{kind}_*.db")
                if (pid := path.stem.rsplit("_", 1)[-1]).isdigit() and not _running(int(pid))
            ]
            if not gone:
                continue
            merged = MmapedDict(str(folder / f"{kind}_{MERGED}.db"))  # type: ignore[no-untyped-call]
            try:
                for path in gone:
                    for key, value, stamp, _ in MmapedDict.read_all_values_from_file(str(path)):  # type: ignore[no-untyped-call]
                        had, _ = merged.read_value(key)  # type: ignore[no-untyped-call]
                        merged.write_value(key, had + value, stamp)  # type: ignore[no-untyped-call]
            finally:
                merged.close()  # type: ignore[no-untyped-call]
            for path in gone:
                path.unlink(missing_ok=True)


def every_process() -> bytes:
    """The samples of every worker's files. A gone worker's file merged (and deleted)
    between the collector's listing of the folder and its read: read again."""
    for attempt in range(3):
        merged = CollectorRegistry(auto_describe=False)
        multiprocess.MultiProcessCollector(merged)  # type: ignore[no-untyped-call]
        try:
            return generate_latest(merged)
        except FileNotFoundError:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def worker_stopped() -> None:
    """This worker's live gauges dropped as it stops (see `forget_gone_workers`)."""
    if folder := os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        multiprocess.mark_process_dead(os.getpid(), folder)  # type: ignore[no-untyped-call]


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process by now: not a worker of this folder
        return False
    return True
