"""The `gateway` command. `cli_logic(argv) -> int`; only `main` calls sys.exit."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from gateway.config import Settings, load_settings
from gateway.context.policy import packaged_entries_back
from gateway.errors import ConfigError, InvalidRequest, StoreRejected
from gateway.ops import tenant_cli
from gateway.urls import shown_url

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
    serve.add_argument("--port", type=_port, default=8080)
    serve.add_argument("--workers", type=_positive_int, default=1)
    serve.add_argument(
        "--worker-start-timeout",
        type=_positive_int,
        default=60,
        help="seconds a worker (--workers N) has to start before uvicorn gives it up; on a "
        "reload (SIGHUP) a worker not ready in time leaves the old one serving (default 60)",
    )
    serve.add_argument(
        "--access-log",
        choices=["json", "plain", "off"],
        default=None,
        help="one line per request on stderr (default: logging.access_log in config.yaml)",
    )

    check = sub.add_parser("check-config", help="validate config.yaml and the policies")
    check.add_argument("--config", default="config.yaml")

    tenant_cli.add_parsers(sub)

    migrate = sub.add_parser(
        "migrate", help="prepare the stores for this version (PostgreSQL schema, Redis layout)"
    )
    migrate.add_argument("--config", default="config.yaml")

    sim = sub.add_parser("simulate-upstream", help="run the simulated upstream alone")
    sim.add_argument("--host", default="127.0.0.1")
    sim.add_argument("--port", type=_port, default=9000)
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
    gen.add_argument("--conversations", type=_positive_int, default=600)
    gen.add_argument("--seed", type=int, default=0)
    gen.add_argument("--lang", default="pt,en,es", help="comma list of pt, en, es")
    gen.add_argument("-o", "--output", required=True, help="the JSONL file to write; - for stdout")

    replay = sub.add_parser("replay", help="a workload through the gateway vs full history")
    replay.add_argument("file", help="a workload JSONL (gateway workload generate)")
    replay.add_argument("--policies", default=None, help="folder with context.yaml/spend.yaml")
    replay.add_argument("--baseline", choices=["full", "none"], default="full")
    replay.add_argument("--format", choices=["table", "json"], default="table")
    replay.add_argument("--model", default="gpt-4o-mini")
    replay.add_argument("--plan", default="pro", help="the replaying tenant's plan")
    replay.add_argument(
        "--clock",
        choices=["wall", "workload"],
        default="wall",
        help="the cache TTL runs on replay time (wall) or on the turns' own times (workload)",
    )
    return parser


def _check_config(config: str) -> int:
    try:
        settings = load_settings(Path(config))
    except ConfigError as exc:
        for line in exc.lines():
            print(f"error: {line}", file=sys.stderr)
        return 1
    # A path typed wrong would start a new, empty store, and check-config said ok.
    new_file = _new_sqlite_file(settings.store_url)
    try:
        plans, unread = tenant_cli.tenant_plans(settings)
    except StoreRejected as exc:  # up but refusing (a Redis db index past its databases)
        print(f"error: {config}: store: {exc.message}", file=sys.stderr)
        return 1
    if _layout_problem(settings) != 0:
        return 1
    for warning in [*_pricing_warnings(settings, config), *_spend_warnings(settings, plans)]:
        print(f"warning: {warning}", file=sys.stderr)
    if unread is not None:
        print(
            f"note: the store could not be read ({unread}): only the tenants of "
            "tenants.yaml were checked for a spend ceiling without an `unpriced` choice",
            file=sys.stderr,
        )
    for entry in packaged_entries_back(settings.policies_dir):
        print(
            f"note: context.yaml states its section but not {entry}: the packaged one "
            "applies (the file is layered on the packaged one; set it to null to drop it)",
            file=sys.stderr,
        )
    if not (settings.policies_dir / "context.yaml").exists():
        print(
            f"note: no context.yaml in {settings.policies_dir}: the packaged window "
            "policies apply (gateway/data/context.yaml)",
            file=sys.stderr,
        )
    if new_file is not None:
        print(
            f"note: the store's file {new_file} does not exist: the gateway will start a "
            "new, empty store there (no tenants, keys or spend of before: check the path "
            "if the deployment has one)",
            file=sys.stderr,
        )
    declared = len(settings.tenants_by_hash)
    store = shown_url(settings.store_url)
    print(f"ok: {config} ({declared} tenants in tenants.yaml, store {store})")
    return 0


def _layout_problem(settings: Settings) -> int:
    """A Redis of an earlier version's layout, not migrated: `serve` would read it empty."""
    import asyncio

    from gateway.ops.migrate import layout_problem

    problem = asyncio.run(layout_problem(settings.config))
    for line in [] if problem is None else problem.lines():
        print(f"error: {line}", file=sys.stderr)
    return 0 if problem is None else 1


