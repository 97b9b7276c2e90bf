"""`gateway replay FILE.jsonl [--policies DIR] [--baseline full|none] [--format json]
[--clock wall|workload]`:
the seed's step 7, comparing a policy with full history before approving it."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from pathlib import Path

from gateway.context.policy import POLICY_FILE
from gateway.dev.replay import TENANT, ReplayError, UnpricedModel, read_workload, replay
from gateway.dev.replay_report import as_table, to_json
from gateway.dev.replay_workload import WorkloadError
from gateway.errors import ConfigError
from gateway.spend.ceilings import SPEND_FILE


def _progress(done: int, elapsed: float) -> None:
    if done % 10 == 0:
        print(f"  {done} conversations replayed ({elapsed:.0f} s)", file=sys.stderr)


def _policies_problem(policies: str | None) -> str | None:
    """Why the --policies folder cannot be replayed (None: it can, or there is none)."""
    if policies is None:
        return None
    folder = Path(policies)
    if not folder.is_dir():
        return "is not a folder"
    if not any((folder / name).is_file() for name in (POLICY_FILE, SPEND_FILE)):
        return f"has neither {POLICY_FILE} nor {SPEND_FILE} (the only files replay reads)"
    return None


def _config_problems(exc: ConfigError, plan: str) -> int:
    """Print what is wrong; 2 when it is only --plan (the replay's tenant is written into
    a temporary tenants.yaml, which the user never saw), else 1."""
    plan_key = f"tenants.{TENANT}.plan"
    others = [(f, k, r) for f, k, r in exc.problems if k != plan_key]
    for file, key, reason in exc.problems:
        where = f"--plan {plan!r}" if key == plan_key else f"{file}: {key}"
        print(f"error: {where}: {reason}", file=sys.stderr)
    return 1 if others else 2


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
    wrong = _policies_problem(policies)
    if wrong:
        print(f"error: --policies {policies!r} {wrong}", file=sys.stderr)
        return 2
    try:
        conversations = read_workload(path, clock)
    except WorkloadError as exc:
        for line in exc.problems:
            print(f"error: {line}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as exc:
        print(f"error: cannot read {workload}: {exc}", file=sys.stderr)
        return 1
    # The simulator's uvicorn logs a line a request on the process's shared logger.
    logging.getLogger("uvicorn.access").setLevel(logging.WARNING)
    try:
        result = asyncio.run(
            replay(conversations, folder, baseline == "full", model, plan, _progress, clock)
        )
    except ConfigError as exc:
        return _config_problems(exc, plan)
    except ReplayError as exc:  # an unpriced --model is a usage error, as a --plan is
        print(f"error: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, UnpricedModel) else 1
    report = to_json(result, model, workload, str(folder) if folder else "shipped")
    print(json.dumps(report, indent=2) if output == "json" else as_table(report))
    return 0
