"""What a chat call may cost at most, read from its window before it is forwarded (as
gateway.proxy.passthrough_cost does for the other routes): the worst case the spend
guard holds, and the most the upstream can then bill, past which a usage report is not
believed (gateway.ledger.usage)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gateway.ledger.usage import UsageBound
from gateway.spend.files import files_in, worst_input
from gateway.spend.guard import WorstCase
from gateway.spend.images import beyond_count, images_in
from gateway.spend.pricing import tier_of
from gateway.spend.tool_fees import chat_searches


@dataclass(frozen=True, slots=True)
class ChatCost:
    worst: WorstCase  # its counted input (with the token factor) and every reply's ceiling
    held_input: int  # the input to hold: the model's context window when a file is sent
    images: tuple[tuple[Any, int], ...]  # gateway.spend.images
    searches: int  # web searches it makes (gateway.spend.tool_fees)
    unseen_input: bool  # files or searches add input the body does not show
    tier: str | None  # the service tier it asks for: held at its rates (spend.pricing)
    predicted: bool  # a `prediction`: rejected predicted tokens are billed past max_tokens

    def bound(self, models: tuple[str, str]) -> UsageBound | None:
        """The most the upstream can bill: no bound with a prediction, no input bound
        where input is unseen; images allowed their worst case on the model asked for and
        the one served (`models`)."""
        if self.predicted:
            return None
        if self.unseen_input:
            return UsageBound(self.worst.output_tokens)
        extra = max(beyond_count(model, self.images) for model in models)
        return UsageBound(self.worst.output_tokens, self.worst.input_tokens + extra)


def chat_cost(
    body: Mapping[str, Any],
    model: str,
    messages: list[Any],
    worst: WorstCase,
    context_window: int,
) -> ChatCost:
    """`messages`: the window sent; `worst`: its counted worst case."""
    files = files_in(messages)
    searches = chat_searches(model, body)
    return ChatCost(
        worst=worst,
        held_input=worst_input(worst.input_tokens, files, context_window),
        images=images_in(messages),
        searches=searches,
        unseen_input=bool(files or searches),
        tier=tier_of(body.get("service_tier")),
        predicted=body.get("prediction") is not None,
    )
