"""Calibration point: the least a starlette + httpx pass-through can do (stdlib json).

Run as `python bench/minimal_passthrough.py UPSTREAM_BASE PORT`. Not part of the gateway.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

UPSTREAM = sys.argv[1]
client = httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=512))


async def chat(request: Request) -> Response:
    body = json.loads(await request.body())
    req = client.build_request("POST", f"{UPSTREAM}/chat/completions", content=json.dumps(body))
    resp = await client.send(req, stream=True)
    if body.get("stream"):

        async def relay() -> AsyncIterator[bytes]:
            try:
                async for chunk in resp.aiter_raw():
                    yield chunk
            finally:
                await resp.aclose()

        return StreamingResponse(relay(), media_type="text/event-stream")
    content = await resp.aread()
    json.loads(content)
    return Response(content, media_type="application/json")


app = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), access_log=False, log_level="warning")
