"""What the images of a call may be billed at most, in input tokens. Pure.

The window counts an image as a few tokens (gateway.ledger.tokens: its size is not in
the body), but the provider bills it by its size and detail: a high-detail image on
gpt-4o-mini is billed up to 48,169 input tokens. The spend guard reserves the worst case
instead, so the ceiling holds whatever images are sent. OpenAI's rules: a high- (or
auto-) detail image is fitted in 2048x2048, then its short side in 768, and billed a base
plus a price per 512-pixel tile, 8 tiles at most; a low-detail image the base alone.
Models billed by 32-pixel patches cap an image at 1,536 patches times a multiplier.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gateway.json_tree import objects_under, type_of
from gateway.ledger.tokens import IMAGE_TOKENS

MAX_TILES = 8
MAX_PATCHES = 1536
# (model prefix, tokens of a low-detail image, of a high-detail one at most); the
# longest prefix that names the model wins.
_TILED = {  # base, per tile
    "gpt-4o-mini": (2833, 5667),
    "gpt-4o": (85, 170),
    "chatgpt-4o": (85, 170),
    "gpt-4.1": (85, 170),
    "gpt-4.5": (85, 170),
    "o1": (75, 150),
    "o3": (75, 150),
    "computer-use": (65, 129),
}
_PATCHED = {"gpt-4.1-mini": 1.62, "gpt-4.1-nano": 2.46, "o4-mini": 1.72}
_COSTS: dict[str, tuple[int, int]] = {
    **{p: (base, base + MAX_TILES * tile) for p, (base, tile) in _TILED.items()},
    **{p: (round(MAX_PATCHES * m),) * 2 for p, m in _PATCHED.items()},
}
# A model none of these names (a newer one, another provider's): the dearest known.
_UNKNOWN = max(_COSTS.values(), key=lambda c: c[1])


def image_cost(model: str, detail: Any) -> int:
    """The most one image may be billed, in input tokens."""
    name = model.lower().rsplit("/", 1)[-1]
    known = [p for p in _COSTS if name.startswith(p)]
    low, high = _COSTS[max(known, key=len)] if known else _UNKNOWN
    return low if detail == "low" else high


def _detail(part: Mapping[str, Any]) -> Any:
    inner = part.get("image_url")
    return inner.get("detail") if isinstance(inner, Mapping) else part.get("detail")


def images_in(items: Iterable[Any]) -> tuple[tuple[Any, int], ...]:
    """(detail, tokens the count gave it) of each image part among chat messages: a
    chat image sits in a message's content and is counted as IMAGE_TOKENS. One pass
    over the messages, every call."""
    found = []
    for item in items:
        content = item.get("content") if type(item) is dict else None
        if type(content) is list:
            found += [
                (_detail(part), IMAGE_TOKENS)
                for part in content
                if isinstance(part, Mapping) and part.get("type") == "image_url"
            ]
    return tuple(found)


# Responses parts the provider bills as images: an input image, a computer's screenshot
# (in a tool's output), a chat-style image.
_IMAGE_PARTS = frozenset({"input_image", "computer_screenshot", "image_url"})


def images_anywhere(value: Any) -> tuple[tuple[Any, int], ...]:
    """(detail, 0) of each image part at any depth under a Responses body's `input`: in
    an item, its content, a tool's output. Counted as its JSON, so nothing is assumed
    (the body's depth is bounded when it is read: gateway.proxy.request_body)."""
    return tuple((_detail(n), 0) for n in objects_under(value) if type_of(n) in _IMAGE_PARTS)


def beyond_count(model: str, images: Iterable[tuple[Any, int]]) -> int:
    """What `images` (`images_in`) may be billed on `model` beyond what the count gave."""
    return sum(max(image_cost(model, detail) - counted, 0) for detail, counted in images)
