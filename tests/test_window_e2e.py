"""The budgeted window through the gateway in process, the openai SDK and the simulator."""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx2
import openai
import pytest
import yaml
from openai.types.chat import ChatCompletionMessageParam

from gateway.context.fact_docs import customer_key, facts_key
from gateway.context.people import KEEP_PER_KIND
from gateway.context.transcript import kept_instructions, split
from gateway.context.types import Memory
from tests.inprocess import InProcessGateway, SimulatorLog, play_turns, say, start_inprocess

SYSTEM = "You are the support agent of an online store. Be brief and precise."
OPENING = "Hello, my parcel arrived with a broken lid and I would like a replacement sent."


def _client(gw: InProcessGateway) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=gw.v1, http_client=gw.http, api_key=gw.keys["acme"], max_retries=0
    )


def _customer_facts(gw: InProcessGateway, customer: str, query: str = "") -> list[Any]:
    """The customer's facts document, as the app reads it (GET .../facts)."""
    auth = {"Authorization": f"Bearer {gw.keys['acme']}"}
    facts: list[Any] = gw.http.get(
        f"{gw.v1}/customers/{customer}/facts{query}", headers=auth
    ).json()["facts"]
    return facts


def _prompt_text(entry: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content")) for m in entry["messages"])


def _converse(
    gw: InProcessGateway, turns: int, conversation: str, **headers: str
) -> list[httpx2.Headers]:
    client = _client(gw)
    messages: list[ChatCompletionMessageParam] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": OPENING},
    ]
    seen = []
    for turn in range(1, turns + 1):
        if turn == 2:
            messages.append(
                {"role": "user", "content": "The order number is ORD-48213, bought in May."}
            )
        elif turn > 2:
            messages.append(
                {
                    "role": "user",
                    "content": f"Turn {turn}: any update on the courier? "
                    "I am at home all afternoon and can sign for it.",
                }
            )
        raw = client.chat.completions.with_raw_response.create(
            model="gpt-4o-mini",
            messages=messages,
            extra_headers={
                "X-Conversation-Id": conversation,
                "X-Simulator-Log-Messages": "1",
                **headers,
            },
        )
        reply = raw.parse()
        messages.append({"role": "assistant", "content": reply.choices[0].message.content})
        seen.append(raw.headers)
    return seen


def test_a_150_turn_conversation_stays_in_quota_and_keeps_what_matters(
    sqlite_app_gateway: InProcessGateway, app_log: SimulatorLog
) -> None:
    headers = _converse(sqlite_app_gateway, 150, "long-150")
    sent = app_log.since()
    assert len(sent) == 150
    quota = 8000  # plan pro, class support (policies/context.yaml)
    assert {h["x-gateway-class"] for h in headers} == {"support"}
    for turn, (entry, h) in enumerate(zip(sent, headers, strict=True), start=1):
        assert int(h["x-gateway-window-tokens"]) <= quota
        prompt = _prompt_text(entry)
        assert OPENING in prompt, f"turn {turn} lost the opening request"
        if turn >= 3:
            assert "ORD-48213" in prompt, f"turn {turn} lost the order number"
    assert int(headers[-1]["x-gateway-evicted-turns"]) > 0, "150 turns must need compaction"
    first_100 = sent[:100]
    prompt = sum(e["usage"]["prompt_tokens"] for e in first_100)
    cached = sum(e["usage"]["prompt_tokens_details"]["cached_tokens"] for e in first_100)
    assert cached / prompt >= 0.60, f"cached share {cached / prompt:.2f}"
    state = sqlite_app_gateway.http.get(
        f"{sqlite_app_gateway.v1}/conversations/long-150",
        headers={"Authorization": f"Bearer {sqlite_app_gateway.keys['acme']}"},
    ).json()
    assert state["class"] == "support" and state["turns"] == 150
    assert state["cursor"] > 0 and "ORD-48213" in state["summary"]
    assert state["quota_hits"] > 0 and state["over_quota_turns"] == 0
    metrics = sqlite_app_gateway.admin("/metrics").text
    evicted = next(
        line
        for line in metrics.splitlines()
        if line.startswith('gateway_context_turns_evicted_total{reason="quota"}')
    )
    assert float(evicted.split()[-1]) >= state["evicted_messages"] > 0


def _turns(
    gw: InProcessGateway, conversation: str, channel: str, texts: list[str], **headers: str
) -> Sequence[Mapping[str, Any]]:
    return play_turns(gw, SYSTEM, (conversation, "cust-7", channel), texts, **headers)


def test_earlier_episodes_arrive_as_channel_tagged_summaries(
    sqlite_app_gateway: InProcessGateway, app_log: SimulatorLog
) -> None:
    phone = _turns(
        sqlite_app_gateway,
        "call-1",
        "phone",
        [
            "Hi, this is Marta calling about order ORD-555. The weather is lovely today.",
            "The invoice INV-9001 shows $120.50 but I was quoted less. It is a long story really.",
            "My email is marta@example.com, write to me there.",
        ],
    )
    chat = _turns(
        sqlite_app_gateway,
        "chat-1",
        "webchat",
        [
            "Following up on my call about ORD-555. Nothing much else happened since then.",
        ],
    )
    auth = {"Authorization": f"Bearer {sqlite_app_gateway.keys['acme']}"}
    closed = sqlite_app_gateway.http.post(
        f"{sqlite_app_gateway.v1}/conversations/call-1/close", headers=auth
    )
    assert closed.status_code == 200 and "ORD-555" in closed.json()["episode_summary"]
    start = len(app_log.all())
    _turns(sqlite_app_gateway, "mail-1", "email", ["Any news on my refund?"])
    (entry,) = app_log.all()[start:]
    prompt = _prompt_text(entry)
    assert "[phone, " in prompt and "[webchat, " in prompt  # cards: [channel, date] ...
    assert prompt.index("[phone, ") > prompt.index("[webchat, ")  # newest first
    # the email was heard in another conversation; this caller is not verified for it
    assert "marta@example.com" not in prompt and "[withheld email]" in prompt
    for earlier in (*phone, *chat):
        if earlier["role"] != "system":
            assert earlier["content"] not in prompt, "a raw turn of an earlier episode leaked"


def test_facts_respect_scopes_and_say_where_they_came_from(
    sqlite_app_gateway: InProcessGateway, app_log: SimulatorLog
) -> None:
    auth = {"Authorization": f"Bearer {sqlite_app_gateway.keys['acme']}"}
    facts = [
        {
            "text": "Delivery address is Rua Augusta 100",
            "tags": ["delivery"],
            "scope": "basic",
            "source_channel": "phone",
        },
        {
            "text": "Card ending 4242 on file",
            "tags": ["billing"],
            "scope": "payment",
            "source_channel": "crm",
            "confirmed": True,
            "confirmed_at": 1_790_000_000,
        },
        {
            "text": "VIP customer since 2019",
            "tags": ["account"],
            "scope": "basic",
            "source_channel": "crm",
            "confirmed": True,
            "confirmed_at": 1_790_000_000,
        },
    ]
    put = sqlite_app_gateway.http.put(
        f"{sqlite_app_gateway.v1}/customers/cust-9/facts", json={"facts": facts}, headers=auth
    )
    assert put.status_code == 200 and len(put.json()["facts"]) == 3
    client = _client(sqlite_app_gateway)
    client.chat.completions.create(
        model="gpt-4o-mini",
        messages=[{"role": "user", "content": "When does my delivery come?"}],
        extra_headers={
            "X-Customer-Id": "cust-9",
            "X-Customer-Scopes": "basic",
            "X-Simulator-Log-Messages": "1",
        },
    )
    prompt = _prompt_text(app_log.since()[-1])
    assert "Card ending 4242" not in prompt  # above the customer's verified scope
    # each fact under its tag's line (a run of one tag shares it)
    heard = "[unconfirmed; source: phone transcript]\n- Delivery address is Rua Augusta 100"
    assert heard in prompt
    assert "[confirmed 2026-09-21; source: crm]\n- VIP customer since 2019" in prompt
    bad = sqlite_app_gateway.http.put(
        f"{sqlite_app_gateway.v1}/customers/cust-9/facts",
        headers=auth,
        json={"facts": [{"text": "x", "confirmed": True, "confirmed_at": 1e20}]},
    )
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "confirmed"
    # ids are quoted in store keys: customer "org" never lists customer "org/alice"'s
    assert not (customer_key("org/alice") + "/c1").startswith(customer_key("org") + "/")
    assert facts_key("conversation:x", None) != facts_key(None, "x")
    gone = sqlite_app_gateway.http.delete(
        f"{sqlite_app_gateway.v1}/customers/cust-9/facts", headers=auth
    )
    assert gone.json() == {"deleted": 4}  # the three put, and the problem heard in the chat
    assert sqlite_app_gateway.http.get(
        f"{sqlite_app_gateway.v1}/customers/cust-9/facts", headers=auth
    ).json() == {"facts": []}
    other = sqlite_app_gateway.http.get(
        f"{sqlite_app_gateway.v1}/customers/cust-9/facts",
        headers={"Authorization": f"Bearer {sqlite_app_gateway.keys['globex']}"},
    )
    assert other.json() == {"facts": []}  # tenants never see each other's customers


