"""The simulated upstream's other token-billed routes: legacy `/v1/completions` and the
Responses API `/v1/responses`, billed like the provider bills them (every prompt's and
every generated choice's tokens, `best_of` included; tool definitions as input)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from gateway.dev.simulator_cache import SimulatorState
from gateway.dev.simulator_replies import CREATED, filled_text, reply_text, tool_tokens
from gateway.errors import error_body

COMPLETIONS_DEFAULT_MAX_TOKENS = 16  # OpenAI's default for the legacy route


def _bad(message: str) -> Response:
    return Response(
        error_body(message, "invalid_request_error", None), 400, media_type="application/json"
    )


async def _body(request: Request) -> dict[str, Any] | None:
    try:
        body = orjson.loads(await request.body())
    except orjson.JSONDecodeError:
        return None
    return body if isinstance(body, dict) and isinstance(body.get("model"), str) else None


def _reply(request: Request, state: SimulatorState, text: str, limit: int | None, i: int) -> str:
    if request.headers.get("x-simulator-fill"):
        return "".join(filled_text(limit, state.encoding))
    return "".join(reply_text([{"role": "user", "content": text}], limit, state.encoding, i))


def _prompts(prompt: Any) -> list[Any]:
    if isinstance(prompt, str) or (
        isinstance(prompt, list) and all(isinstance(t, int) for t in prompt)
    ):
        return [prompt]
    return list(prompt) if isinstance(prompt, list) else [prompt]


def _tokens(state: SimulatorState, prompt: Any) -> int:
    if isinstance(prompt, list) and all(isinstance(t, int) for t in prompt):
        return len(prompt)
    return len(state.encoding.encode(str(prompt), disallowed_special=()))


def _positive(value: Any, default: int) -> int:
    return (
        value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default
    )


def served_tier(request: Request, body: dict[str, Any]) -> str:
    """The service tier a reply says served it: `x-simulator-service-tier` (a provider
    serving another tier than asked), else the one asked for ("default" for "auto")."""
    forced = request.headers.get("x-simulator-service-tier")
    if forced:
        return forced
    asked = body.get("service_tier")
    return asked if isinstance(asked, str) and asked not in ("", "auto") else "default"


def forced_usage(request: Request, usage: dict[str, Any]) -> dict[str, Any]:
    """`usage` with a hostile provider's counts over it (`x-simulator-usage`, JSON)."""
    if forced := request.headers.get("x-simulator-usage"):
        return {**usage, **orjson.loads(forced)}
    return usage


async def completions(request: Request) -> Response:
    state: SimulatorState = request.app.state.sim
    body = await _body(request)
    if body is None or "prompt" not in body:
        return _bad("'model' and 'prompt' are required.")
    limit = _positive(body.get("max_tokens"), COMPLETIONS_DEFAULT_MAX_TOKENS)
    n = _positive(body.get("n"), 1)
    best_of = max(_positive(body.get("best_of"), 1), n)
    prompts = _prompts(body["prompt"])
    prompt_tokens = sum(_tokens(state, p) for p in prompts)
    generated = [_reply(request, state, str(p), limit, i) for p in prompts for i in range(best_of)]
    completion = sum(len(state.encoding.encode(t, disallowed_special=())) for t in generated)
    usage = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion,
        "total_tokens": prompt_tokens + completion,
    }
    usage = forced_usage(request, usage)
    kept = [generated[k * best_of + i] for k in range(len(prompts)) for i in range(n)]
    stream = body.get("stream") is True
    options = body.get("stream_options") if isinstance(body.get("stream_options"), dict) else {}
    asked = bool(options and options.get("include_usage") is True)
    state.log(request, str(body["model"]), usage, not stream or asked, stream)
    cid = f"cmpl-sim{state.next_id():08d}"
    choices = [
        {"text": t, "index": i, "logprobs": None, "finish_reason": "length"}
        for i, t in enumerate(kept)
    ]
    head = {"id": cid, "object": "text_completion", "created": CREATED, "model": body["model"]}
    if not stream:
        return Response(
            orjson.dumps({**head, "choices": choices, "usage": usage}),
            media_type="application/json",
        )
    return StreamingResponse(
        _completion_events(head, choices, usage if asked else None), media_type="text/event-stream"
    )


def _completion_events(
    head: dict[str, Any], choices: list[dict[str, Any]], usage: dict[str, Any] | None
) -> Iterator[bytes]:
    for choice in choices:
        words = choice["text"].split(" ")
        for n, word in enumerate(words):
            last = n == len(words) - 1
            piece = {
                **choice,
                "text": word if last else word + " ",
                "finish_reason": choice["finish_reason"] if last else None,
            }
            yield b"data: " + orjson.dumps({**head, "choices": [piece]}) + b"\n\n"
    if usage is not None:
        yield b"data: " + orjson.dumps({**head, "choices": [], "usage": usage}) + b"\n\n"
    yield b"data: [DONE]\n\n"


