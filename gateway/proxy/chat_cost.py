"""What a chat call may cost at most, read from its window before it is forwarded (as
gateway.proxy.passthrough_cost does for the other routes): the worst case the spend
guard holds, and the most the upstream can then bill, past which a usage report is not
believed (gateway.ledger.usage)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from gateway import offload
from gateway.ledger.tokens import TokenCounter
from gateway.ledger.usage import UsageBound
from gateway.media_parts import audio_worst
from gateway.spend.files import files_in, worst_input
from gateway.spend.guard import WorstCase, corrected
from gateway.spend.images import beyond_count, images_in
from gateway.spend.tool_fees import chat_searches


@dataclass(frozen=True, slots=True)
class ChatCost:
    worst: WorstCase  # its counted input (with the token factor) and every reply's ceiling
    held_input: int  # the input to hold: with files or a search, the model's context window
    images: tuple[tuple[Any, int], ...]  # gateway.spend.images
    searches: int  # web searches it makes (gateway.spend.tool_fees)
    audio: int  # the most its input audio parts may bill, in audio tokens (held besides)
    unseen_input: bool  # files or searches add input the body does not show

    def bound(self, models: tuple[str, str]) -> UsageBound:
        """The most the upstream can bill: every reply's ceiling (a prediction's tokens
        included, see `prediction_texts`); its counted input with its images' worst case
        on the model asked for and the one served (`models`), or where files or searches
        add input the body does not show, the input held for it (on the model served)."""
        if self.unseen_input:
            held = self.held_input + beyond_count(models[-1], self.images)
            return UsageBound(self.worst.output_tokens, held, input_held=True, uncounted=True)
        extra = max(beyond_count(model, self.images) for model in models) + self.audio
        inputs = self.worst.input_tokens + extra
        return UsageBound(
            self.worst.output_tokens, inputs, uncounted=bool(self.images or self.audio)
        )


def chat_cost(
    body: Mapping[str, Any],
    model: str,
    messages: list[Any],
    worst: WorstCase,
    context_window: int,
) -> ChatCost:
    """`messages`: the window sent; `worst`: its counted worst case. Its audio is
    counted there as about what it bills; the most it may bill (`audio_worst`) is held
    besides, at the model's audio rate. A search is one tool round: the model reads its
    context again with the results in it."""
    files = files_in(messages)
    searches = chat_searches(model, body)
    audio = audio_worst(messages)
    return ChatCost(
        worst=worst,
        held_input=worst_input(worst.input_tokens + audio, files, context_window, searches),
        images=images_in(messages),
        searches=searches,
        audio=audio,
        unseen_input=bool(files or searches),
    )


def prediction_texts(body: Mapping[str, Any]) -> list[str]:
    """The texts of a `prediction` (Predicted Outputs: `content` a string or a list of
    text parts), counted as output: the predicted tokens the reply does not use are
    billed as output past `max_tokens`, up to all of them, for every reply. A part or a
    prediction of another shape is counted as its JSON."""
    prediction = body.get("prediction")
    if prediction is None:
        return []
    content = prediction.get("content") if isinstance(prediction, dict) else None
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return [orjson.dumps(prediction).decode()]
    texts = []
    for part in content:
        text = part.get("text") if isinstance(part, dict) else None
        texts.append(text if isinstance(text, str) else orjson.dumps(part).decode())
    return texts


async def input_tokens(
    tokens: TokenCounter, model: str, messages: list[Any], body: Mapping[str, Any]
) -> int:
    """Raw count of every input the provider bills: the window's `messages` and what
    the messages do not show (tools, functions, a response format's schema)."""
    return tokens.raw_message_tokens(model, messages) + await _tool_tokens(tokens, model, body)


async def _tool_tokens(tokens: TokenCounter, model: str, body: Mapping[str, Any]) -> int:
    """Tools and response formats are input the messages do not show (megabytes of them
    are counted off the event loop)."""
    extra = [e for k in ("tools", "functions", "response_format") if (e := body.get(k))]
    if not extra:
        return 0
    text = orjson.dumps(extra).decode()
    return await offload.sized(len(text), tokens.count_text, model, text)


async def prediction_tokens(
    tokens: TokenCounter, model: str, body: Mapping[str, Any], factor: float
) -> int:
    """A `prediction`'s tokens (with the model's token `factor`): what a reply may be
    billed for them as output (megabytes of them are counted off the event loop)."""
    texts = prediction_texts(body)
    if not texts:
        return 0
    size = sum(len(t) for t in texts)
    raw = await offload.sized(size, lambda: sum(tokens.count_text(model, t) for t in texts))
    return corrected(raw, factor)