def test_output_reserve_caps_max_tokens_and_operational_state_goes_last(
    sqlite_app_gateway: InProcessGateway, app_log: SimulatorLog
) -> None:
    client = _client(sqlite_app_gateway)
    for asked, expected in ((None, 800), (5000, 800), (50, 50)):
        extra: dict[str, Any] = {} if asked is None else {"max_tokens": asked}
        client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": "Is the shop open?"}],
            extra_headers={
                "X-Operational-State": '{"ticket": "T-1"}',
                "X-Simulator-Log-Messages": "1",
            },
            **extra,
        )
        entry = app_log.since()[-1]
        assert entry["max_tokens"] == expected
        assert "T-1" in entry["messages"][-1]["content"]


def test_model_summarizer_is_used_and_booked_and_falls_back(
    tmp_path: Path,
) -> None:
    for model, expect_calls in (("gpt-4o-mini", True), ("fail-summarizer", False)):
        root = tmp_path / model
        gw = start_inprocess(root, f"sqlite:///{root / 'g.db'}")
        policy = yaml.safe_load((root / "policies" / "context.yaml").read_text())
        policy["summarizer"]["model"] = model
        policy["classes"]["support"]["quota_tokens"] = 2600
        policy["plans"]["pro"]["classes"]["support"] = {"quota_tokens": 2600}
        policy["defaults"]["transcript_floor"] = 1200
        (root / "policies" / "context.yaml").write_text(yaml.safe_dump(policy))
        gw.restart()
        try:
            _converse(gw, 40, f"sum-{model}")
            ledger = gw.admin("/admin/ledger").json()["records"]
            calls = [r for r in ledger if r["route"] == "summarizer"]
            assert bool(calls) is expect_calls  # a failed (500) call is not billed
            state = gw.http.get(
                f"{gw.v1}/conversations/sum-{model}",
                headers={"Authorization": f"Bearer {gw.keys['acme']}"},
            ).json()
            assert state["cursor"] > 0 and state["summary"]
            if model.startswith("fail-"):
                assert "ORD-48213" in state["summary"]  # the extractive fallback kept it
            else:
                assert all(r["model"] == model and r["fresh_input_tokens"] > 0 for r in calls)
            # Closed, the conversation becomes a card: by the model when it answers (one
            # more summarizer call, booked), else the deterministic one; either way headed
            # [channel, date] and never a turn copied whole.
            closed = gw.http.post(
                f"{gw.v1}/conversations/sum-{model}/close",
                headers={"Authorization": f"Bearer {gw.keys['acme']}"},
            ).json()
            card = closed["episode_summary"]
            after = [
                r for r in gw.admin("/admin/ledger").json()["records"] if r["route"] == "summarizer"
            ]
            assert len(after) == len(calls) + int(expect_calls)
            assert card.startswith("[unknown, ") and OPENING not in card
            if model.startswith("fail-"):
                assert "topic: " in card and "ORD-48213" in card
        finally:
            gw.stop()


def test_stateless_apps_are_recognised_and_classes_move_up(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    client = _client(sqlite_app_gateway)
    messages: list[ChatCompletionMessageParam] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "My order ORD-77 never arrived."},
    ]
    ids, classes = [], []
    for follow_up in (
        "Still nothing.",
        "I did not authorize this charge, I will open a chargeback.",
    ):
        raw = client.chat.completions.with_raw_response.create(
            model="gpt-4o-mini", messages=messages
        )
        ids.append(raw.headers["x-gateway-conversation-id"])
        classes.append(raw.headers["x-gateway-class"])
        messages += [
            {"role": "assistant", "content": raw.parse().choices[0].message.content},
            {"role": "user", "content": follow_up},
        ]
    raw = client.chat.completions.with_raw_response.create(model="gpt-4o-mini", messages=messages)
    ids.append(raw.headers["x-gateway-conversation-id"])
    classes.append(raw.headers["x-gateway-class"])
    assert len(set(ids)) == 1 and ids[0].startswith("fp-")  # no X-Conversation-Id needed
    assert classes == ["support", "support", "dispute"]
    state = sqlite_app_gateway.http.get(
        f"{sqlite_app_gateway.v1}/conversations/{ids[0]}",
        headers={"Authorization": f"Bearer {sqlite_app_gateway.keys['acme']}"},
    ).json()
    assert (state["turns"], state["class"]) == (3, "dispute")
    other = sqlite_app_gateway.http.get(
        f"{sqlite_app_gateway.v1}/conversations/{ids[0]}",
        headers={"Authorization": f"Bearer {sqlite_app_gateway.keys['globex']}"},
    )
    assert other.status_code == 404  # another tenant cannot see it
    metrics = sqlite_app_gateway.admin("/metrics").text
    assert 'gateway_context_class_turns_total{class="support"} 2.0' in metrics
    assert 'gateway_context_class_turns_total{class="dispute"} 1.0' in metrics
    assert "gateway_context_window_used_tokens_bucket" in metrics


def _summary_of(entry: dict[str, Any]) -> str | None:
    for m in entry["messages"]:
        content = str(m.get("content"))
        if content.startswith("Summary of earlier turns"):
            return content.split("<<<\n", 1)[1].rsplit("\n(This stands for", 1)[0]
    return None


def test_each_compaction_appends_to_the_summary_so_the_cached_prefix_survives(
    sqlite_app_gateway: InProcessGateway, app_log: SimulatorLog
) -> None:
    headers = _converse(sqlite_app_gateway, 120, "appending", **{"X-Conversation-Class": "catalog"})
    sent = app_log.since()
    summaries = [_summary_of(e) for e in sent]
    evicted = [int(h["x-gateway-evicted-turns"]) for h in headers]
    folds = [n for n in range(1, len(sent)) if evicted[n] > evicted[n - 1]]
    assert len(folds) >= 3, "120 turns must compact several times"
    appended = 0
    for n in folds[1:]:
        before, after = summaries[n - 1], summaries[n]
        assert before is not None and after is not None
        if after.startswith(before + "\n"):
            appended += 1
            # Everything up to the end of the older summary is the same text, so the
            # upstream bills it as cached input on the compacting turn too.
            old = _prompt_text(sent[n - 1])
            new = _prompt_text(sent[n])
            cut = old.index(before) + len(before)
            assert new[:cut] == old[:cut]
    # The summary is rewritten only when it passes its ceiling.
    assert appended >= len(folds[1:]) / 2


def test_between_compactions_each_prompt_extends_the_last_and_facts_survive_folding(
    sqlite_app_gateway: InProcessGateway, app_log: SimulatorLog
) -> None:
    """What the prefix cache needs: a turn that folds nothing sends the previous prompt
    unchanged with the new turns after it, even as the customer repeats the facts the
    fact blocks hold. And what the folded turns said stays."""
    said = [
        "oi boa tarde aqui é a Renata Alves, meu pedido PED-448812 chegou quebrado",
        "moro em Campinas, rua das Acácias 120",
        "meu email é renata.alves@example.com",
    ]
    chatter = [
        f"ok, e sobre o pedido PED-448812, alguma novidade? pergunta {n}, estou aguardando "
        "a resposta da transportadora desde a semana passada e ninguém me explica nada"
        for n in range(40)
    ]
    chatter[20] = "na verdade eu me mudei, agora moro em Sorocaba"
    chatter[30] = "confirmando o email: renata.alves@example.com"  # repeated, not corrected
    texts = [*said, *chatter]
    # A correction replaces the fact it corrects wherever it is shown: that turn may
    # change the block after the summary (one cache miss per correction).
    corrected = len(said) + 20
    _turns(
        sqlite_app_gateway,
        "prefix-stable",
        "whatsapp",
        texts,
        **{"X-Conversation-Class": "catalog"},
    )
    sent = [_prompt_text(e) for e in app_log.since()]
    evicted = [e["messages"] for e in app_log.since()]
    assert len(sent) == len(texts)
    folds = 0
    for n in range(1, len(sent)):
        summary_before = _summary_of({"messages": evicted[n - 1]})
        summary_after = _summary_of({"messages": evicted[n]})
        if summary_before == summary_after and n != corrected:
            assert sent[n].startswith(sent[n - 1]), f"turn {n} changed an earlier part"
        else:
            folds += 1
    assert folds >= 2, "the catalog quota must fold this conversation"
    last = sent[-1]
    assert "Renata Alves" in last and "PED-448812" in last
    assert "renata.alves@example.com" in last  # hers, said here: shown without scopes
    assert "Sorocaba" in last
    assert "Campinas" not in last.split("(This stands for")[-1]  # corrected: not a fact now