def _new_sqlite_file(store_url: str) -> str | None:
    """The SQLite store's file when it does not exist yet (None: it does, or no SQLite)."""
    if not store_url.startswith("sqlite:///"):
        return None
    path = Path(store_url.removeprefix("sqlite:///"))
    return None if path.exists() else str(path)


def _pricing_warnings(settings: Settings, config: str) -> list[str]:
    """The upstream's provider, when genai-prices cannot tell it: calls are then priced
    by their models' names alone (gateway.spend.pricing)."""
    from gateway.config import SIMULATOR, pricer_for

    upstream = settings.config.upstream
    if upstream.base_url == SIMULATOR or pricer_for(settings.config).provider_known:
        return []
    if upstream.provider:
        unknown = f"upstream.provider {upstream.provider!r} is no provider genai-prices knows"
    else:
        unknown = (
            f"upstream.provider is not set and genai-prices knows no provider at "
            f"upstream.base_url ({shown_url(upstream.base_url)})"
        )
    return [
        f"{config}: {unknown}: calls are priced by their models' names alone (gpt-* at "
        "OpenAI's prices, claude-* at Anthropic's; a model only its maker lists, such as "
        "text-embedding-3-small, at the maker's), and any other (a deployment name, an open "
        "model a host prices its own way, an embedding of a host) is booked unpriced and, "
        "under a ceiling, refused unless `unpriced` allows it: set upstream.provider "
        "(openai, azure, groq, ...)"
    ]


def _spend_warnings(settings: Settings, plans: dict[str, str]) -> list[str]:
    from gateway.config import pricer_for
    from gateway.spend.ceilings import spend_warnings

    upstream = settings.config.upstream
    return spend_warnings(
        settings.spend, plans, pricer_for(settings.config).knows, upstream.timeout_s
    )


def _whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:  # argparse would name the function: "invalid _port value"
        raise argparse.ArgumentTypeError(f"must be a whole number, not {text!r}") from None


