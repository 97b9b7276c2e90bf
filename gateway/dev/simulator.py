"""The built-in simulated upstream: an OpenAI-compatible provider on a loopback port.

It stands in for the paid provider in the demo, the tests and the benchmarks. Usage is
reported like OpenAI's, prefix caching included: `cached_tokens` is the longest common
token prefix with a recent request routed to the same cache (by `prompt_cache_key`, else
by the first message, as providers route by the start of the prompt), counted only from
1,024 tokens, in 128-token steps, within a TTL. `n` choices and tool definitions are
billed like a provider bills them. Any model name answers (an Azure deployment name,
a vLLM model). Test hooks: request headers `x-simulator-*` (`-reply` scripts the answer,
percent-encoded UTF-8 since a header value is Latin-1; `-fill` uses the whole output
ceiling, `-prompt-factor` scales the prompt tokens billed, `-clock` is the time in
seconds the prefix cache's TTL reads, instead of this process's, `-web-searches` how often
a Responses call with a web search tool searches, at most its `max_tool_calls`;
`-service-tier` the tier a reply says served it, else the one asked for), and models
named `fail-*` answer 500. Image and audio routes: gateway.dev.simulator_media.
Every usage it computes is logged at `GET /sim/usage`, reported or not.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import socket
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import unquote

import orjson
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from gateway.dev import simulator_apis, simulator_media
from gateway.dev.simulator_cache import SimulatorState, logged_headers
from gateway.dev.simulator_replies import (
    choices_body,
    choices_chunks,
    chunks,
    completion_body,
    filled_text,
    reply_text,
    tool_tokens,
    usage_for,
)
from gateway.errors import error_body

MODELS = (
    "gpt-4o-mini",
    "gpt-4o",
    "gpt-4.1-mini",
    "deepseek-chat",
    "claude-3-5-haiku",
    "local-llama",
)


def _error(status: int, message: str, code: str | None = None) -> Response:
    return Response(
        error_body(message, "invalid_request_error", code), status, media_type="application/json"
    )


async def chat_completions(request: Request) -> Response:
    state: SimulatorState = request.app.state.sim
    try:
        body = orjson.loads(await request.body())
    except orjson.JSONDecodeError:
        return _error(400, "We could not parse the JSON body of your request.")
    forced = request.headers.get("x-simulator-status")
    if forced:
        return _error(int(forced), f"simulated upstream error {forced}", "simulated")
    if (
        not isinstance(body, dict)
        or not isinstance(body.get("messages"), list)
        or not body.get("model")
    ):
        return _error(400, "'model' and 'messages' are required.")
    if str(body["model"]).startswith("fail-"):
        return _error(500, "simulated model failure", "simulated")
    if delay := float(request.headers.get("x-simulator-delay-ms", "0")) / 1000:
        state.delayed_received += 1  # a test may wait for this before it kills the caller
        await asyncio.sleep(delay)
    model, messages = str(body["model"]), body["messages"]
    prompt = state.prompt(messages)
    key = body.get("prompt_cache_key") or hashlib.blake2b(orjson.dumps(messages[:1])).hexdigest()
    # A replay's own clock (its turns' times, `gateway replay --clock workload`), else ours.
    now = float(request.headers.get("x-simulator-clock") or time.monotonic())
    cached = state.cached_tokens(str(key), prompt, now)
    limit = body.get("max_completion_tokens") or body.get("max_tokens")
    limit = limit if isinstance(limit, int) else None
    n = body["n"] if isinstance(body.get("n"), int) and body["n"] > 1 else 1
    replies = [_reply(request, messages, limit, state, i) for i in range(n)]
    pieces = replies[0]
    text = "".join(pieces)
    # Billed like a provider: every choice's tokens, the tool definitions as input.
    completion = sum(len(state.encoding.encode("".join(r), disallowed_special=())) for r in replies)
    billed = prompt.total + tool_tokens(body, state.encoding)
    # A provider whose tokenizer counts more than the gateway's (the token factor).
    billed = round(billed * float(request.headers.get("x-simulator-prompt-factor", "1")))
    usage = usage_for(model, billed, min(cached, billed), completion)
    usage = simulator_apis.forced_usage(request, usage)  # a hostile provider's counts
    state.counter += 1
    cid = f"chatcmpl-sim{state.counter:08d}"
    stream = body.get("stream") is True
    options = body.get("stream_options") or {}
    report = not stream or options.get("include_usage") is True
    report = report and request.headers.get("x-simulator-drop-usage") is None
    state.usage_log.append(
        {
            "model": model,
            "usage": usage,
            "reported": report,
            "stream": stream,
            "headers": logged_headers(request),
            "max_tokens": limit,
            # the reply ceiling's keys as sent (o-series models refuse max_tokens)
            "ceiling_keys": sorted(k for k in ("max_tokens", "max_completion_tokens") if k in body),
            "messages": messages if request.headers.get("x-simulator-log-messages") else None,
        }
    )
    if len(state.usage_log) > 100_000:
        del state.usage_log[:50_000]
    tier = simulator_apis.served_tier(request, body)
    if not stream:
        reply = completion_body(cid, model, text, usage if report else None, tier)
        if n > 1:
            reply = choices_body(reply, ["".join(r) for r in replies])
        return Response(orjson.dumps(reply), media_type="application/json")
    chunk_delay = float(request.headers.get("x-simulator-chunk-delay-ms", "0")) / 1000
    break_after = request.headers.get("x-simulator-break-after")
    asked = options.get("include_usage") is True
    events = (
        choices_chunks(cid, model, replies, usage, asked, report, tier)
        if n > 1
        else chunks(cid, model, pieces, usage, asked, report, tier)
    )
    return StreamingResponse(
        _paced(state, events, chunk_delay, int(break_after) if break_after else None),
        media_type="text/event-stream",
    )


def _reply(
    request: Request, messages: list[Any], limit: int | None, state: SimulatorState, variant: int
) -> list[str]:
    """One choice's pieces: scripted (`x-simulator-reply`), the whole ceiling
    (`x-simulator-fill`), or the usual made-up answer."""
    scripted = unquote(request.headers.get("x-simulator-reply", ""))
    if scripted:
        return [w + " " for w in scripted.split(" ")[:-1]] + [scripted.split(" ")[-1]]
    if request.headers.get("x-simulator-fill"):
        return filled_text(limit, state.encoding)
    return reply_text(messages, limit, state.encoding, variant)


async def _paced(
    state: SimulatorState, events: Iterator[bytes], delay: float, break_after: int | None
) -> AsyncIterator[bytes]:
    finished = False
    try:
        async for event in _paced_events(events, delay, break_after):
            yield event
        finished = True
    finally:
        if not finished:
            state.streams_aborted += 1


async def _paced_events(
    events: Iterator[bytes], delay: float, break_after: int | None
) -> AsyncIterator[bytes]:
    for n, event in enumerate(events):
        if break_after is not None and n >= break_after:
            raise ConnectionAbortedError("simulated upstream failure mid-stream")
        if delay and n:
            await asyncio.sleep(delay)
        yield event


async def models(request: Request) -> Response:
    data = [
        {"id": m, "object": "model", "created": 1_700_000_000, "owned_by": "simulator"}
        for m in MODELS
    ]
    return Response(orjson.dumps({"object": "list", "data": data}), media_type="application/json")


async def embeddings(request: Request) -> Response:
    state: SimulatorState = request.app.state.sim
    try:
        body = orjson.loads(await request.body())
    except orjson.JSONDecodeError:
        return _error(400, "We could not parse the JSON body of your request.")
    if not isinstance(body, dict) or not isinstance(body.get("input"), str | list):
        return _error(400, "'input' is required: a string or a list of strings.")
    inputs = body.get("input")
    inputs = [inputs] if isinstance(inputs, str) else list(inputs or [])
    counts = [len(state.encoding.encode(str(i), disallowed_special=())) for i in inputs]
    usage = {"prompt_tokens": sum(counts), "total_tokens": sum(counts)}
    state.usage_log.append(
        {
            "model": body.get("model"),
            "usage": usage,
            "reported": True,
            "stream": False,
            "headers": logged_headers(request),
        }
    )
    if len(state.usage_log) > 100_000:
        del state.usage_log[:50_000]
    data = [
        {"object": "embedding", "index": n, "embedding": [round(c / (k + 1), 4) for k in range(8)]}
        for n, c in enumerate(counts)
    ]
    return Response(
        orjson.dumps({"object": "list", "data": data, "model": body.get("model"), "usage": usage}),
        media_type="application/json",
    )


async def usage_log(request: Request) -> Response:
    return Response(orjson.dumps(request.app.state.sim.usage_log), media_type="application/json")


async def stats(request: Request) -> Response:
    state: SimulatorState = request.app.state.sim
    body = {
        "requests": len(state.usage_log),
        "streams_aborted": state.streams_aborted,
        "delayed_received": state.delayed_received,
    }
    return Response(orjson.dumps(body), media_type="application/json")


def create_simulator_app(cache_ttl_s: float = 300.0) -> Starlette:
    app = Starlette(
        routes=[
            Route("/v1/chat/completions", chat_completions, methods=["POST"]),
            Route("/v1/models", models, methods=["GET"]),
            Route("/v1/embeddings", embeddings, methods=["POST"]),
            Route("/v1/completions", simulator_apis.completions, methods=["POST"]),
            Route("/v1/responses", simulator_apis.responses, methods=["POST"]),
            Route("/v1/images/{kind:str}", simulator_media.images, methods=["POST"]),
            Route("/v1/audio/transcriptions", simulator_media.transcriptions, methods=["POST"]),
            Route("/v1/audio/translations", simulator_media.transcriptions, methods=["POST"]),
            Route("/v1/audio/speech", simulator_media.speech, methods=["POST"]),
            Route("/sim/usage", usage_log, methods=["GET"]),
            Route("/sim/stats", stats, methods=["GET"]),
        ]
    )
    app.state.sim = SimulatorState(cache_ttl_s=cache_ttl_s)
    return app


@contextlib.asynccontextmanager
async def serve_simulator_in_background() -> AsyncIterator[tuple[str, SimulatorState]]:
    """Run the simulator on a free loopback port in this event loop; yield its base URL
    and its state (whose usage log a caller in this process may read directly)."""
    # IPPROTO_TCP, not socket.socket()'s proto 0: asyncio sets TCP_NODELAY only on
    # sockets whose proto says TCP, and without it every reply written as head + body
    # waited ~40 ms for a delayed ACK (Nagle).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    app = create_simulator_app()
    # No log_config or log_level: uvicorn applies those to the process's shared
    # `uvicorn.*` loggers, which silenced the gateway's own "Uvicorn running on" line.
    config = uvicorn.Config(app, log_config=None, lifespan="off")
    config.access_log = False  # after __init__, which would empty the shared access logger
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.01)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    logging.getLogger("gateway.dev.simulator").info("built-in simulated upstream on %s", url)
    try:
        yield url, app.state.sim
    finally:
        server.should_exit = True
        await task
        sock.close()