def test_a_huge_opening_request_makes_the_summary_give_way(
    sqlite_app_gateway: InProcessGateway, app_log: SimulatorLog
) -> None:
    """The opening is always sent whole: a pasted email thread there leaves the running
    summary little room; it shrinks instead of keeping the middle turns in the window."""
    paste = " ".join(
        f"Line {n} of the forwarded thread about invoice INV-{7000 + n}." for n in range(110)
    )
    texts = [f"Please read this thread and tell me what went wrong: {paste}"]
    texts += [
        f"Any news about it? Question {n}: the courier said the parcel PKG-{500 + n} left "
        "the depot on Monday, and I still have nothing at the door today. " * 4
        for n in range(40)
    ]
    client = _client(sqlite_app_gateway)
    messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": SYSTEM}]
    used = []
    for text in texts:
        messages.append({"role": "user", "content": text})
        raw = client.chat.completions.with_raw_response.create(
            model="gpt-4o-mini",
            messages=messages,
            extra_headers={"X-Conversation-Id": "huge-opening", "X-Conversation-Class": "catalog"},
        )
        messages.append({"role": "assistant", "content": raw.parse().choices[0].message.content})
        used.append(int(raw.headers["x-gateway-window-tokens"]))
    quota = 2000  # class catalog, plan pro
    assert used[0] < quota < sum(used[:5])  # the opening fits alone; the conversation does not
    # The opening, the facts and the last four messages alone come near the quota: the
    # middle still leaves (with a summary of a line or two), so the window stays where
    # they put it instead of growing by every turn (it reached 2,633 tokens before).
    assert max(used[5:]) <= max(used[:5]) + 60
    assert max(used) < quota * 1.1
    assert int(raw.headers["x-gateway-evicted-turns"]) > 30


def test_a_replaced_phone_stays_withheld_in_the_card_that_heard_it(
    sqlite_app_gateway: InProcessGateway, app_log: SimulatorLog
) -> None:
    """Cards are stored as written and redacted when shown: a phone the customer has
    since replaced is gone from their facts document, but not from the older card."""
    auth = {"Authorization": f"Bearer {sqlite_app_gateway.keys['acme']}"}
    _turns(
        sqlite_app_gateway, "phone-1", "phone", ["My parcel is late, call me on (415) 555-0134."]
    )
    sqlite_app_gateway.http.post(
        f"{sqlite_app_gateway.v1}/conversations/phone-1/close", headers=auth
    )
    _turns(
        sqlite_app_gateway,
        "phone-2",
        "webchat",
        ["New number: (212) 555-0199, the parcel is still late."],
    )
    sqlite_app_gateway.http.post(
        f"{sqlite_app_gateway.v1}/conversations/phone-2/close", headers=auth
    )
    start = len(app_log.all())
    _turns(sqlite_app_gateway, "phone-3", "email", ["Any news on the parcel?"])
    prompt = _prompt_text(app_log.all()[start])
    assert "[phone, " in prompt and "[webchat, " in prompt  # both cards are shown
    assert "0134" not in prompt and "0199" not in prompt  # no contact detail of either


