"""Hot reload (`POST /admin/reload`, SIGHUP): read the policies and tenants.yaml again
and, when every file is valid, serve the next request on them. A bad file changes
nothing and every problem is reported. Requests in flight keep the generation they
started with (`Gateway.reconfigured`). config.yaml itself (store, upstream, limits,
prices) is read at start-up only: a change there is reported as needing a restart."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from typing import Any

from starlette.applications import Starlette

from gateway.config import Settings, config_sha, load_settings
from gateway.errors import ConfigError, ConfigRejected
from gateway.runtime import Gateway

log = logging.getLogger("gateway")


def _restart_needed(running: Settings, read: Settings) -> list[str]:
    old, new = running.config.model_dump(), read.config.model_dump()
    return sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))


async def reload_on_signal(app: Starlette) -> None:
    """SIGHUP: the same reload; the outcome goes to the log."""
    with contextlib.suppress(ConfigRejected):  # logged, every problem, by reload_gateway
        await reload_gateway(app)


async def reload_gateway(app: Starlette) -> dict[str, Any]:
    """Reload once (concurrent reloads queue); raises ConfigRejected on any problem."""
    async with app.state.reload_lock:
        gw: Gateway = app.state.gateway
        running = gw.settings
        try:
            read = await asyncio.to_thread(load_settings, running.config_path, running.env)
        except ConfigError as exc:
            log.warning("config reload refused: %s", "; ".join(exc.lines()))
            raise ConfigRejected(exc.problems) from None
        problems = gw.registry.problems_with(read.known_plans)
        if problems:
            log.warning("config reload refused: %s", "; ".join(f"{k}: {r}" for _, k, r in problems))
            raise ConfigRejected(problems)
        restart = _restart_needed(running, read)
        settings = dataclasses.replace(  # config.yaml stays as it was loaded
            read,
            config=running.config,
            admin_key=running.admin_key,
            provider_key=running.provider_key,
            config_digest=running.config_digest,
            sha=config_sha(running.config_digest, read.policies_dir),
        )
        changed = settings.sha != running.sha
        if changed:
            app.state.gateway = gw.reconfigured(settings)
            gw.metrics.set_config(settings.sha)
        log.info("config reloaded: sha %s (%s)", settings.sha, "changed" if changed else "same")
        return {"sha": settings.sha, "changed": changed, "restart_required": restart}
