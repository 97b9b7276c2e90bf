"""`gateway replay FILE.jsonl [--policies DIR] [--baseline full|none] [--format json]
[--clock wall|workload]`:
the seed's step 7, comparing a policy with full history before approving it."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from gateway.dev.replay import ReplayError, read_workload, replay
from gateway.dev.replay_report import as_table, to_json
from gateway.errors import ConfigError


def _progress(done: int, elapsed: float) -> None:
    if done % 10 == 0:
        print(f"  {done} conversations replayed ({elapsed:.0f} s)", file=sys.stderr)


def run_replay(
    workload: str,
    policies: str | None,
    baseline: str,
    output: str,
    model: str,
    plan: str,
    clock: str = "wall",
) -> int:
    path = Path(workload)
    folder = Path(policies) if policies else None
    if folder is not None and not folder.is_dir():
        print(f"error: --policies {policies!r} is not a folder", file=sys.stderr)
        return 2
    try:
        conversations = read_workload(path)
    except (OSError, ValueError) as exc:
        print(f"error: cannot read {workload}: {exc}", file=sys.stderr)
        return 1
    try:
        result = asyncio.run(
            replay(conversations, folder, baseline == "full", model, plan, _progress, clock)
        )
    except ConfigError as exc:
        for line in exc.lines():
            print(f"error: {line}", file=sys.stderr)
        return 1
    except ReplayError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    report = to_json(result, model, workload, str(folder) if folder else "shipped")
    print(json.dumps(report, indent=2) if output == "json" else as_table(report))
    return 0
