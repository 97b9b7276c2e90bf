"""The simulated upstream's image and audio routes, in OpenAI's reply shapes and usage:

- `/v1/images/generations`, `/edits`, `/variations`: gpt-image-* reply with `usage`
  (`input_tokens` with `input_tokens_details.text_tokens` / `image_tokens`, each input
  image `IMAGE_INPUT_TOKENS`; `output_tokens` by size and quality, times `n`); dall-e-*
  with none. `stream: true` (gpt-image-*): `partial_images` partial-image events, then
  the completed one carrying the usage.
- `/v1/audio/transcriptions`: whisper-1 `usage: {"type": "duration", "seconds"}`, other
  models `{"type": "tokens", ...}` with `input_token_details.audio_tokens`; the audio
  lasts a second per `AUDIO_BYTES_PER_SECOND` of the file. `response_format: text`
  answers plain text without usage; `stream: true` answers `transcript.text.*` events.
- `/v1/audio/translations`: `{"text"}`, no usage (whisper-1 bills by duration and says
  nothing of it).
- `/v1/audio/speech`: audio bytes, no usage; `stream_format: sse` answers
  `speech.audio.*` events, the last with token usage.

Forms are read by their own small parser (not the gateway's). Test hooks: the
simulator's `x-simulator-usage` and `x-simulator-chunk-delay-ms` (between stream events).
"""

from __future__ import annotations

import asyncio
import base64
import math
import re
from collections.abc import AsyncIterator
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from gateway.dev.simulator_apis import forced_usage
from gateway.dev.simulator_cache import SimulatorState
from gateway.dev.simulator_replies import CREATED
from gateway.errors import error_body

IMAGE_INPUT_TOKENS = 388  # one input image (gpt-image-1 bills ~65-1,500 by size)
AUDIO_BYTES_PER_SECOND = 16_000  # a 128 kbit/s mp3
AUDIO_TOKENS_PER_SECOND = 10  # gpt-4o-transcribe's input audio tokens
# gpt-image-1's output tokens for a square image, and for a portrait or landscape one
_IMAGE_TOKENS = {"low": (272, 408), "medium": (1056, 1584), "high": (4160, 6240)}
_PIXEL = base64.b64encode(b"\x89PNG\r\n\x1a\nsimulated").decode()
_BOUNDARY = re.compile(r'boundary="?([^";]+)"?', re.I)
_NAME = re.compile(rb'\bname="([^"]*)"')


def _bad(message: str) -> Response:
    return Response(
        error_body(message, "invalid_request_error", None), 400, media_type="application/json"
    )


async def _form(request: Request) -> tuple[dict[str, str], list[bytes]] | None:
    """A multipart form's text fields and its files; None when the body is none."""
    found = _BOUNDARY.search(request.headers.get("content-type", ""))
    if found is None:
        return None
    body = await request.body()
    fields: dict[str, str] = {}
    files: list[bytes] = []
    for part in body.split(b"--" + found.group(1).encode())[1:]:
        head, sep, value = part.partition(b"\r\n\r\n")
        if not sep:
            continue
        name = _NAME.search(head)
        value = value.removesuffix(b"\r\n")
        if b"filename=" in head:
            files.append(value)
        elif name is not None:
            fields[name.group(1).decode()] = value.decode(errors="replace")
    return fields, files


async def _json(request: Request) -> dict[str, Any] | None:
    try:
        body = orjson.loads(await request.body())
    except orjson.JSONDecodeError:
        return None
    return body if isinstance(body, dict) and isinstance(body.get("model"), str) else None


def _tokens(state: SimulatorState, text: str) -> int:
    return len(state.encoding.encode(text, disallowed_special=()))


def _sse(request: Request, events: list[tuple[str | None, dict[str, Any]]]) -> Response:
    delay = float(request.headers.get("x-simulator-chunk-delay-ms", "0")) / 1000

    async def paced() -> AsyncIterator[bytes]:
        for n, (kind, data) in enumerate(events):
            if delay and n:
                await asyncio.sleep(delay)
            head = f"event: {kind}\n".encode() if kind else b""
            yield head + b"data: " + orjson.dumps(data) + b"\n\n"

    return StreamingResponse(paced(), media_type="text/event-stream")


