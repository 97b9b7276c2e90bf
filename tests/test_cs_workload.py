"""The customer-service workload generator (issue 10): deterministic, heavy-tailed,
and its labels (facts, corrections, needs, episodes) agree with its text."""

from __future__ import annotations

import itertools
import json
import random
import re
import statistics
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest

from gateway.dev import cs_values
from gateway.dev.cs_chitchat import english_lines
from gateway.dev.cs_noise import HESITATIONS
from gateway.dev.cs_workload import generate, to_jsonl, token_profile
from gateway.ops.cli import cli_logic

Conversation = dict[str, Any]


@pytest.fixture(scope="module")
def workload() -> list[Conversation]:
    return generate(600, seed=7)


def _when(at: str) -> datetime:
    return datetime.fromisoformat(at.replace("Z", "+00:00"))


def _turn_lists(conv: Conversation) -> dict[str | None, list[dict[str, Any]]]:
    lists: dict[str | None, list[dict[str, Any]]] = {e["id"]: e["turns"] for e in conv["episodes"]}
    lists[None] = conv["turns"]
    return lists


def _position(conv: Conversation, episode: str | None, turn: int) -> tuple[int, int]:
    order = [e["id"] for e in conv["episodes"]] + [None]
    return order.index(episode), turn


def _needing_turns(conv: Conversation) -> list[tuple[str | None, int, dict[str, Any]]]:
    return [
        (episode, i, turn)
        for episode, turns in _turn_lists(conv).items()
        for i, turn in enumerate(turns)
        if turn.get("needs")
    ]


def test_same_seed_same_bytes_other_seed_other_bytes() -> None:
    first = to_jsonl(generate(40, seed=5))
    assert first == to_jsonl(generate(40, seed=5))
    assert first != to_jsonl(generate(40, seed=6))


def test_lengths_are_heavy_tailed(workload: list[Conversation]) -> None:
    lengths = [len(c["turns"]) for c in workload]
    assert statistics.median(lengths) < 10
    assert max(lengths) > 150
    assert max(lengths) <= 200
    assert 0.02 <= sum(n > 60 for n in lengths) / len(lengths) <= 0.10
    assert min(lengths) >= 2


def test_every_fact_appears_in_the_turn_that_states_it(workload: list[Conversation]) -> None:
    for conv in workload:
        lists = _turn_lists(conv)
        for fact in conv["facts"]:
            turn = lists[fact["episode"]][fact["stated_at"]]
            assert fact["surface"], fact
            assert fact["surface"] in turn["content"], (fact, turn)
            assert turn["role"] == ("user" if fact["stated_by"] == "customer" else "assistant")
            # as words of their own: never glued to the next word ("salvadordigitei")
            alone = rf"(?<![^\W_]){re.escape(fact['surface'])}(?![^\W_])"
            assert re.search(alone, turn["content"]), (fact, turn["content"])


def test_every_fact_type_is_planted_with_varied_surfaces(workload: list[Conversation]) -> None:
    facts = [f for c in workload for f in c["facts"]]
    types = {f["type"] for f in facts}
    assert types == {
        "name", "city", "address", "order", "sku", "amount", "date", "email", "phone",
        "problem", "promise", "deadline",
    }  # fmt: skip
    names = {f["surface"].lower() for f in facts if f["type"] == "name"}
    assert len(names) > 50
    name_turns = {
        _turn_lists(c)[f["episode"]][f["stated_at"]]["content"].lower()
        for c in workload
        for f in c["facts"]
        if f["type"] == "name"
    }
    for phrase in ("sou a", "aqui é", "my name's", "me llamo"):
        assert any(phrase in t for t in name_turns), phrase
    # An amount written many ways: the surfaces differ from the canonical value.
    amounts = [f for f in facts if f["type"] == "amount"]
    assert len({re.sub(r"[\d\s]", "", f["surface"]) for f in amounts}) > 10


def test_corrections_supersede_with_a_newer_value(workload: list[Conversation]) -> None:
    corrected = 0
    for conv in workload:
        by_id = {f["id"]: f for f in conv["facts"]}
        for fact in conv["facts"]:
            if fact["superseded_by"] is None:
                continue
            corrected += 1
            new = by_id[fact["superseded_by"]]
            assert new["type"] == fact["type"]
            assert new["value"] != fact["value"]
            assert _position(conv, new["episode"], new["stated_at"]) > _position(
                conv, fact["episode"], fact["stated_at"]
            )
    assert corrected > 100