def _positive_int(text: str) -> int:
    value = _whole_number(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _port(text: str) -> int:
    """A TCP port: uvicorn binds 99999 as 34463 (modulo 65536) and logs it as 99999."""
    value = _whole_number(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port, 0 to 65535, not {value}")
    return value


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    if _check_config(args.config) != 0 or _check_schema(args.config) != 0:
        return 1
    os.environ["GATEWAY_CONFIG"] = str(Path(args.config).resolve())
    made = None
    if args.workers > 1 and "PROMETHEUS_MULTIPROC_DIR" not in os.environ:
        # Each worker writes its metrics to files here; /metrics sums them all.
        import tempfile

        made = os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="gateway-metrics-")
    from gateway.proxy.request_log import logging_config

    access = args.access_log or load_settings(Path(args.config)).config.logging.access_log
    try:
        _uvicorn_run(
            uvicorn.run,
            "gateway.proxy.app:create_app_from_env",
            factory=True,
            host=args.host,
            port=args.port,
            workers=args.workers,
            # uvicorn's 5 s: a worker starting on a busy host (imports, tokenizer) was given
            # up, and a SIGHUP reload was dropped with the old workers still serving.
            timeout_worker_healthcheck=args.worker_start_timeout,
            access_log=False,  # the gateway's own access line replaces uvicorn's
            log_config=logging_config(access),
            log_level="info",
        )
    except _StartupFailed:
        return 1
    finally:
        if made is not None:  # the folder this run made: its metrics end with it
            import shutil

            shutil.rmtree(made, ignore_errors=True)
    return 0


class _StartupFailed(Exception):
    """uvicorn could not start (a port in use, an app that failed its start-up): it has
    logged why."""


def _uvicorn_run(run: Any, *args: Any, **kwargs: Any) -> None:
    """uvicorn.run, whose sys.exit(3) on a failed start becomes the CLI's exit code 1."""
    try:
        run(*args, **kwargs)
    except SystemExit as exc:
        if exc.code:
            raise _StartupFailed from None


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
    except (StoreUnavailable, StoreRejected) as exc:  # down, or refusing (a Redis db index)
        print(f"error: {exc.message}", file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0


def _registry(args: argparse.Namespace) -> int:
    try:
        settings = load_settings(Path(args.config))
    except ConfigError as exc:
        for line in exc.lines():
            print(f"error: {line}", file=sys.stderr)
        return 1
    return tenant_cli.run(settings, args)


def _report(args: argparse.Namespace) -> int:
    import asyncio

    from gateway.errors import StoreUnavailable
    from gateway.ops.admin import checked_period
    from gateway.ops.report import PlotUnavailable, gather, pyplot
    from gateway.runtime import open_configured_store

    try:
        period = checked_period(args.period)
    except InvalidRequest as exc:
        print(f"error: --period {args.period!r}: {exc.message}", file=sys.stderr)
        return 2
    if args.plot:  # before reading the store: a missing extra is known at once
        try:
            pyplot()
        except PlotUnavailable as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    try:
        settings = load_settings(Path(args.config))
    except ConfigError as exc:
        for line in exc.lines():
            print(f"error: {line}", file=sys.stderr)
        return 1

    async def read() -> Any:
        from gateway.tenancy.registry import Registry

        store = open_configured_store(settings.config)
        try:
            tenants = [t.name for t in (await Registry.read(store, settings)).tenants()]
            return await gather(store, tenants, period, args.tenant)
        finally:
            await store.close()

    try:
        report = asyncio.run(read())
    except (StoreUnavailable, StoreRejected) as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 1
    return _print_report(report, args)


def _print_report(report: Any, args: argparse.Namespace) -> int:
    import json

    from gateway.ops.report import as_csv, as_table, plot

    if args.format == "json":
        print(json.dumps(report.to_json(), indent=2))
    elif args.format == "csv":
        print(as_csv(report), end="")
    else:
        print(as_table(report))
    if args.plot:
        try:
            plot(report, args.plot)
        except OSError as exc:  # an unwritable path: a line, not a traceback
            print(f"error: cannot write the plot to {args.plot}: {exc.strerror}", file=sys.stderr)
            return 1
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
        "tenants": _registry,
        "keys": _registry,
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

    try:
        _uvicorn_run(
            uvicorn.run,
            create_simulator_app(args.cache_ttl),
            host=args.host,
            port=args.port,
            access_log=False,
            log_level="warning",
        )
    except _StartupFailed:
        return 1
    return 0


def _demo(args: argparse.Namespace) -> int:
    from gateway.dev.demo import run_demo

    return run_demo(Path(args.dir) if args.dir else None)


def _workload(args: argparse.Namespace) -> int:
    from gateway.dev.cs_chitchat import ChitchatMissing
    from gateway.dev.cs_workload import LANGUAGES, stream, write

    langs = [lang.strip() for lang in args.lang.split(",") if lang.strip()]
    unknown = sorted(set(langs) - set(LANGUAGES))
    if unknown or not langs:
        print(f"error: --lang takes {','.join(LANGUAGES)}; got {args.lang!r}", file=sys.stderr)
        return 2
    try:
        if args.output == "-":  # the workload on stdout, its summary on stderr
            print(stream(sys.stdout, args.conversations, args.seed, langs), file=sys.stderr)
            return 0
        print(write(args.output, args.conversations, args.seed, langs))
    except ChitchatMissing as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:  # a folder missing or read-only, a full disk: nothing written
        print(f"error: cannot write {args.output}: {exc.strerror}", file=sys.stderr)
        return 1
    print(f"written to {args.output}", file=sys.stderr)
    return 0


def _replay(args: argparse.Namespace) -> int:
    from gateway.dev.replay_command import run_replay

    return run_replay(
        args.file, args.policies, args.baseline, args.format, args.model, args.plan, args.clock
    )


def main() -> None:
    sys.exit(_outermost(sys.argv[1:]))


def _outermost(argv: list[str]) -> int:
    """cli_logic, with what may end any command said in one line, never a traceback."""
    try:
        code = cli_logic(argv)
        sys.stdout.flush()  # a closed pipe shows here, not at the interpreter's exit
    except BrokenPipeError:  # `gateway ... | head`: the reader has gone
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        print("error: the output was not read whole (stdout closed)", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except OSError as exc:
        if exc.filename is None:  # not a file's trouble: a bug, with its traceback
            raise
        print(f"error: {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 1
    return code
