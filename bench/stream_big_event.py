"""What one large stream event costs the relay (a Responses event carrying an image's
base64: megabytes in one event): relay CPU per event size, the event handed over whole
(as the upstream's scrub passes an unfinished event on) and in 64 KiB chunks.

    python bench/stream_big_event.py [--mib 1,4,12] [--tree DIR]

`--tree`: also the relay of another checkout (A/B). Numbers only; no assertions.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gateway.proxy import streaming  # noqa: E402


def _module_of(tree: str) -> ModuleType:
    path = Path(tree) / "gateway" / "proxy" / "streaming.py"
    spec = importlib.util.spec_from_file_location("streaming_of_tree", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def _relay(module: ModuleType, body: bytes, chunk: int) -> tuple[float, bool]:
    async def chunks() -> AsyncIterator[bytes]:
        for i in range(0, len(body), chunk):
            yield body[i : i + chunk]

    sent: list[bytes] = []

    async def send(message: dict[str, object]) -> None:
        part = message.get("body", b"")
        sent.append(part if isinstance(part, bytes) else b"")

    async def nothing(*_: object) -> None:
        return None

    tap = module.UsageTap(hide_usage=True)
    relay = module.StreamRelay(200, [], chunks(), nothing, tap, nothing)
    start = time.process_time()
    tail = await relay._relay(send)
    return time.process_time() - start, b"".join(sent) + (tail or b"") == body


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", default="1,4,12")
    parser.add_argument("--tree", help="another checkout's relay, beside this one's")
    args = parser.parse_args()
    modules = [("this", streaming)] + ([("tree", _module_of(args.tree))] if args.tree else [])
    print("event   delivered        relay     CPU ms  bytes as sent")
    for mib in (int(m) for m in args.mib.split(",")):
        image = b"A" * (mib << 20)
        event = (
            b"event: response.image_generation_call.partial_image\ndata: "
            b'{"type":"response.image_generation_call.partial_image","partial_image_b64":"'
            + image
            + b'"}\n\n'
        )
        body = event + (
            b"event: response.completed\ndata: "
            b'{"type":"response.completed","response":{"usage":{"input_tokens":1,'
            b'"output_tokens":1,"total_tokens":2}}}\n\n'
        )
        for label, chunk in (("whole", len(event)), ("64 KiB chunks", 65536)):
            for name, module in modules:
                cpu, exact = asyncio.run(_relay(module, body, chunk))
                print(f"{mib:3d} MiB {label:15s} {name:5s} {cpu * 1000:9.1f}  {exact}")


if __name__ == "__main__":
    main()
