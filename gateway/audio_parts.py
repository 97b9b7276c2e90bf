"""Input audio in a chat call: `input_audio` content parts (base64 `data` and its
`format`). The provider bills them as audio tokens, at the model's input audio rate
where its price has one (OpenAI's is many times its text rate). Pure."""

from __future__ import annotations

from typing import Any

from gateway.json_tree import type_of

AUDIO_PART = "input_audio"


def audio_in(messages: Any) -> bool:
    """Whether a chat message's content holds an `input_audio` part (one pass, every
    call: only list contents are looked at)."""
    for message in messages if isinstance(messages, list) else ():
        content = message.get("content") if type(message) is dict else None
        if type(content) is list and any(
            type(part) is dict and type_of(part) == AUDIO_PART for part in content
        ):
            return True
    return False