def test_needs_are_facts_stated_earlier_and_still_current(workload: list[Conversation]) -> None:
    labelled = 0
    for conv in workload:
        by_id = {f["id"]: f for f in conv["facts"]}
        for episode, index, turn in _needing_turns(conv):
            assert turn["role"] == "user"
            here = _position(conv, episode, index)
            for fact_id in turn["needs"]:
                labelled += 1
                fact = by_id[fact_id]
                assert _position(conv, fact["episode"], fact["stated_at"]) < here
                newer = fact["superseded_by"]
                if newer is not None:
                    replaced = by_id[newer]
                    assert _position(conv, replaced["episode"], replaced["stated_at"]) > here
    assert labelled > 1000


def test_an_asked_back_value_is_not_in_the_question(workload: list[Conversation]) -> None:
    for conv in workload:
        by_id = {f["id"]: f for f in conv["facts"]}
        for _, _, turn in _needing_turns(conv):
            for fact_id in turn["needs"]:
                if by_id[fact_id]["type"] in ("promise", "deadline", "email", "phone"):
                    assert by_id[fact_id]["surface"] not in turn["content"]


def test_languages_mix(workload: list[Conversation]) -> None:
    assert {c["language"] for c in workload} == {"pt", "en", "es"}
    switched = [
        c for c in workload if any(t["lang"] != c["language"] for t in c["turns"])
    ]  # fmt: skip
    assert len(switched) > 10
    assert generate(20, seed=1, langs=["pt"])[0]["language"] == "pt"


def test_phone_transcripts_have_no_punctuation_and_asr_noise(
    workload: list[Conversation],
) -> None:
    phone_turns = [
        t["content"]
        for c in workload
        for channel, turns in [(c["channel"], c["turns"])]
        + [(e["channel"], e["turns"]) for e in c["episodes"]]
        if channel == "phone"
        for t in turns
    ]
    assert len(phone_turns) > 500
    for content in phone_turns:
        assert not re.search(r"[.,;:!?¿¡]", content), content
        assert content == content.lower(), content
    fillers = {w for words in HESITATIONS.values() for w in words}
    noisy = [t for t in phone_turns if fillers & set(t.split())]
    assert len(noisy) > len(phone_turns) / 10
    words = " ".join(phone_turns).split()
    assert {"arroba", "ponto"} <= set(words) or {"at", "dot"} <= set(words)


def test_chat_turns_come_with_and_without_punctuation(workload: list[Conversation]) -> None:
    chat = [
        t["content"]
        for c in workload
        if c["channel"] in ("whatsapp", "webchat")
        for t in c["turns"]
        if t["role"] == "user" and len(t["content"].split()) > 4
    ]
    bare = sum(not re.search(r"[.,!?]", t) for t in chat)
    assert 0.2 < bare / len(chat) < 0.9


def test_episodes_on_other_channels_are_referred_back_to(workload: list[Conversation]) -> None:
    with_episodes = [c for c in workload if c["episodes"]]
    assert len(with_episodes) > 100
    referred = 0
    for conv in with_episodes:
        start = _when(conv["started_at"])
        for ep in conv["episodes"]:
            assert ep["channel"] != conv["channel"]
            assert _when(ep["ended_at"]) < start
            assert ep["id"].startswith(conv["id"])
        by_id = {f["id"]: f for f in conv["facts"]}
        for turn in conv["turns"]:
            if any(by_id[i]["episode"] is not None for i in turn.get("needs", [])):
                referred += 1
    assert referred > 100


def test_conversations_resume_after_hours_or_days(workload: list[Conversation]) -> None:
    def longest_gap(conv: Conversation) -> float:
        times = [_when(t["at"]) for t in conv["turns"]]
        return max(((b - a).total_seconds() for a, b in itertools.pairwise(times)), default=0)

    chats = [c for c in workload if c["channel"] in ("webchat", "whatsapp")]
    assert any(longest_gap(c) > 24 * 3600 for c in chats)
    assert any(2 * 3600 < longest_gap(c) < 24 * 3600 for c in chats)


def test_english_filler_is_real_human_chat(workload: list[Conversation]) -> None:
    real = set(english_lines())
    assert len(real) > 10_000
    english = [t["content"] for c in workload for t in c["turns"] if t["lang"] == "en"]
    assert sum(t in real for t in english) > 20


