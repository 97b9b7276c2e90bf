"""Earlier output the provider keeps and reads back by id: an assistant message's spoken
reply on chat, an output item sent back by its id alone on /v1/responses. Every tenant
shares the provider key, so the id may be another tenant's, and what it adds to the input
(16,000 audio tokens, an image) could not be held under a spend ceiling. Refused before
anything is forwarded or booked; the same output sent back whole passes. Through the
openai SDK against the gateway in this process and its simulated upstream."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from tests.inprocess import InProcessGateway, SimulatorLog


def _booked(gw: InProcessGateway) -> int:
    return len(gw.admin("/admin/ledger").json()["records"])


def test_a_spoken_reply_named_by_id_is_refused(
    sqlite_app_gateway: InProcessGateway, app_log: SimulatorLog
) -> None:
    """OpenAI reads the stored audio in as input audio tokens (the red-team read: 16,000
    billed, 27 booked); it was forwarded."""
    with pytest.raises(openai.BadRequestError) as info:
        sqlite_app_gateway.openai().chat.completions.create(
            model="gpt-4o-audio-preview",
            messages=[
                {"role": "user", "content": "hi"},
                {"role": "assistant", "audio": {"id": "audio_abc123"}},
                {"role": "user", "content": "say it again"},
            ],
        )
    assert info.value.code == "provider_state_not_proxied"
    assert info.value.param == "messages[1].audio"
    assert app_log.since() == [] and _booked(sqlite_app_gateway) == 0


EDIT_IT: dict[str, Any] = {"role": "user", "content": "now make it blue"}


@pytest.mark.parametrize(
    "item",
    [
        # multi-turn image editing names the earlier image by id
        {"type": "image_generation_call", "id": "ig_other"},
        {"type": "image_generation_call", "id": "ig_other", "status": "completed", "result": None},
        {"type": "web_search_call", "id": "ws_other", "status": "completed"},
        {"type": "message", "id": "msg_other", "role": "assistant", "status": "completed"},
        {"type": "function_call", "id": "fc_other", "call_id": "c", "name": "f"},
        {"type": "compaction", "id": "cmp_other"},
    ],
    ids=["image-by-id", "image-without-result", "search", "message", "function-call", "compaction"],
)
def test_an_output_item_sent_back_by_id_alone_is_refused(
    sqlite_app_gateway: InProcessGateway, app_log: SimulatorLog, item: dict[str, Any]
) -> None:
    with pytest.raises(openai.BadRequestError) as info:
        sqlite_app_gateway.openai().responses.create(
            model="gpt-4o",
            input=[EDIT_IT, item],  # type: ignore[list-item]
            tools=[{"type": "image_generation"}],
        )
    assert info.value.code == "provider_state_not_proxied"
    assert info.value.param == "input[1]"
    assert app_log.since() == [] and _booked(sqlite_app_gateway) == 0


@pytest.mark.parametrize(
    "item",
    [
        {"type": "image_generation_call", "id": "ig_1", "status": "completed", "result": "iVBO"},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"},
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Here it is.", "annotations": []}],
        },
        {"type": "function_call", "id": "fc_1", "call_id": "c", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "id": "fco_1", "call_id": "c", "output": "ok"},
    ],
    ids=["image", "reasoning", "message", "function-call", "function-output"],
)
def test_an_output_item_sent_back_whole_passes(
    sqlite_app_gateway: InProcessGateway, app_log: SimulatorLog, item: dict[str, Any]
) -> None:
    sqlite_app_gateway.openai().responses.create(
        model="gpt-4o",
        input=[EDIT_IT, item],  # type: ignore[list-item]
    )
    assert [call["model"] for call in app_log.since()] == ["gpt-4o"]
    assert _booked(sqlite_app_gateway) == 1