def test_the_newest_messages_facts_are_stored_before_any_of_the_answer_arrives(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """Their write overlaps the upstream call; it is done before the first streamed chunk
    is relayed, so an app that reads the customer's facts as the answer starts finds them."""
    client = _client(sqlite_app_gateway)
    stream = client.chat.completions.create(
        model="gpt-4o-mini",
        messages=[{"role": "user", "content": "Where is my order ORD-77120? It is late."}],
        stream=True,
        extra_headers={
            "X-Customer-Id": "cust-stream",
            "X-Conversation-Id": "conv-stream",
            "X-Simulator-Chunk-Delay-Ms": "150",
        },
    )
    first = next(iter(stream))
    assert first.choices or first.usage is None
    facts = _customer_facts(sqlite_app_gateway, "cust-stream")
    assert any("77120" in f["text"] for f in facts), facts
    rest = list(stream)
    assert rest  # the stream goes on to its end


def test_a_bare_correction_corrects_the_name_an_earlier_conversation_gave(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """The customer gave their first name last week; in a new chat, after giving a city,
    "foi mal, o correto é Beatriz Pereira" corrects the name (it extends it), not the
    city said last, and the customer's facts hold the full name from then on."""
    auth = {"Authorization": f"Bearer {sqlite_app_gateway.keys['acme']}"}
    _turns(sqlite_app_gateway, "name-1", "whatsapp", ["oi sou a Beatriz, meu pedido atrasou"])
    sqlite_app_gateway.http.post(
        f"{sqlite_app_gateway.v1}/conversations/name-1/close", headers=auth
    )
    _turns(
        sqlite_app_gateway,
        "name-2",
        "webchat",
        [
            "oi de novo, o pedido ainda não chegou",
            "moro em Salvador",
            "foi mal, o correto é Beatriz Pereira",
        ],
    )
    facts = _customer_facts(sqlite_app_gateway, "cust-7", "?scopes=verified")
    by_kind = {f["tags"][0]: f["value"] for f in facts if f.get("tags")}
    assert by_kind.get("name") == "Beatriz Pereira", facts
    assert by_kind.get("city") == "Salvador", facts


def test_the_last_answer_of_an_episode_reaches_its_card_though_never_sent_back(
    sqlite_app_gateway: InProcessGateway, app_log: SimulatorLog
) -> None:
    """A stateless app sends each answer back with the next turn, so the answer to an
    episode's last message never comes back: the gateway keeps the answer it relayed
    (here streamed), and the agent's last promise is in the next conversation's card."""
    auth = {"Authorization": f"Bearer {sqlite_app_gateway.keys['acme']}"}
    client = _client(sqlite_app_gateway)
    promise = "I will send you a refund of 45 euros by Friday, you will get an email."
    headers = {"X-Conversation-Id": "last-1", "X-Customer-Id": "cust-7", "X-Channel": "phone"}
    stream = client.chat.completions.create(
        model="gpt-4o-mini",
        messages=[
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": "My parcel came broken, what can you do for me?"},
        ],
        stream=True,
        extra_headers={**headers, "X-Simulator-Reply": promise},
    )
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == promise
    closed = sqlite_app_gateway.http.post(
        f"{sqlite_app_gateway.v1}/conversations/last-1/close", headers=auth
    )
    assert closed.status_code == 200
    card = closed.json()["episode_summary"]
    assert "Friday" in card and "45" in card, card
    start = len(app_log.all())
    _turns(sqlite_app_gateway, "last-2", "webchat", ["Hi again, where is my refund?"])
    (entry,) = app_log.all()[start:]
    prompt = _prompt_text(entry)
    assert "Friday" in prompt and promise not in prompt, prompt  # the card, not the turn


def test_an_answer_of_several_choices_is_not_taken_for_the_last_word(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """With n=2 the app showed one of two answers, which one is not known: the card
    keeps neither."""
    auth = {"Authorization": f"Bearer {sqlite_app_gateway.keys['acme']}"}
    promise = "I will send you a refund of 45 euros by Friday, you will get an email."
    reply = _client(sqlite_app_gateway).chat.completions.create(
        model="gpt-4o-mini",
        messages=[{"role": "user", "content": "My parcel came broken, what can you do?"}],
        n=2,
        extra_headers={
            "X-Conversation-Id": "two-1",
            "X-Customer-Id": "cust-7",
            "X-Simulator-Reply": promise,
        },
    )
    assert [c.message.content for c in reply.choices] == [promise, promise]
    closed = sqlite_app_gateway.http.post(
        f"{sqlite_app_gateway.v1}/conversations/two-1/close", headers=auth
    )
    assert "Friday" not in closed.json()["episode_summary"]


def _long_history(turns: int, at: int, said: str) -> list[ChatCompletionMessageParam]:
    """A history an app sends at once: `turns` short exchanges, turn `at` saying `said`,
    then a question (long enough that most of it folds on this first request)."""
    history: list[ChatCompletionMessageParam] = [{"role": "system", "content": SYSTEM}]
    for n in range(turns):
        text = said if n == at else "still waiting"
        history.append({"role": "user", "content": f"Message {n}: {text} on the parcel."})
        history.append({"role": "assistant", "content": f"Reply {n}: noted, checking."})
    history.append({"role": "user", "content": "So what happens now?"})
    return history


def test_the_next_conversations_name_beats_one_a_fold_heard_just_before(
    sqlite_app_gateway: InProcessGateway, app_log: SimulatorLog
) -> None:
    """The customer's next conversation, started the moment a fold of the earlier one
    heard a name (an app replaying a history, a bot): the name it states is the newest,
    not the one read out of the old turns, and the earlier conversation's card is made
    of that conversation's facts, not of the new one's. (Facts were dated a millisecond
    a message past the fold, ~0.5 s here, and a turn was dated by the clock alone.)"""
    client = _client(sqlite_app_gateway)
    history = _long_history(300, 270, "by the way, my name is Joana Lima")
    headers = {"X-Customer-Id": "cust-fast", "X-Simulator-Log-Messages": "1"}
    raw = client.chat.completions.with_raw_response.create(
        model="gpt-4o-mini",
        messages=history,
        extra_headers={**headers, "X-Conversation-Id": "fast-1", "X-Channel": "webchat"},
    )
    # Joana was heard in the fold, ~540 messages in.
    assert int(raw.headers["x-gateway-evicted-turns"]) > 560
    start = len(app_log.all())
    client.chat.completions.create(
        model="gpt-4o-mini",
        messages=[{"role": "user", "content": "oi, aqui é a Ana Souza, o pedido não chegou"}],
        extra_headers={**headers, "X-Conversation-Id": "fast-2", "X-Channel": "email"},
    )
    facts = _customer_facts(sqlite_app_gateway, "cust-fast")
    names = [f["value"] for f in facts if f.get("tags", [None])[0] == "name"]
    assert names == ["Ana Souza"], facts
    (entry,) = app_log.all()[start:]
    card = _prompt_text(entry).split("(summaries):\n", 1)[1].split("\n>>>", 1)[0]
    assert "webchat" in card and "chegou" not in card, card  # the new one's problem


def test_back_in_an_older_conversation_the_newer_ones_card_keeps_its_facts(
    sqlite_app_gateway: InProcessGateway, app_log: SimulatorLog
) -> None:
    """Two open conversations of one customer: an email, then a chat whose long history
    folds an order number away. Back in the email, the chat's card (made then) still
    holds the order: it is cut at the start of a conversation newer than itself only."""
    client = _client(sqlite_app_gateway)
    headers = {"X-Customer-Id": "cust-two", "X-Simulator-Log-Messages": "1"}
    email: list[ChatCompletionMessageParam] = [
        {"role": "user", "content": "Hello, I have a question about my account."}
    ]
    client.chat.completions.create(
        model="gpt-4o-mini",
        messages=email,
        extra_headers={**headers, "X-Conversation-Id": "two-email", "X-Channel": "email"},
    )
    chat = _long_history(150, 5, "the order is ORD-77123 by the way")
    raw = client.chat.completions.with_raw_response.create(
        model="gpt-4o-mini",
        messages=chat,
        extra_headers={**headers, "X-Conversation-Id": "two-chat", "X-Channel": "webchat"},
    )
    assert int(raw.headers["x-gateway-evicted-turns"]) > 20  # the order was folded
    start = len(app_log.all())
    email += [
        {"role": "assistant", "content": "Of course, what would you like to know?"},
        {"role": "user", "content": "Is there any news on the parcel?"},
    ]
    client.chat.completions.create(
        model="gpt-4o-mini",
        messages=email,
        extra_headers={**headers, "X-Conversation-Id": "two-email", "X-Channel": "email"},
    )
    (entry,) = app_log.all()[start:]
    card = _prompt_text(entry).split("(summaries):\n", 1)[1].split("\n>>>", 1)[0]
    assert "[webchat, " in card and "ORD-77123" in card, card


def test_a_conversation_closed_after_the_next_began_keeps_only_its_own_facts(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """An app closes the email only once the customer's chat has begun (a second later
    at most): the email's card holds what the email heard, not the chat's name and
    problem."""
    auth = {"Authorization": f"Bearer {sqlite_app_gateway.keys['acme']}"}
    client = _client(sqlite_app_gateway)
    headers = {"X-Customer-Id": "cust-late-close"}
    for conversation, channel, text in (
        ("late-email", "email", "Hello, my order ORD-55120 arrived damaged."),
        ("late-chat", "webchat", "oi, aqui é a Ana Souza, quero trocar o endereço de entrega"),
    ):
        client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": text}],
            extra_headers={**headers, "X-Conversation-Id": conversation, "X-Channel": channel},
        )
    closed = sqlite_app_gateway.http.post(
        f"{sqlite_app_gateway.v1}/conversations/late-email/close", headers=auth
    )
    card = closed.json()["episode_summary"]
    assert "ORD-55120" in card and "Ana" not in card and "endereço" not in card, card


def test_cards_of_conversations_running_side_by_side_are_their_own_and_current(
    sqlite_app_gateway: InProcessGateway, app_log: SimulatorLog
) -> None:
    """A delivery chat, then an account question on another thread (its first turn made
    the chat's card), then the chat names a broken order. A third conversation's cards:
    the chat's was the one made before the order, for good; the account question's held
    the chat's order (facts were picked by when they were heard). Now the chat's card is
    made anew after its turn, and each card holds what its own conversation heard."""
    headers = {"X-Customer-Id": "cust-beside", "X-Channel": "webchat"}

    def turn(conversation: str, messages: list[Any], text: str) -> None:
        say(sqlite_app_gateway, messages, text, **headers, **{"X-Conversation-Id": conversation})

    delivery: list[Any] = []
    turn("beside-delivery", delivery, "Hi, I want to ask about a delivery.")
    turn("beside-account", [], "Hello, a question about my account.")
    turn("beside-delivery", delivery, "Order ORD-55555 arrived broken, the screen is cracked.")
    start = len(app_log.all())
    turn("beside-third", [], "Hi again, any news?")
    (entry,) = app_log.all()[start:]
    cards = _prompt_text(entry).split("(summaries):\n", 1)[1].split("\n>>>", 1)[0]
    account = next(line for line in cards.splitlines() if "account" in line)
    delivery_card = next(line for line in cards.splitlines() if "delivery" in line)
    assert "ORD-55555" not in account, cards
    assert "ORD-55555" in delivery_card, cards


def test_a_card_made_while_its_conversation_waits_on_the_upstream_is_made_anew(
    sqlite_app_gateway: InProcessGateway, app_log: SimulatorLog
) -> None:
    """The delivery chat's turn waits on the upstream (which answers with a refund
    promised) while the account question's turn makes the chat's card from its record as
    it was before that turn. The card is made anew once the chat's turn is saved (a card
    blanked as the turn began, and made meanwhile, stayed without the promise)."""
    gw = sqlite_app_gateway
    who = {"X-Customer-Id": "cust-race", "X-Channel": "webchat"}
    delivery: list[Any] = []
    account: list[Any] = []
    a, b = {"X-Conversation-Id": "race-a"}, {"X-Conversation-Id": "race-b"}
    say(gw, delivery, "Hi, my parcel arrived broken.", **who, **a)
    say(gw, account, "Hello, a question about my account.", **who, **b)
    promise = "I am sorry. We will refund R$ 150,00 by Friday."
    slow = {
        "X-Conversation-Id": "race-a",
        "X-Simulator-Reply": quote(promise),
        "X-Simulator-Delay-Ms": "1500",
    }
    waiting = threading.Thread(
        target=lambda: say(gw, delivery, "Can I get my money back?", **who, **slow)
    )
    waiting.start()
    time.sleep(0.5)  # the chat's turn is at the upstream
    say(gw, account, "And my address?", **who, **b)
    waiting.join()
    start = len(app_log.all())
    say(gw, [], "Hi again", **who, **{"X-Conversation-Id": "race-c"})
    (entry,) = app_log.all()[start:]
    cards = _prompt_text(entry).split("(summaries):\n", 1)[1].split("\n>>>", 1)[0]
    chat = next(line for line in cards.splitlines() if "parcel" in line)
    assert "150,00" in chat, cards


def test_a_running_conversation_keeps_its_cards_while_the_other_goes_on(
    sqlite_app_gateway: InProcessGateway, app_log: SimulatorLog
) -> None:
    """Two conversations of one customer running at once: each turn of the chat made its
    card stale, and the account question's next turn made it again, so that prompt's
    head (where the cards sit, before the cached prefix's every other part) changed at
    every turn. It keeps the card it showed while its cache is warm; a conversation
    that begins gets the card as it is now."""
    gw = sqlite_app_gateway
    who = {"X-Customer-Id": "cust-steady", "X-Channel": "webchat"}
    chat, account = {"X-Conversation-Id": "steady-a"}, {"X-Conversation-Id": "steady-b"}
    a: list[Any] = []
    b: list[Any] = []
    say(gw, a, "Hi, my order ORD-10001 is late.", **who, **chat)
    heads = []
    for n in range(4):
        say(gw, b, f"A question about my account, part {n}.", **who, **account)
        heads.append(str(app_log.since()[-1]["messages"][0]["content"]))
        say(gw, a, f"Also order ORD-2000{n} is missing.", **who, **chat)
    assert all("Earlier conversations" in h for h in heads[1:]), heads
    assert len(set(heads[1:])) == 1, heads  # made at its first turn, then kept
    start = len(app_log.all())
    say(gw, [], "Hi again", **who, **{"X-Conversation-Id": "steady-c"})
    (entry,) = app_log.all()[start:]
    assert "ORD-20003" in _prompt_text(entry)  # the new conversation's card is current


def test_a_customers_sessions_under_one_fingerprint_each_card_their_own_facts(
    sqlite_app_gateway: InProcessGateway, app_log: SimulatorLog
) -> None:
    """A customer's app names no conversation: its sessions share one fingerprint, the
    earlier one archived as `{fingerprint}@{start}` when the next begins. Facts picked
    for a card by the id that heard them gave the live session the earlier one's facts
    and the archived one none: each card holds its own session's now."""
    gw = sqlite_app_gateway
    who = {"X-Customer-Id": "cust-fp", "X-Channel": "webchat"}
    filler = "I would like to understand the delivery schedule for the parcel. " * 12
    first: list[Any] = []
    for text in ["Hi", "My order ORD-12345 arrived broken, the screen is cracked."]:
        say(gw, first, text, **who)
    for n in range(14):
        say(gw, first, f"{filler}({n})", **who)
    second: list[Any] = []
    for text in ["Hi", "Question about my invoice INV-777 please."]:
        say(gw, second, text, **who)
    start = len(app_log.all())
    say(gw, [], "Hello again, a new question.", **who, **{"X-Conversation-Id": "named-3"})
    (entry,) = app_log.all()[start:]
    cards = _prompt_text(entry).split("(summaries):\n", 1)[1].split("\n>>>", 1)[0]
    invoice = next(line for line in cards.splitlines() if "INV-777" in line)
    order = next(line for line in cards.splitlines() if "ORD-12345" in line)
    assert invoice != order, cards
    assert "ORD-12345" not in invoice and "INV-777" not in order, cards


TURNS = 16  # ~2,100 tokens at the last: fits the 2,500 quota, past its low-water mark


def _paused(gw: InProcessGateway, conversation: str, pause_s: float) -> list[httpx2.Headers]:
    """Turns a minute apart, then one after `pause_s`, on the conversation's clock."""
    client = _client(gw)
    clock = [1_800_000_000.0]
    gw.gateway.turn_clock = lambda: clock[0]
    messages: list[ChatCompletionMessageParam] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": OPENING},
    ]
    seen = []
    for turn in range(1, TURNS + 1):
        clock[0] += pause_s if turn == TURNS else 60
        if turn > 1:
            said = f"Turn {turn}: the courier left a note about box {turn} at the door. " * 5
            messages.append({"role": "user", "content": said})
        raw = client.chat.completions.with_raw_response.create(
            model="gpt-4o-mini",
            messages=messages,
            extra_headers={"X-Conversation-Id": conversation},
        )
        messages.append({"role": "assistant", "content": raw.parse().choices[0].message.content})
        seen.append(raw.headers)
    return seen


def test_a_turn_after_the_cache_went_cold_compacts_and_is_no_quota_hit(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """Twenty minutes after the last turn the provider's cache is cold: that turn folds
    the oldest turns though the window fits (turns evicted, reason cache_cold), and the
    conversation counts no quota hit; a minute after, nothing moves."""
    warm = _paused(sqlite_app_gateway, "warm-cache", 60)
    cold = _paused(sqlite_app_gateway, "cold-cache", 20 * 60)
    assert [h["x-gateway-evicted-turns"] for h in (*warm, *cold[:-1])] == ["0"] * (2 * TURNS - 1)
    assert int(warm[-1]["x-gateway-evicted-turns"]) == 0
    assert int(cold[-1]["x-gateway-evicted-turns"]) > 0
    assert int(cold[-1]["x-gateway-window-tokens"]) < int(warm[-1]["x-gateway-window-tokens"]) / 2
    key = {"Authorization": f"Bearer {sqlite_app_gateway.keys['acme']}"}
    for conversation in ("warm-cache", "cold-cache"):
        state = sqlite_app_gateway.http.get(
            f"{sqlite_app_gateway.v1}/conversations/{conversation}", headers=key
        ).json()
        assert state["quota_hits"] == 0 and state["over_quota_turns"] == 0
    metrics = sqlite_app_gateway.admin("/metrics").text
    evicted = next(
        line
        for line in metrics.splitlines()
        if line.startswith('gateway_context_turns_evicted_total{reason="cache_cold"}')
    )
    assert float(evicted.split()[-1]) == int(cold[-1]["x-gateway-evicted-turns"])


def test_a_name_given_as_the_answer_to_the_agents_question_is_kept(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """The agent asks who it is speaking with and the customer answers with the name
    alone, in lowercase ("é a luciana prado"), as real customers do: the gateway reads the
    newest message with the agent's question before it, and the customer's facts hold
    the name and the city from that turn on."""
    client = _client(sqlite_app_gateway)
    headers = {"X-Conversation-Id": "ask-1", "X-Customer-Id": "cust-ask", "X-Channel": "whatsapp"}
    messages: list[ChatCompletionMessageParam] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "oi meu pedido nao chegou ainda"},
    ]
    question = "Sinto muito pela demora! Com quem eu falo, por favor?"
    reply = client.chat.completions.create(
        model="gpt-4o-mini",
        messages=messages,
        extra_headers={**headers, "X-Simulator-Reply": question},
    )
    assert reply.choices[0].message.content == question
    messages += [
        {"role": "assistant", "content": question},
        {"role": "user", "content": "é a luciana prado, to aqui em joinville"},
    ]
    client.chat.completions.create(model="gpt-4o-mini", messages=messages, extra_headers=headers)
    facts = _customer_facts(sqlite_app_gateway, "cust-ask")
    by_kind = {f["tags"][0]: f["value"] for f in facts if f.get("tags")}
    assert by_kind.get("name") == "luciana prado", facts
    assert by_kind.get("city") == "joinville", facts


def test_a_date_the_customer_says_is_kept_with_the_day_it_named(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """ "chegou ontem", said on the conversation's clock at 15:00 UTC on 10 March, is kept
    with 9 March, so once the turn has folded into a summary, or the customer comes back
    next week, the facts still say which day."""
    client = _client(sqlite_app_gateway)
    said = datetime(2026, 3, 10, 15, 0, tzinfo=UTC).timestamp()
    sqlite_app_gateway.gateway.turn_clock = lambda: said
    headers = {"X-Conversation-Id": "day-1", "X-Customer-Id": "cust-day", "X-Channel": "webchat"}
    client.chat.completions.create(
        model="gpt-4o-mini",
        messages=[
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": "meu pedido chegou ontem com a tampa quebrada"},
        ],
        extra_headers=headers,
    )
    facts = _customer_facts(sqlite_app_gateway, "cust-day")
    dates = [f["text"] for f in facts if f.get("tags", [""])[0] == "date"]
    assert dates == ["date: ontem (2026-03-09)"], facts


LATER_TURNS = [  # what the customer says after the promise: other matters, no loop
    "Thanks. While I have you: my invoice shows a shipping fee although the checkout page "
    "said delivery was free for members, and I have been a member for three years now. " * 6,
    "Also, the lid that broke was part of a set of four containers; could you tell me "
    "whether the other three are covered by the same warranty or need a separate claim? " * 6,
    "One more question about my account settings: the newsletter keeps arriving twice a "
    "week even though I switched the frequency to monthly in the preferences page. " * 6,
    "My neighbour usually receives parcels when I am out; can the courier leave it with "
    "her at number twelve, or does the replacement need my signature in person? " * 6,
    "Hello again, I am back. I wanted to check what happens now with the replacement you "
    "mentioned the other day, since I have not heard anything from the courier yet. " * 6,
    "",
]


def _resumed_days_later(gw: InProcessGateway, conversation: str, edit: str) -> list[str]:
    """On 10 March at 15:00 UTC the agent promises the replacement "by tomorrow"; the
    app sends that answer back (with `edit` appended), four more turns follow a minute
    apart, and the customer comes back on 13 March, when the cold cache folds the
    oldest turns. The agent's deadlines in the customer's facts, as the app reads them."""
    client = _client(gw)
    clock = [datetime(2026, 3, 10, 15, 0, tzinfo=UTC).timestamp()]
    gw.gateway.turn_clock = lambda: clock[0]
    customer = f"cust-{conversation}"
    headers = {"X-Conversation-Id": conversation, "X-Customer-Id": customer}
    promise = "I'm sorry! I have sent a replacement, it will arrive by tomorrow."
    messages: list[ChatCompletionMessageParam] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": OPENING},
    ]
    for turn in range(6):
        if turn == 5:
            clock[0] += 3 * 86400
        else:
            clock[0] += 60
        reply = client.chat.completions.create(
            model="gpt-4o-mini",
            messages=messages,
            extra_headers={**headers, **({"X-Simulator-Reply": promise} if turn == 0 else {})},
        )
        answer = reply.choices[0].message.content or ""
        messages.append({"role": "assistant", "content": answer + (edit if turn == 0 else "")})
        messages.append({"role": "user", "content": LATER_TURNS[turn]})
    facts = _customer_facts(gw, customer)
    return [f["text"] for f in facts if f.get("tags", [""])[0] == "deadline"]


def test_an_agents_relative_day_is_dated_when_its_turn_folds_days_later(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """An answer is read for the agent's commitments when its turn folds, maybe days
    after it was said: "by tomorrow" relayed on 10 March is kept as 11 March when the
    turn folds on 13 March, because the gateway remembers when it relayed each answer.
    An answer the app changed before sending it back is not the one relayed: its
    "tomorrow" is kept with no day rather than a guessed one."""
    relayed = _resumed_days_later(sqlite_app_gateway, "relay-1", "")
    assert relayed == ["deadline: by tomorrow (2026-03-11) (the agent said)"], relayed
    edited = _resumed_days_later(sqlite_app_gateway, "relay-2", "\n-- Carla, Support")
    assert edited == ["deadline: by tomorrow (the agent said)"], edited


def test_a_pasted_statement_does_not_fill_the_customers_facts(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """The operator's amount pattern finds every amount of a statement the customer
    pastes; the customer's facts keep the newest eight of that kind, so a long paste
    leaves room for the facts that matter. An amount said later is kept, and one of the
    older ones goes."""
    client = _client(sqlite_app_gateway)
    headers = {"X-Conversation-Id": "paste-1", "X-Customer-Id": "cust-paste"}
    statement = "Here is my statement:\n" + "\n".join(
        f"03/{day:02d} CARD PURCHASE ${day}.{day:02d}" for day in range(1, 13)
    )
    messages: list[ChatCompletionMessageParam] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": statement},
    ]
    reply = client.chat.completions.create(
        model="gpt-4o-mini", messages=messages, extra_headers=headers
    )
    billing = [
        f["value"] for f in _customer_facts(sqlite_app_gateway, "cust-paste")
        if f["tags"][0] == "billing"
    ]  # fmt: skip
    last8 = {f"${day}.{day:02d}" for day in range(5, 13)}
    assert set(billing) == last8, billing
    messages += [
        {"role": "assistant", "content": reply.choices[0].message.content or ""},
        {"role": "user", "content": "And the charge I dispute is $99.10 from the 9th."},
    ]
    client.chat.completions.create(model="gpt-4o-mini", messages=messages, extra_headers=headers)
    billing = [
        f["value"] for f in _customer_facts(sqlite_app_gateway, "cust-paste")
        if f["tags"][0] == "billing"
    ]  # fmt: skip
    assert len(billing) == 8 and "$99.10" in billing, billing
    assert set(billing) - {"$99.10"} < last8, billing


def test_a_fold_does_not_bring_back_the_amounts_a_paste_crowded_out(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """A pasted statement of twenty amounts keeps its eight newest; the amount the
    customer disputes afterwards is kept. Days later the paste's turn folds: the amounts
    crowded out then are not heard again as new, and the disputed one stays."""
    gw = sqlite_app_gateway
    client = _client(gw)
    clock = [datetime(2026, 3, 10, 15, 0, tzinfo=UTC).timestamp()]
    gw.gateway.turn_clock = lambda: clock[0]
    headers = {"X-Conversation-Id": "paste-fold", "X-Customer-Id": "cust-paste-fold"}
    statement = "Here is my statement:\n" + "\n".join(
        f"03/{day:02d} CARD PURCHASE ${day}.{day:02d}" for day in range(1, 21)
    )
    messages: list[ChatCompletionMessageParam] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "Hello, I need help with my card statement."},
        {"role": "assistant", "content": "Sure, please paste it."},
        {"role": "user", "content": statement},
    ]
    said = ["And the charge I dispute is $99.10 from the 9th.", *LATER_TURNS[:5]]
    for n, text in enumerate([*said, ""]):
        clock[0] += 3 * 86400 if n == len(said) else 60
        reply = client.chat.completions.create(
            model="gpt-4o-mini", messages=messages, extra_headers=headers
        )
        if text:
            messages += [
                {"role": "assistant", "content": reply.choices[0].message.content or ""},
                {"role": "user", "content": text},
            ]
    state = gw.http.get(
        f"{gw.v1}/conversations/paste-fold",
        headers={"Authorization": f"Bearer {gw.keys['acme']}"},
    ).json()
    assert state["evicted_messages"] > 0  # the paste's turn folded
    billing = [
        f["value"] for f in _customer_facts(gw, "cust-paste-fold") if f["tags"][0] == "billing"
    ]
    assert "$99.10" in billing and len(billing) == 8, billing
    assert not {f"${day}.{day:02d}" for day in range(1, 13)} & set(billing), billing


def test_a_damaged_relay_time_in_a_stored_record_is_left_out(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """A record whose relay times cannot be read (written by another tool, or damaged)
    answers its next turns as usual: what cannot be read is left out."""
    gw = sqlite_app_gateway
    client = _client(gw)
    headers = {"X-Conversation-Id": "relay-bad"}
    messages: list[ChatCompletionMessageParam] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": OPENING},
    ]
    reply = client.chat.completions.create(
        model="gpt-4o-mini", messages=messages, extra_headers=headers
    )
    conversations = gw.gateway.windows.conversations

    async def damage() -> None:
        record = await conversations.load("acme", "relay-bad")
        assert record is not None and record.relayed
        record.relayed = {"1.0": [1.0, 2.0], "2": [3.0], "x": "y"}  # type: ignore[dict-item]
        await conversations.save(record)

    portal = gw.http.portal  # the app's own event loop, where the store lives
    assert portal is not None
    portal.call(damage)
    for text in ("And when will it arrive?", "Thanks, that is all."):
        messages += [
            {"role": "assistant", "content": reply.choices[0].message.content or ""},
            {"role": "user", "content": text},
        ]
        reply = client.chat.completions.create(
            model="gpt-4o-mini", messages=messages, extra_headers=headers
        )
        assert reply.choices[0].message.content


def _promises(gw: InProcessGateway, customer: str) -> list[str]:
    return [f["value"] for f in _customer_facts(gw, customer) if f["tags"][0] == "promise"]


def _filler(exchanges: int) -> list[ChatCompletionMessageParam]:
    """Short exchanges about nothing in particular: enough of them fold what came before."""
    filler: list[ChatCompletionMessageParam] = []
    for n in range(exchanges):
        filler.append({"role": "user", "content": f"Mensagem {n}: sigo aguardando o pedido."})
        filler.append({"role": "assistant", "content": f"Resposta {n}: anotado, verificando."})
    return filler


def _send(
    client: openai.OpenAI, history: list[ChatCompletionMessageParam], headers: dict[str, str]
) -> None:
    """One turn of the app: the history sent, the reply appended to it."""
    reply = client.chat.completions.create(
        model="gpt-4o-mini", messages=history, extra_headers=headers
    )
    history.append({"role": "assistant", "content": reply.choices[0].message.content})


NEWER = KEEP_PER_KIND + 1  # newer offers than a kind keeps: the newest push older out
NEWEST = f"R$ {NEWER + 10},00"


def _newer_offers_then_a_fold() -> list[ChatCompletionMessageParam]:
    """More offers of the agent than a kind keeps, said once each, then enough turns to
    fold them."""
    offers: list[ChatCompletionMessageParam] = []
    for n in range(NEWER):
        offers += [
            {"role": "user", "content": "e o frete, vocês cobrem?"},
            {"role": "assistant", "content": f"Posso te reembolsar R$ {n + 11},00 do frete."},
        ]
    return [*offers, *_filler(150), {"role": "user", "content": "certo, obrigado"}]


def test_a_promise_the_customer_asks_after_outlives_newer_promises(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """An agent's refund, folded away early in a long chat; the customer asks after it
    ("e os R$ 380,00 ...?"); more newer offers than a kind keeps, said once each, fold
    later. The refund the customer referred back to is still among their facts, and a
    customer who never asked after theirs loses it to the newer ones, as before."""
    gw = sqlite_app_gateway
    client = _client(gw)
    for customer, asks in (("cust-asks", True), ("cust-quiet", False)):
        headers = {"X-Conversation-Id": f"{customer}-chat", "X-Customer-Id": customer}
        history: list[ChatCompletionMessageParam] = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": "oi, meu pedido chegou quebrado e quero o estorno"},
            *_filler(5),
            {"role": "user", "content": "e o estorno, como fica?"},
            {"role": "assistant", "content": "Combinado: vamos estornar R$ 380,00 no seu cartão."},
            *_filler(150),
            {"role": "user", "content": "ok, e agora?"},
        ]
        _send(client, history, headers)
        assert "R$ 380,00" in _promises(gw, customer)  # its turn folded: heard
        question = "e os R$ 380,00 que vocês iam estornar? nada ainda" if asks else "e aí?"
        history.append({"role": "user", "content": question})
        _send(client, history, headers)
        history += _newer_offers_then_a_fold()
        _send(client, history, headers)
        promises = _promises(gw, customer)
        # the newer ones folded
        assert NEWEST in promises and len(promises) <= KEEP_PER_KIND, promises
        assert ("R$ 380,00" in promises) is asks, promises


def test_a_sum_in_a_bots_greeting_is_not_said_again_at_every_fold(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """The opening (a bot's greeting, then the customer's first message) is read again
    at every fold: the offer the greeting quotes is not taken for one stated again each
    time, and newer offers push it out as they would any offer said once."""
    gw = sqlite_app_gateway
    client = _client(gw)
    headers = {"X-Conversation-Id": "greeting-chat", "X-Customer-Id": "cust-greeting"}
    history: list[ChatCompletionMessageParam] = [
        {"role": "system", "content": SYSTEM},
        {"role": "assistant", "content": "Olá! Posso te reembolsar R$ 99,00 do frete hoje."},
        {"role": "user", "content": "oi, meu pedido chegou quebrado"},
        *_filler(150),
        {"role": "user", "content": "ok, e agora?"},
    ]
    _send(client, history, headers)
    assert "R$ 99,00" in _promises(gw, "cust-greeting")  # heard at the first fold
    history += _newer_offers_then_a_fold()
    _send(client, history, headers)
    promises = _promises(gw, "cust-greeting")
    assert NEWEST in promises and "R$ 99,00" not in promises, promises


def _logged_turn(client: Any, messages: list[Any], conversation: str, customer: str) -> Any:
    """One turn of a customer's conversation, its prompt logged by the simulator."""
    return client.chat.completions.with_raw_response.create(
        model="gpt-4o-mini",
        messages=messages,
        extra_headers={
            "X-Conversation-Id": conversation,
            "X-Customer-Id": customer,
            "X-Simulator-Log-Messages": "1",
        },
    )


WORDS = ("parcel", "refund", "window", "courier", "label", "invoice", "address", "delay")


def _rambling(n: int) -> str:
    return " ".join(WORDS[(n * 7 + k * 3) % len(WORDS)] for k in range(120))


def test_an_instruction_the_app_adds_mid_conversation_survives_compaction(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """An app added a system (or developer) message partway through ("identity
    verified: from now on reply in formal Spanish"): once its turn was folded it was
    gone, in neither the window nor the summary, and the model stopped following it.
    Kept verbatim after the summary, counted as system, within system_budget; a long
    one (a document sent as a system message) is folded with its turn, as before."""
    gw = sqlite_app_gateway
    client = gw.openai()
    log = SimulatorLog(gw)
    verified = "Identity verified by the app. From now on reply only in formal Spanish."
    pasted = "Catalog excerpt: " + " ".join(f"item {n} costs {n}.99" for n in range(400))
    messages: list[Any] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "Hello, I need help with my account."},
        {"role": "assistant", "content": "Sure, can you verify your identity?"},
        {"role": "user", "content": "Yes, it's me."},
        {"role": "developer", "content": verified},
        {"role": "system", "content": pasted},
    ]
    evicted = []
    for n in range(16):
        messages.append({"role": "user", "content": f"Question {n}: {_rambling(n)}"})
        reply = _logged_turn(client, messages, "mid-instruction", "mi")
        evicted.append(int(reply.headers["x-gateway-evicted-turns"]))
        messages.append({"role": "assistant", "content": reply.parse().choices[0].message.content})
        sent = log.since()[-1]["messages"]
        assert [m["role"] for m in sent].count("developer") == 1, n
        assert any(m["content"] == verified for m in sent)
    assert evicted[-1] > 0  # the turns around it were folded
    assert not any(m["content"] == pasted for m in sent)  # the long one was folded too
    # after the summary, before the recent turns; the opening request stays first
    roles = [m["role"] for m in sent]
    assert roles[:2] == ["system", "user"] and roles.index("developer") > 2


def test_a_fact_of_a_message_the_app_edited_is_forgotten(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """A customer typed the wrong order number, then edited the message and sent it
    again (a chat UI's "edit message"): the history no longer held ORD-99999, but the
    fact heard in the first version stayed, and the model was later told the customer
    mentioned both orders. A turn sent beside the other at once (two tabs) has an
    edit's shape too: it began before the other was answered, and forgets nothing."""
    gw = sqlite_app_gateway
    clock = [1_790_000_000.0]
    gw.gateway.turn_clock = lambda: clock[0]
    client = gw.openai()
    head = {"X-Conversation-Id": "edit-1", "X-Customer-Id": "ced"}
    base: list[Any] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "Hi, I have a problem with a delivery."},
        {"role": "assistant", "content": "Sure, what is the order number?"},
    ]

    def orders() -> set[str]:
        got: Any = client.get("/customers/ced/facts", cast_to=object)
        return {f["value"] for f in got["facts"] if "order" in f["tags"]}

    def ask(history: list[Any], wait_s: float = 20.0) -> Any:
        clock[0] += wait_s  # a person reads, edits, sends: seconds pass between turns
        return client.chat.completions.create(
            model="gpt-4o-mini", messages=history, extra_headers=head
        )

    typo = [*base, {"role": "user", "content": "It's order ORD-99999."}]
    ask(typo)
    assert orders() == {"ORD-99999"}
    fixed = [*base, {"role": "user", "content": "It's order ORD-12345."}]
    answer = ask(fixed)
    assert orders() == {"ORD-12345"}
    # a regenerated answer (the same message sent again) forgets nothing
    ask(fixed)
    assert orders() == {"ORD-12345"}
    # nor a turn sent at once beside it, from another tab (the same clock: begun
    # before the other was answered, though it has an edit's shape)
    ask([*base, {"role": "user", "content": "And ORD-77777 too."}], wait_s=0.0)
    assert orders() == {"ORD-12345", "ORD-77777"}
    # nor a next turn that holds the earlier ones where they were
    reply = answer.choices[0].message.content
    nxt = [*fixed, {"role": "assistant", "content": reply}]
    nxt.append({"role": "user", "content": "Also ORD-55555 please."})
    ask(nxt)
    assert orders() == {"ORD-12345", "ORD-77777", "ORD-55555"}
    # an app that sends its opening and the last exchange only drops earlier messages
    # as a rule: that is no edit, and the facts stay (a review found them deleted)
    tail = [*base[:2], {"role": "assistant", "content": "Thanks, let me look."}]
    tail.append({"role": "user", "content": "When will they arrive?"})
    ask(tail)
    assert orders() == {"ORD-12345", "ORD-77777", "ORD-55555"}


def test_a_customers_next_session_without_a_conversation_id_starts_anew(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """An app sending X-Customer-Id but no X-Conversation-Id, every session opening
    "Hi": five days after a dispute, the next session shared the dispute's record (the
    same fingerprint), kept its class and turn count, and escalated on its first
    message. It starts anew now, and sees the dispute as an earlier episode."""
    gw = sqlite_app_gateway
    clock = [1_790_000_000.0]
    gw.gateway.turn_clock = lambda: clock[0]
    client = gw.openai()
    log = SimulatorLog(gw)
    head = {"X-Customer-Id": "cust-x", "X-Simulator-Log-Messages": "1"}

    def ask(history: list[Any]) -> Any:
        return client.chat.completions.with_raw_response.create(
            model="gpt-4o-mini", messages=history, extra_headers=head
        )

    first: list[Any] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Hi"}]
    said = ["I did not authorize this $80 charge on order ORD-771204, I want a chargeback"]
    said += ["still nothing", "hello?", "answer me", "?"]
    for text in said:
        ask(first)
        first += [
            {"role": "assistant", "content": "Let me check."},
            {"role": "user", "content": text},
        ]
    dispute = ask(first)
    assert dispute.headers["x-gateway-class"] == "dispute"
    clock[0] += 5 * 86400
    second: list[Any] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Hi"}]
    answer = ask(second)
    assert answer.headers["x-gateway-class"] != "dispute"
    assert "x-gateway-escalation" not in answer.headers
    sent = log.since()[-1]["messages"]
    cards = "\n".join(m["content"] for m in sent if "Earlier conversations" in m["content"])
    assert "ORD-771204" in cards  # the dispute, as a card
    second += [{"role": "assistant", "content": "Hello! How can I help?"}]
    second += [{"role": "user", "content": "What are your opening hours on Saturday?"}]
    answer = ask(second)
    assert "x-gateway-escalation" not in answer.headers
    auth = {"Authorization": f"Bearer {gw.keys['acme']}"}
    record = gw.http.get(
        f"{gw.v1}/conversations/{answer.headers['x-gateway-conversation-id']}", headers=auth
    ).json()
    assert record["turns"] == 2  # its own turns only


CALL = {"role": "assistant", "content": None}


def _tool_round(n: int) -> list[Any]:
    function = {"name": "lookup_order", "arguments": '{"id": "ORD-1"}'}
    call: dict[str, Any] = {"id": f"call_{n}", "type": "function", "function": function}
    return [
        {**CALL, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call["id"], "content": "shipped"},
    ]


def test_a_regenerate_or_an_app_dropping_tool_messages_stays_one_session(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """The session split (X-Customer-Id, no X-Conversation-Id) counted messages: a
    regenerate after a tool round (two messages shorter) and an app that keeps only the
    final answer of its tool rounds each started a new session, its counters reset (a
    review of the split)."""
    gw = sqlite_app_gateway
    client = gw.openai()
    auth = {"Authorization": f"Bearer {gw.keys['acme']}"}

    def ask(history: list[Any]) -> str:
        raw = client.chat.completions.with_raw_response.create(
            model="gpt-4o-mini", messages=history, extra_headers={"X-Customer-Id": "cust-t"}
        )
        return raw.headers["x-gateway-conversation-id"]

    def turns(conversation: str) -> int:
        found: int = gw.http.get(f"{gw.v1}/conversations/{conversation}", headers=auth).json()[
            "turns"
        ]
        return found

    h: list[Any] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Hi"}]
    first = ask(h)
    h += [{"role": "assistant", "content": "Hello"}, {"role": "user", "content": "Where is ORD-1?"}]
    ask(h)
    ask([*h, *_tool_round(1), *_tool_round(2)])
    assert ask(h) == first and turns(first) == 4  # regenerated: the same session
    h += [{"role": "assistant", "content": "It shipped."}, {"role": "user", "content": "When?"}]
    assert ask(h) == first and turns(first) == 5  # the tool rounds dropped: the same


def test_an_instruction_sent_each_turn_is_kept_once_not_once_per_turn(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """An app that adds "Current time: ..." as a system message every turn had every
    folded one sent on, up to system_budget (a review of the mid-conversation
    instructions): only the newest of a kind counts, and none when one is still in the
    recent turns."""
    gw = sqlite_app_gateway
    client = gw.openai()
    log = SimulatorLog(gw)
    verified = "Identity verified by the app. From now on reply only in formal Spanish."
    messages: list[Any] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "Hello, I need help with my account."},
        {"role": "assistant", "content": "Sure, can you verify your identity?"},
        {"role": "user", "content": "Yes, it's me."},
        {"role": "system", "content": verified},
        # two that open alike and replace nothing (a review found the first dropped)
        {"role": "system", "content": "The customer is a verified VIP: waive the fee."},
        {"role": "developer", "content": "The customer prefers replies in Spanish."},
    ]
    for n in range(30):
        messages.append({"role": "system", "content": f"Current time: 2026-12-06 10:{n:02d}"})
        messages.append({"role": "user", "content": f"Question {n}: {_rambling(n)}"})
        reply = _logged_turn(client, messages, "per-turn-time", "pt")
        messages.append({"role": "assistant", "content": "Let me check."})
    assert int(reply.headers["x-gateway-evicted-turns"]) > 20
    sent = log.since()[-1]["messages"]
    times = [m["content"] for m in sent[1:] if m["content"].startswith("Current time")]
    # those of the recent turns only, in their places: none of the folded ones again
    last = [f"Current time: 2026-12-06 10:{n:02d}" for n in range(30 - len(times), 30)]
    assert times == last and len(times) < 10, times
    assert sum(m["content"] == verified for m in sent) == 1
    assert any(m["content"].startswith("The customer is a verified VIP") for m in sent)
    assert any(m["content"] == "The customer prefers replies in Spanish." for m in sent)


@pytest.mark.parametrize(
    ("older", "later", "both"),
    [
        ("Current time: 10:01", "Current time: 10:02", False),
        ("Relevant documents: refund policy v1", "Relevant documents: policy v2", False),
        ("Same words here.", "Same words here.", False),
        ("Note: the customer is a VIP.", "Note: reply in Spanish.", True),
        ("At 10:30 the store closes.", "At 10:45 the courier leaves.", True),
        ("Use https://kb.example/a for refunds.", "Use https://kb.example/b for returns.", True),
        ("Escalation policy: call a manager.", "Refund policy: 30 days.", True),
    ],
)
def test_which_folded_instruction_a_later_one_replaces(older: str, later: str, both: bool) -> None:
    """A label replaces a label ("Current time: ..." sent each turn); "Note:", a time, a
    link replace nothing (a third review found them merged by the first label rule)."""
    transcript = [
        {"role": "user", "content": "Hi"},
        {"role": "system", "content": older},
        {"role": "user", "content": "question"},
        {"role": "assistant", "content": "answer"},
        {"role": "system", "content": later},
        {"role": "user", "content": "next"},
    ]
    memory = Memory(summary="customer: hi", cursor=len(transcript))
    seg = split(transcript, memory)
    seg = dataclasses.replace(seg, memory=memory)
    kept = [m["content"] for m in kept_instructions(seg, 1000, _Count())]
    assert kept == ([older, later] if both else [later])


class _Count:
    def message(self, message: Any) -> int:
        return len(str(message.get("content")).split()) + 4

    def text(self, text: str) -> int:
        return len(text.split())
