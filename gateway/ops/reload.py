"""Hot reload (`POST /admin/reload`, SIGHUP): read the policies and tenants.yaml again
and, when every file is valid, serve the next request on them. A bad file changes
nothing and every problem is reported. Requests in flight keep the generation they
started with (`Gateway.reconfigured`). config.yaml itself (store, upstream, limits,
prices, the policies folder) is read at start-up only: the policies are checked against
the config.yaml the gateway runs, read from the folder it named then, and a change to
config.yaml is reported as needing a restart (gateway.config.reload_settings)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from typing import Any

from starlette.applications import Starlette

from gateway.config import reload_settings
from gateway.errors import ConfigError, ConfigRejected
from gateway.runtime import Gateway

log = logging.getLogger("gateway")


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
            settings, restart = await asyncio.to_thread(reload_settings, running)
        except ConfigError as exc:
            log.warning("config reload refused: %s", "; ".join(exc.lines()))
            raise ConfigRejected(exc.problems) from None
        problems = gw.registry.problems_with(settings.known_plans)
        if problems:
            log.warning("config reload refused: %s", "; ".join(f"{k}: {r}" for _, k, r in problems))
            raise ConfigRejected(problems)
        settings = dataclasses.replace(  # the keys as the gateway started with them
            settings, admin_key=running.admin_key, provider_key=running.provider_key
        )
        changed = settings.sha != running.sha
        if changed:
            app.state.gateway = gw.reconfigured(settings)
            gw.metrics.set_config(settings.sha)
        log.info("config reloaded: sha %s (%s)", settings.sha, "changed" if changed else "same")
        return {"sha": settings.sha, "changed": changed, "restart_required": restart}