def test_cli_writes_jsonl_and_prints_a_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "w.jsonl"
    argv = ["workload", "generate", "--conversations", "25", "--seed", "3", "-o", str(out)]
    assert cli_logic([*argv, "--lang", "pt,en"]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 25
    assert {r["language"] for r in rows} <= {"pt", "en"}
    printed = capsys.readouterr().out
    assert "languages:" in printed and "length: p50" in printed and "facts:" in printed
    assert "tokens per conversation" in printed and "far facts:" in printed
    assert cli_logic([*argv, "--lang", "pt,fr"]) == 2


def _words(conv: Conversation, role: str) -> list[int]:
    return [len(t["content"].split()) for t in conv["turns"] if t["role"] == role]


def test_conversations_are_long_in_tokens_and_heavy_tailed(
    workload: list[Conversation],
) -> None:
    """Long enough to exercise a window: the tail runs far past the smallest quota and
    a fifth of the facts of long conversations lie over 8k tokens back from the end."""
    tokens = token_profile(workload)
    assert 300 < tokens["p50"] < 3000
    assert tokens["p95"] > 8 * tokens["p50"]
    assert tokens["p95"] > 5000
    assert tokens["max"] > 20_000
    assert tokens["with_episodes_p50"] > tokens["p50"]
    assert tokens["far_share"] >= 0.2


def test_agent_replies_are_as_long_as_real_ones(workload: list[Conversation]) -> None:
    words = sorted(n for c in workload for n in _words(c, "assistant"))
    assert 55 <= statistics.median(words) <= 90
    assert words[int(len(words) * 0.9)] > 120
    assert 200 < words[-1] <= 300
    assert sum(n < 25 for n in words) > len(words) / 50  # some replies stay short


def test_agent_replies_are_not_one_writers_phrasing(workload: list[Conversation]) -> None:
    openings = [
        " ".join(t["content"].split()[:6])
        for c in workload
        for t in c["turns"]
        if t["role"] == "assistant" and c["channel"] != "phone"
    ]
    most = max(openings.count(o) for o in set(openings[:2000]))
    assert most < len(openings) / 40
    contents = " ".join(t["content"] for c in workload for t in c["turns"])
    for lang_marker in ("Pelo que entendi", "If I understand correctly", "Si lo entiendo bien"):
        assert lang_marker in contents


def test_customer_turns_are_short_with_a_tail_and_rare_pastes(
    workload: list[Conversation],
) -> None:
    chat = sorted(
        n for c in workload if c["channel"] != "phone" for n in _words(c, "user")
    )  # fmt: skip
    phone = [n for c in workload if c["channel"] == "phone" for n in _words(c, "user")]
    assert 12 <= statistics.median(chat) <= 25
    assert statistics.median(phone) > 1.5 * statistics.median(chat)  # run-on transcripts
    pasted = [c for c in workload if any(n > 300 for n in _words(c, "user"))]
    assert 0.02 <= len(pasted) / len(workload) <= 0.09
    assert all(c["channel"] != "phone" for c in pasted)
    assert max(chat) <= 1600


@pytest.mark.parametrize(("lang", "joiner"), [("pt", " e "), ("es", " euros con ")])
def test_cents_said_apart_have_two_digits(lang: str, joiner: str) -> None:
    """ "36 e 3" could be 36,30 as well as 36,03: a reader could not recover the cents."""
    split = [v for v in map(_amount, range(400), itertools.repeat(lang)) if joiner in v.surface]
    assert split
    for value in split:
        cents = value.surface.rsplit(" ", 1)[1]
        assert len(cents) == 2 and value.canonical.endswith(f".{cents}")


def _amount(seed: int, lang: str) -> cs_values.Value:
    return cs_values.amount_value(random.Random(seed), lang, False)


@pytest.mark.parametrize("spoken", [False, True])
def test_a_spanish_date_is_planted_without_its_article(spoken: bool) -> None:
    """ "lo compré el 25/1": the turn says the article, the date is "25/1"."""
    said = [
        cs_values.date_value(random.Random(n), date(2025, 1, 25), "es", spoken) for n in range(60)
    ]
    assert any(v.lead == "el " for v in said)
    assert not [v for v in said if v.surface.lower().startswith("el ")]
