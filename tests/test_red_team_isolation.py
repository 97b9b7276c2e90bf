"""Tenants isolated in the process's memory (red-team read 21): what the gateway keeps
in memory to stay fast (token counts by content, the token factor per model) must not
let what one tenant sends change what another is answered or billed."""

from __future__ import annotations

import random
from typing import Any

import openai
import pytest

from tests.inprocess import InProcessGateway

# Digits then spaces: dense where the counter reads first, sparse after. 89,451 tokens
# (cl100k), within gpt-4o-mini's 128,000; past local-llama's 32,000 the first half's
# count is extrapolated to the whole: ~175,000.
_DIGITS = random.Random(7).choices("0123456789", k=262_144)
UNEVEN = "".join(_DIGITS) + " " * 262_144


def _ask(gw: InProcessGateway, tenant: str, model: str, text: str) -> Any:
    return gw.openai(tenant).chat.completions.create(
        model=model, messages=[{"role": "user", "content": text}], max_tokens=5
    )


def test_a_count_estimated_for_a_small_window_does_not_refuse_another_tenant(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """A message counted past a small model's window is estimated (the rest extrapolated
    from what was read): the estimate was remembered by the message's content alone, and
    another tenant sending the same text to a model of a larger window (the same
    encoding) got it: 400 context_length_exceeded for a message that fits."""
    gw = sqlite_app_gateway
    with pytest.raises(openai.BadRequestError):
        _ask(gw, "acme", "local-llama", UNEVEN)  # past its 32,000 tokens: refused
    reply = _ask(gw, "globex", "gpt-4o-mini", UNEVEN)
    assert reply.usage is not None and reply.usage.prompt_tokens < 100_000
