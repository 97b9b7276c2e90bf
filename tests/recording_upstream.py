"""A provider stand-in on a loopback port, in a thread of the test process: it records
the method, raw path, headers and body of every request it receives and answers as the
test says (scripted answers first, else a chat completion)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import orjson
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests.servers import free_port


@dataclass
class Answer:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Recorder:
    """A provider stand-in: records method, raw path and headers of every request; answers
    scripted `answers` first, else what `answer_for` makes of the request's JSON body
    (when it makes an answer), else a chat completion saying `reply`."""

    url: str = ""
    seen: list[dict[str, Any]] = field(default_factory=list)
    answers: list[Answer] = field(default_factory=list)
    reply: str = "Let me check that for you."
    delay_s: float = 0.0
    answer_for: Callable[[Any], Answer | None] | None = None

    def since(self, start: int) -> list[dict[str, Any]]:
        return self.seen[start:]

    async def handle(self, request: Request) -> Response:
        body = await request.body()
        self.seen.append(
            {
                "method": request.method,
                "raw_path": request.scope["raw_path"].decode("latin-1"),
                "headers": {
                    k.decode("latin-1"): v.decode("latin-1") for k, v in request.headers.raw
                },
                "body": orjson.loads(body) if body else None,
            }
        )
        # The answer is chosen when the request arrives: a request of an earlier test still
        # sleeping out its delay must not take an answer a later test queued.
        answer = self.answers.pop(0) if self.answers else None
        if answer is None and self.answer_for is not None:
            answer = self.answer_for(self.seen[-1]["body"])
        await asyncio.sleep(self.delay_s)
        common = {
            "openai-organization": "org-gatewayaccount",
            "openai-project": "proj_gatewayproject",
            "x-ratelimit-remaining-requests": "4999",
            "set-cookie": "__cf_bm=provider-cookie",
            "x-request-id": "req_123",
        }
        if answer is not None:
            return Response(answer.body, answer.status, headers={**common, **answer.headers})
        if request.url.path.startswith("/v1/models"):
            return Response(b'{"object": "list", "data": []}', 200, common, "application/json")
        completion = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": "gpt-4o-mini",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": self.reply},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 20, "completion_tokens": 8, "total_tokens": 28},
        }
        return Response(orjson.dumps(completion), 200, common, "application/json")


@contextmanager
def recording_upstream() -> Iterator[Recorder]:
    rec = Recorder()
    app = Starlette(routes=[Route("/{path:path}", rec.handle, methods=["GET", "POST", "PUT"])])
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "the recording upstream did not start"
        time.sleep(0.02)
    rec.url = f"http://127.0.0.1:{port}"
    yield rec
    server.should_exit = True
    thread.join(timeout=10)
