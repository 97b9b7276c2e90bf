"""The labelled loop workload (`gateway.dev.cs_loops`): deterministic per seed, every
kind in every language, labels that agree with the turns, re-asks and re-answers that
are rewordings rather than copies, and phrase banks of the promised size."""

from __future__ import annotations

import collections
import json

import pytest

from gateway.dev.cs_loops import KINDS, LabelledConversation, generate, to_jsonl
from gateway.dev.cs_loops_agent import FORM, INTENT_BANK, TOPICS

LANGS = ("pt", "en", "es")


@pytest.fixture(scope="module")
def workload() -> list[LabelledConversation]:
    return generate(7, 300)


def _runs(flags: list[bool]) -> list[int]:
    """Lengths of the runs of True."""
    runs, current = [], 0
    for flag in [*flags, False]:
        if flag:
            current += 1
        elif current:
            runs.append(current)
            current = 0
    return runs


def test_deterministic_per_seed() -> None:
    assert to_jsonl(generate(11, 60)) == to_jsonl(generate(11, 60))
    assert to_jsonl(generate(11, 60)) != to_jsonl(generate(12, 60))


def test_every_kind_in_every_language(workload: list[LabelledConversation]) -> None:
    seen = collections.Counter((c.language, c.kind) for c in workload)
    for lang in LANGS:
        for kind in KINDS:
            assert seen[(lang, kind)] > 0, (lang, kind)
    assert collections.Counter(c.language for c in workload) == dict.fromkeys(LANGS, 100)


def test_shares(workload: list[LabelledConversation]) -> None:
    kinds = collections.Counter(c.kind for c in workload)
    assert kinds["loop"] == 90
    negatives = {k: n for k, n in kinds.items() if k != "loop"}
    top = sorted(negatives, key=negatives.__getitem__, reverse=True)[:2]
    assert set(top) == {"asked_twice", "topic_hopping"}


def test_only_asked_languages() -> None:
    convs = generate(3, 20, langs=("pt", "en"))
    assert {c.language for c in convs} == {"pt", "en"}
    assert [c.id for c in convs[:2]] == ["loops-3-0", "loops-3-1"]


def test_labels_consistent(workload: list[LabelledConversation]) -> None:
    for conv in workload:
        assert len(conv.loop_turns) == len(conv.turns) > 0
        if conv.kind == "loop":
            assert conv.loop_start == conv.loop_turns.index(True) + 1
            runs = _runs(conv.loop_turns)
            assert len(runs) == 1 and 3 <= runs[0] <= 7, conv.id
            assert len(conv.turns) - (conv.loop_start - 1 + runs[0]) <= 2, conv.id
        else:
            assert conv.loop_start is None and not any(conv.loop_turns), conv.id


def test_no_empty_messages(workload: list[LabelledConversation]) -> None:
    for conv in workload:
        for customer, agent in conv.turns:
            assert customer.strip() and agent.strip(), conv.id
            assert "{" not in customer + agent, conv.id


def test_loop_reasks_are_rewordings(workload: list[LabelledConversation]) -> None:
    for conv in (c for c in workload if c.kind == "loop"):
        assert conv.loop_start is not None
        for i in range(conv.loop_start - 1, len(conv.turns)):
            if not conv.loop_turns[i]:
                continue
            customer, agent = conv.turns[i]
            earlier = [c for (c, _), loop in zip(conv.turns[:i], conv.loop_turns, strict=False)]
            firsts = [c for c, loop in zip(earlier, conv.loop_turns, strict=False) if not loop]
            assert customer not in firsts, conv.id
            assert customer != conv.turns[i - 1][0], conv.id
            assert agent != conv.turns[i - 1][1], conv.id


def test_lengths_vary(workload: list[LabelledConversation]) -> None:
    longs = [c for c in workload if c.kind == "long_progress"]
    assert all(20 <= len(c.turns) <= 120 for c in longs)
    late = [c for c in workload if c.kind == "loop" and (c.loop_start or 0) > 20]
    assert late, "some loops start after 20 turns"
    words = [len(a.split()) for c in workload for _, a in c.turns]
    assert min(words) <= 8 and max(words) >= 80


def test_channels_bend_customer_text(workload: list[LabelledConversation]) -> None:
    channels = collections.Counter(c.channel for c in workload)
    assert set(channels) == {"webchat", "whatsapp", "phone", "email"}
    for conv in (c for c in workload if c.channel == "phone"):
        for customer, _ in conv.turns:
            assert customer == customer.lower() and "?" not in customer, conv.id
    for conv in (c for c in workload if c.channel == "email"):
        assert all("\n\n" in customer for customer, _ in conv.turns), conv.id


def test_formulas_recur_in_topic_hopping(workload: list[LabelledConversation]) -> None:
    hopping = [c for c in workload if c.kind == "topic_hopping" and len(c.turns) >= 5]
    recurring = 0
    for conv in hopping:
        closes = FORM[conv.language]["close"] + FORM[conv.language]["empathy"]
        recurring += max(sum(f.split(",")[0] in a for _, a in conv.turns) for f in closes) >= 3
    assert recurring >= len(hopping) // 2


def test_phrase_banks() -> None:
    assert len(INTENT_BANK) >= 10
    for intent in INTENT_BANK.values():
        for lang in LANGS:
            assert len(set(intent.ask[lang])) >= 5, (intent.name, lang)
            assert len(set(intent.same[lang])) >= 4, (intent.name, lang)
            assert len(set(intent.move[lang])) >= 3, (intent.name, lang)
    for lang in LANGS:
        assert len(TOPICS[lang]) >= 8
        assert all(answer for _, answer in TOPICS[lang])


def test_jsonl_fields(workload: list[LabelledConversation]) -> None:
    lines = to_jsonl(workload[:30]).splitlines()
    assert len(lines) == 30
    first = json.loads(lines[0])
    assert set(first) == {
        "id",
        "language",
        "channel",
        "kind",
        "class_hint",
        "turns",
        "loop_turns",
        "loop_start",
    }
    assert first["id"] == "loops-7-0"
