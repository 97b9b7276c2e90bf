"""The `gateway` command. `cli_logic(argv) -> int`; only `main` calls sys.exit."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from gateway.config import Settings, load_settings, resolve_relative
from gateway.errors import ConfigError

DESCRIPTION = (
    "An OpenAI-compatible gateway that budgets each conversation's context and books every "
    "token to its tenant. Start with `gateway demo`; `gateway serve --config config.yaml` "
    "runs it; `gateway COMMAND --help` tells more."
)


def _version() -> str:
    try:
        return metadata.version("context-quota-gateway")
    except metadata.PackageNotFoundError:  # run from a checkout without installing
        return "unknown (not installed)"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gateway", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"gateway {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the gateway")
    serve.add_argument("--config", default="config.yaml")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8080)
    serve.add_argument("--workers", type=int, default=1)
    serve.add_argument("--access-log", action="store_true")

    check = sub.add_parser("check-config", help="validate config.yaml and the policies")
    check.add_argument("--config", default="config.yaml")

    tenants = sub.add_parser("tenants", help="manage tenants")
    tenants_sub = tenants.add_subparsers(dest="tenants_command", required=True)
    add = tenants_sub.add_parser("add", help="create a tenant; prints its key once")
    add.add_argument("name")
    add.add_argument("--plan", required=True)
    add.add_argument("--config", default="config.yaml")

    migrate = sub.add_parser(
        "migrate", help="prepare the stores for this version (PostgreSQL schema, Redis layout)"
    )
    migrate.add_argument("--config", default="config.yaml")

    sim = sub.add_parser("simulate-upstream", help="run the simulated upstream alone")
    sim.add_argument("--host", default="127.0.0.1")
    sim.add_argument("--port", type=int, default=9000)
    sim.add_argument("--cache-ttl", type=float, default=300.0)

    report = sub.add_parser("report", help="cost figures from the store (seed 002)")
    report.add_argument("--config", default="config.yaml")
    report.add_argument("--period", default=None, help="YYYY-MM (default: this month)")
    report.add_argument("--tenant", default=None)
    report.add_argument("--format", choices=["table", "json", "csv"], default="table")
    report.add_argument("--plot", default=None, help="write the curves to this PNG")

    demo = sub.add_parser("demo", help="simulator + gateway + a few conversations, then spend")
    demo.add_argument("--dir", default=None, help="keep the demo's files here")

    workload = sub.add_parser("workload", help="labelled customer-service conversations")
    workload_sub = workload.add_subparsers(dest="workload_command", required=True)
    gen = workload_sub.add_parser("generate", help="write a realistic workload as JSONL")
    gen.add_argument("--conversations", type=int, default=600)
    gen.add_argument("--seed", type=int, default=0)
    gen.add_argument("--lang", default="pt,en,es", help="comma list of pt, en, es")
    gen.add_argument("-o", "--output", required=True, help="the JSONL file to write")

    replay = sub.add_parser("replay", help="a workload through the gateway vs full history")
    replay.add_argument("file", help="a workload JSONL (gateway workload generate)")
    replay.add_argument("--policies", default=None, help="folder with context.yaml/spend.yaml")
    replay.add_argument("--baseline", choices=["full", "none"], default="full")
    replay.add_argument("--format", choices=["table", "json"], default="table")
    replay.add_argument("--model", default="gpt-4o-mini")
    replay.add_argument("--plan", default="pro", help="the replaying tenant's plan")
    return parser


def _check_config(config: str) -> int:
    try:
        settings = load_settings(Path(config))
    except ConfigError as exc:
        for line in exc.lines():
            print(f"error: {line}", file=sys.stderr)
        return 1
    for warning in _spend_warnings(settings):
        print(f"warning: {warning}", file=sys.stderr)
    print(f"ok: {config} ({len(settings.tenants_by_hash)} tenants, store {settings.store_url})")
    return 0


def _spend_warnings(settings: Settings) -> list[str]:
    from gateway.config import pricer_for
    from gateway.spend.ceilings import spend_warnings

    plans = {t.name: t.plan for t in settings.tenants_by_hash.values()}
    upstream = settings.config.upstream
    return spend_warnings(
        settings.spend, plans, pricer_for(settings.config).knows, upstream.timeout_s
    )


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    if _check_config(args.config) != 0 or _check_schema(args.config) != 0:
        return 1
    os.environ["GATEWAY_CONFIG"] = str(Path(args.config).resolve())
    if args.workers > 1 and "PROMETHEUS_MULTIPROC_DIR" not in os.environ:
        # Each worker writes its metrics to files here; /metrics sums them all.
        import tempfile

        os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="gateway-metrics-")
    uvicorn.run(
        "gateway.proxy.app:create_app_from_env",
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        access_log=args.access_log,
        log_level="info",
    )
    return 0


def _check_schema(config: str) -> int:
    import asyncio

    from gateway.ops.migrate import schema_problem

    problem = asyncio.run(schema_problem(load_settings(Path(config)).config))
    if problem is None:
        return 0
    for line in problem.lines():
        print(f"error: {line}", file=sys.stderr)
    return 1


def _migrate(args: argparse.Namespace) -> int:
    import asyncio

    from gateway.errors import StoreUnavailable
    from gateway.ops.migrate import migrate

    try:
        lines = asyncio.run(migrate(load_settings(Path(args.config)).config))
    except ConfigError as exc:
        for line in exc.lines():
            print(f"error: {line}", file=sys.stderr)
        return 1
    except StoreUnavailable as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0


def _tenants_add(args: argparse.Namespace) -> int:
    import yaml

    from gateway.ops.tenants import add_tenant

    config = Path(args.config)
    policies = "policies"
    if config.exists():
        raw = yaml.safe_load(config.read_text()) or {}
        policies = os.environ.get("GATEWAY_POLICIES") or raw.get("policies", policies)
    try:
        key = add_tenant(resolve_relative(config.resolve().parent, policies), args.name, args.plan)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(key)
    print(
        f"tenant {args.name!r} (plan {args.plan}) added; the key above is shown only once.",
        file=sys.stderr,
    )
    return 0


def _report(args: argparse.Namespace) -> int:
    import asyncio
    import json
    import time

    from gateway.errors import StoreUnavailable
    from gateway.ops.report import as_csv, as_table, gather, plot
    from gateway.runtime import open_configured_store
    from gateway.store.records import period_of

    try:
        settings = load_settings(Path(args.config))
    except ConfigError as exc:
        for line in exc.lines():
            print(f"error: {line}", file=sys.stderr)
        return 1
    period = args.period or period_of(time.time())
    tenants = sorted({t.name for t in settings.tenants_by_hash.values()})

    async def read() -> Any:
        store = open_configured_store(settings.config)
        try:
            return await gather(store, tenants, period, args.tenant)
        finally:
            await store.close()

    try:
        report = asyncio.run(read())
    except StoreUnavailable as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 1
    if args.format == "json":
        print(json.dumps(report.to_json(), indent=2))
    elif args.format == "csv":
        print(as_csv(report), end="")
    else:
        print(as_table(report))
    if args.plot:
        plot(report, args.plot)
        print(f"plot written to {args.plot}", file=sys.stderr)
    return 0


def cli_logic(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    # httpx logs every request at INFO: too chatty for a proxy, and no business of the log.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("httpx2").setLevel(logging.WARNING)
    commands = {
        "serve": _serve,
        "check-config": lambda a: _check_config(a.config),
        "tenants": _tenants_add,
        "simulate-upstream": _simulate,
        "report": _report,
        "migrate": _migrate,
        "demo": _demo,
        "workload": _workload,
        "replay": _replay,
    }
    return int(commands[args.command](args))


def _simulate(args: argparse.Namespace) -> int:
    import uvicorn

    from gateway.dev.simulator import create_simulator_app

    uvicorn.run(
        create_simulator_app(args.cache_ttl),
        host=args.host,
        port=args.port,
        access_log=False,
        log_level="warning",
    )
    return 0


def _demo(args: argparse.Namespace) -> int:
    from gateway.dev.demo import run_demo

    return run_demo(Path(args.dir) if args.dir else None)


def _workload(args: argparse.Namespace) -> int:
    from gateway.dev.cs_chitchat import ChitchatMissing
    from gateway.dev.cs_workload import LANGUAGES, write

    langs = [lang.strip() for lang in args.lang.split(",") if lang.strip()]
    unknown = sorted(set(langs) - set(LANGUAGES))
    if unknown or not langs:
        print(f"error: --lang takes {','.join(LANGUAGES)}; got {args.lang!r}", file=sys.stderr)
        return 2
    try:
        print(write(args.output, args.conversations, args.seed, langs))
    except ChitchatMissing as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"written to {args.output}", file=sys.stderr)
    return 0


def _replay(args: argparse.Namespace) -> int:
    from gateway.dev.replay_command import run_replay

    return run_replay(args.file, args.policies, args.baseline, args.format, args.model, args.plan)


def main() -> None:
    sys.exit(cli_logic(sys.argv[1:]))