async def responses(request: Request) -> Response:
    state: SimulatorState = request.app.state.sim
    body = await _body(request)
    if body is None or "input" not in body:
        return _bad("'model' and 'input' are required.")
    items = body["input"]
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    if not isinstance(items, list):
        return _bad("'input' must be a string or a list of items.")
    instructions = body.get("instructions")
    input_tokens = state.prompt(items).total + tool_tokens(body, state.encoding)
    if isinstance(instructions, str):
        input_tokens += len(state.encoding.encode(instructions, disallowed_special=()))
    limit = body.get("max_output_tokens")
    text = _reply(request, state, _last_text(items), limit if isinstance(limit, int) else None, 0)
    output = len(state.encoding.encode(text, disallowed_special=()))
    usage = {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input_tokens + output,
    }
    usage = forced_usage(request, usage)
    stream = body.get("stream") is True
    state.log(request, str(body["model"]), usage, True, stream)
    rid = f"resp_sim{state.next_id():08d}"
    done = _response_object(rid, str(body["model"]), text, usage)
    done["service_tier"] = served_tier(request, body)
    done["output"][:0] = _web_search_calls(request, body, rid)
    if not stream:
        return Response(orjson.dumps(done), media_type="application/json")
    return StreamingResponse(_response_events(done, text), media_type="text/event-stream")


def _last_text(items: list[Any]) -> str:
    for item in reversed(items):
        content = item.get("content") if isinstance(item, dict) else None
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            texts = [p.get("text") for p in content if isinstance(p, dict)]
            return " ".join(t for t in texts if isinstance(t, str))
    return ""


def _response_object(rid: str, model: str, text: str, usage: dict[str, Any]) -> dict[str, Any]:
    message = {
        "type": "message",
        "id": f"msg_{rid}",
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    return {
        "id": rid,
        "object": "response",
        "created_at": CREATED,
        "status": "completed",
        "model": model,
        "output": [message],
        "usage": usage,
    }


def _web_search_calls(request: Request, body: dict[str, Any], rid: str) -> list[dict[str, Any]]:
    """With a web search tool the model searches once, or `x-simulator-web-searches`
    times, at most `max_tool_calls` (as the API bounds it)."""
    tools = body.get("tools")
    if not isinstance(tools, list) or not any(
        isinstance(t, dict) and str(t.get("type")).startswith("web_search") for t in tools
    ):
        return []
    wanted = _positive(int(request.headers.get("x-simulator-web-searches", "1")), 1)
    searches = min(wanted, _positive(body.get("max_tool_calls"), wanted))
    action = {"type": "search", "query": "simulated"}
    return [
        {"type": "web_search_call", "id": f"ws_{rid}_{i}", "status": "completed", "action": action}
        for i in range(searches)
    ]


def _response_events(done: dict[str, Any], text: str) -> Iterator[bytes]:
    """As the API streams a response: the message item added, its text part, the text
    in deltas, each closed in turn, then the response completed (the SDKs' stream
    helpers rebuild the response from these)."""
    number = iter(range(1 << 30))

    def event(kind: str, data: dict[str, Any]) -> bytes:
        payload = {"type": kind, "sequence_number": next(number), **data}
        return f"event: {kind}\ndata: ".encode() + orjson.dumps(payload) + b"\n\n"

    message = done["output"][-1]
    at = {"item_id": message["id"], "output_index": len(done["output"]) - 1}
    part = {"type": "output_text", "text": "", "annotations": []}
    started = {**done, "status": "in_progress", "output": [], "usage": None}
    yield event("response.created", {"response": started})
    yield event("response.in_progress", {"response": started})
    for index, item in enumerate(done["output"][:-1]):  # the searches made first
        yield event("response.output_item.added", {"output_index": index, "item": item})
        yield event("response.output_item.done", {"output_index": index, "item": item})
    added = {**message, "status": "in_progress", "content": []}
    yield event("response.output_item.added", {"output_index": at["output_index"], "item": added})
    yield event("response.content_part.added", {**at, "content_index": 0, "part": part})
    words = text.split(" ")
    for n, word in enumerate(words):
        delta = word if n == len(words) - 1 else word + " "
        yield event(
            "response.output_text.delta", {**at, "content_index": 0, "delta": delta, "logprobs": []}
        )
    yield event(
        "response.output_text.done", {**at, "content_index": 0, "text": text, "logprobs": []}
    )
    whole = message["content"][0]
    yield event("response.content_part.done", {**at, "content_index": 0, "part": whole})
    yield event("response.output_item.done", {"output_index": at["output_index"], "item": message})
    yield event("response.completed", {"response": done})
