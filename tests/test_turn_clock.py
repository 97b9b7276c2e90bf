"""A turn's clock (`dated_after`): the time it arrived, or just past the newest fact
date it can see when that is ahead, unless that date is too far ahead to be a fold's."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from openai.types.chat import ChatCompletionMessageParam

from gateway.context.heard import CLOCK_LEAD_MAX, CLOCK_STEP, dated_after
from gateway.context.types import Fact
from tests.inprocess import start_inprocess

NOW = 1_800_000_000.0


def fact(at: float) -> Fact:
    return Fact(id=f"f{at}", text="order: ORD-1", created_at=at, value="ORD-1")


@pytest.mark.parametrize(
    ("dates", "facts_until", "expected"),
    [
        ((), 0.0, NOW),  # nothing seen: the clock
        ((NOW - 5,), 0.0, NOW),  # an old fact: the clock
        ((NOW + 0.3,), 0.0, NOW + 0.3 + CLOCK_STEP),  # a fold's fact ahead: just past it
        ((NOW - CLOCK_STEP / 2,), 0.0, NOW + CLOCK_STEP / 2),  # under a step behind
        ((NOW + 0.1, NOW + 0.4, NOW - 1), 0.0, NOW + 0.4 + CLOCK_STEP),  # the newest
        ((), NOW + 0.5, NOW + 0.5 + CLOCK_STEP),  # the record's last compaction
        ((NOW + CLOCK_LEAD_MAX + 1,), 0.0, NOW),  # another clock's: not followed
        ((NOW + CLOCK_LEAD_MAX + 1, NOW + 0.2), 0.0, NOW + 0.2 + CLOCK_STEP),
    ],
)
def test_a_turn_is_dated_just_past_the_newest_fact_it_sees(
    dates: tuple[float, ...], facts_until: float, expected: float
) -> None:
    facts = [fact(d) for d in dates]
    assert dated_after(NOW, facts_until, facts) == pytest.approx(expected, abs=1e-6)


def test_a_correction_heard_on_a_replica_whose_clock_is_behind_still_wins(
    tmp_path: Path,
) -> None:
    """Two replicas on one store, the first's clock 3 s ahead. The customer's city said
    on it, corrected on the other a second later: the correction was dated before the
    value it corrects, and the old city stayed."""
    store = f"sqlite:///{tmp_path}/g.db"
    ahead, behind = start_inprocess(tmp_path / "a", store), start_inprocess(tmp_path / "b", store)
    try:
        ahead.gateway.turn_clock = lambda: time.time() + 3.0
        headers = {"X-Customer-Id": "maria", "X-Conversation-Id": "k1"}
        said = "Hi, my name is Maria Souza and I live in Porto, my order ORD-55501 is late."
        messages: list[ChatCompletionMessageParam] = [{"role": "user", "content": said}]
        reply = ahead.openai().chat.completions.create(
            model="gpt-4o-mini", messages=messages, extra_headers=headers
        )
        messages += [
            {"role": "assistant", "content": reply.choices[0].message.content or ""},
            {"role": "user", "content": "Sorry, actually the city is Lisbon, not Porto."},
        ]
        behind.openai().chat.completions.create(
            model="gpt-4o-mini", messages=messages, extra_headers=headers
        )
        auth = {"Authorization": f"Bearer {behind.keys['acme']}"}
        facts = behind.http.get(f"{behind.v1}/customers/maria/facts", headers=auth).json()
        assert [f["value"] for f in facts["facts"] if f["tags"][0] == "city"] == ["Lisbon"]
    finally:
        ahead.stop()
        behind.stop()


SMALL_WINDOW = """defaults:
  quota_tokens: 700
  operational_state_max: 50
  facts: {floor: 50, ceiling: 150}
  episodes_ceiling: 100
  summary_ceiling: 150
  transcript_floor: 150
  keep_last_messages: 2
"""


def test_a_card_keeps_its_facts_when_its_turns_followed_a_clock_ahead(tmp_path: Path) -> None:
    """The customer's first conversation ran on a replica 3 s ahead; the next, on one
    keeping time, follows its facts' dates (dated_after), so its start and its facts are
    dated ahead of its own clock. Its card kept only facts dated up to its last turn by
    that clock plus a second: none, so no problem heard, and the greeting for a topic."""
    store = f"sqlite:///{tmp_path}/g.db"
    for replica in ("a", "b"):
        (tmp_path / replica / "policies").mkdir(parents=True)
        (tmp_path / replica / "policies" / "context.yaml").write_text(SMALL_WINDOW)
    ahead, behind = start_inprocess(tmp_path / "a", store), start_inprocess(tmp_path / "b", store)
    try:
        ahead.gateway.turn_clock = lambda: time.time() + 3.0
        hello = "Hi, my name is Maria Souza and I live in Porto."
        ahead.openai().chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": hello}],
            extra_headers={"X-Customer-Id": "maria", "X-Conversation-Id": "k0"},
        )
        headers = {"X-Customer-Id": "maria", "X-Conversation-Id": "k1"}
        waiting = (
            "Still waiting, this is message {}; the courier never came and nobody called me "
            "back about the parcel, "
        )
        order = "My order ORD-77777 has not arrived yet, it was due last week."
        lines = [order, *(waiting.format(n) * 3 for n in range(12))]  # it is folded
        messages: list[ChatCompletionMessageParam] = [
            {"role": "user", "content": "Hello, I need help with a delivery please."}
        ]
        for line in lines:
            messages.append({"role": "user", "content": line})
            reply = behind.openai().chat.completions.create(
                model="gpt-4o-mini", messages=messages, extra_headers=headers
            )
            messages.append(
                {"role": "assistant", "content": reply.choices[0].message.content or ""}
            )
        auth = {"Authorization": f"Bearer {behind.keys['acme']}"}
        closed = behind.http.post(f"{behind.v1}/conversations/k1/close", headers=auth).json()
        # the problem it heard sets the card's topic (not the greeting that opened it)
        assert "topic: My order ORD-77777 has not arrived" in closed["episode_summary"]
    finally:
        ahead.stop()
        behind.stop()