async def images(request: Request) -> Response:
    """`/v1/images/generations` (JSON), `/edits` and `/variations` (forms)."""
    state: SimulatorState = request.app.state.sim
    kind = request.path_params["kind"]
    if kind not in ("generations", "edits", "variations"):
        return Response(error_body("Not found.", "invalid_request_error", None), 404)
    uploads: list[bytes] = []
    if kind == "generations":
        body: dict[str, Any] | None = await _json(request)
    else:
        form = await _form(request)
        body, uploads = (form[0], form[1]) if form is not None else (None, [])
    if body is None or (kind != "variations" and not isinstance(body.get("prompt"), str)):
        return _bad("'prompt' is required." if body else "We could not parse your request.")
    model = str(body.get("model") or ("dall-e-2" if kind != "generations" else "dall-e-3"))
    n = int(body.get("n") or 1)
    data = [{"b64_json": _PIXEL} for _ in range(n)]
    if not model.startswith("gpt-image"):
        state.log(request, model, {}, False, False)
        return Response(
            orjson.dumps({"created": CREATED, "data": data}), media_type="application/json"
        )
    quality = str(body.get("quality") or "medium")
    size = str(body.get("size") or "1024x1024")
    text = _tokens(state, str(body.get("prompt") or ""))
    pictures = IMAGE_INPUT_TOKENS * len(uploads)
    output = _IMAGE_TOKENS.get(quality, _IMAGE_TOKENS["medium"])[size != "1024x1024"] * n
    usage = {
        "input_tokens": text + pictures,
        "input_tokens_details": {"text_tokens": text, "image_tokens": pictures},
        "output_tokens": output,
        "total_tokens": text + pictures + output,
    }
    usage = forced_usage(request, usage)
    stream = body.get("stream") in (True, "true")
    state.log(request, model, usage, True, stream)
    about = {"background": "opaque", "output_format": "png", "quality": quality, "size": size}
    if not stream:
        reply = {"created": CREATED, "data": data, **about, "usage": usage}
        return Response(orjson.dumps(reply), media_type="application/json")
    event = "image_edit" if kind == "edits" else "image_generation"
    events: list[tuple[str | None, dict[str, Any]]] = [
        (
            f"{event}.partial_image",
            {
                "type": f"{event}.partial_image",
                "b64_json": _PIXEL,
                "created_at": CREATED,
                "partial_image_index": i,
                **about,
            },
        )
        for i in range(int(body.get("partial_images") or 0))
    ]
    done = {"type": f"{event}.completed", "b64_json": _PIXEL, "created_at": CREATED}
    events.append((f"{event}.completed", {**done, **about, "usage": usage}))
    return _sse(request, events)


async def transcriptions(request: Request) -> Response:
    """`/v1/audio/transcriptions` and `/v1/audio/translations`."""
    state: SimulatorState = request.app.state.sim
    form = await _form(request)
    if form is None or not form[1] or "model" not in form[0]:
        return _bad("'file' and 'model' are required.")
    fields, files = form
    model = fields["model"]
    seconds = max(math.ceil(len(files[0]) / AUDIO_BYTES_PER_SECOND), 1)
    text = "Hello, I am calling about my order."
    translation = request.url.path.endswith("/translations")
    if model == "whisper-1":
        usage: dict[str, Any] = {"type": "duration", "seconds": seconds}
    else:
        audio, output = seconds * AUDIO_TOKENS_PER_SECOND, _tokens(state, text)
        prompt = _tokens(state, fields.get("prompt", ""))
        usage = {
            "type": "tokens",
            "input_tokens": audio + prompt,
            "input_token_details": {"text_tokens": prompt, "audio_tokens": audio},
            "output_tokens": output,
            "total_tokens": audio + prompt + output,
        }
    usage = forced_usage(request, usage)
    plain = fields.get("response_format") in ("text", "srt", "vtt")
    stream = fields.get("stream") == "true" and model != "whisper-1" and not translation
    state.log(request, model, usage, not (plain or translation), stream)
    if stream:
        words = [w + " " for w in text.split(" ")]
        deltas = [(None, {"type": "transcript.text.delta", "delta": w}) for w in words]
        done = {"type": "transcript.text.done", "text": text, "usage": usage}
        return _sse(request, [*deltas, (None, done)])
    if plain:
        return Response(text + "\n", media_type="text/plain")
    reply = {"text": text} if translation else {"text": text, "usage": usage}
    return Response(orjson.dumps(reply), media_type="application/json")


async def speech(request: Request) -> Response:
    """`/v1/audio/speech`: the audio; with `stream_format: sse`, its events and usage."""
    state: SimulatorState = request.app.state.sim
    body = await _json(request)
    if body is None or not isinstance(body.get("input"), str):
        return _bad("'model' and 'input' are required.")
    text = body["input"]
    audio = b"ID3" + b"\0" * (len(text) * 40)  # ~ a second per 15 characters
    if body.get("stream_format") != "sse":
        state.log(request, body["model"], {"characters": len(text)}, False, False)
        return Response(audio, media_type="audio/mpeg")
    usage = {"input_tokens": _tokens(state, text), "output_tokens": len(text) * 4}
    usage = forced_usage(request, {**usage, "total_tokens": sum(usage.values())})
    state.log(request, body["model"], usage, True, True)
    chunk = base64.b64encode(audio[:1024]).decode()
    events: list[tuple[str | None, dict[str, Any]]] = [
        (None, {"type": "speech.audio.delta", "audio": chunk}),
        (None, {"type": "speech.audio.done", "usage": usage}),
    ]
    return _sse(request, events)
