"""Contact details a caller without the `verified` scope states (2026-12-06): an impostor
calling as the customer ("my new email is ..."), no X-Customer-Scopes, planted a value
that a later verified session of the same customer got as its facts and in the earlier
episode's card, as verified data, and that pushed the verified email out of the
customer's facts. Through the openai SDK against the in-process gateway and its
simulated upstream; on each store backend (and Redis with the PostgreSQL ledger) where
the store is the point."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from openai.types.chat import ChatCompletionMessageParam

from gateway.context.builder import EDIT_AFTER_S
from gateway.context.conversations import ConversationStore
from gateway.context.fact_docs import customer_facts_key, fact_to_json
from gateway.context.people import current_facts
from gateway.context.prompts import fact_tag, facts_block
from gateway.context.redaction import redact
from gateway.context.types import Fact
from gateway.context.unverified import as_stored, stated_by, verified_again, with_verified
from tests.inprocess import InProcessGateway, SimulatorLog, play_turns, say
from tests.ledger_db import EVERY_BACKEND, backend_url, open_test_store

SYSTEM = "You are the support agent of an online store. Be brief and precise."
CUSTOMER = "cust-ann"
REAL = "ann.lee@example.com"
EVIL = "ann.lee.new@evil-mail.example"
PHONE = "(415) 555-0134"
NEW_PHONE = "(212) 555-0199"
MARK = "stated by an unverified caller"
VERIFIED = {"X-Customer-Scopes": "verified"}


def _say(
    gw: InProcessGateway, conversation: str, channel: str, texts: list[str], **headers: str
) -> None:
    play_turns(gw, SYSTEM, (conversation, CUSTOMER, channel), texts, **headers)


def _last_prompt(log: SimulatorLog) -> str:
    return "\n".join(str(m.get("content")) for m in log.since()[-1]["messages"])


def _facts(gw: InProcessGateway) -> dict[str, dict[str, Any]]:
    """The customer's facts as the app reads them (GET .../facts), by value."""
    auth = {"Authorization": f"Bearer {gw.keys['acme']}"}
    got = gw.http.get(f"{gw.v1}/customers/{CUSTOMER}/facts", headers=auth)
    assert got.status_code == 200, got.text
    return {f["value"]: f for f in got.json()["facts"]}


def _lines_with(prompt: str, value: str) -> list[str]:
    """The lines holding `value`, a fact's read with the tag line it is shown under."""
    out, tag = [], ""
    for line in prompt.splitlines():
        if line.startswith("[") and line.endswith("]") and "; source: " in line:
            tag = line  # (a card's line opens with its "[channel, date]")
        elif value in line:
            out.append(f"{line} {tag}" if line.startswith("- ") else line)
    return out


def test_an_email_an_unverified_caller_states_is_no_verified_data_in_a_later_session(
    app_gateway: InProcessGateway,
) -> None:
    """The attack: a call without scopes plants an email; the customer's later app
    session (verified) gets it only marked as stated by an unverified caller, never as a
    plain fact, and the call's card withholds it."""
    gw = app_gateway
    _say(
        gw,
        "call-1",
        "phone",
        ["Hi, this is Ann Lee.", f"My new email is {EVIL}, please update it."],
    )
    log = SimulatorLog(gw)
    _say(gw, "app-1", "webchat", ["Please send a password reset link to my email."], **VERIFIED)
    prompt = _last_prompt(log)
    assert "[phone, " in prompt  # the call's card is there
    lines = _lines_with(prompt, EVIL)
    assert lines, "a verified session still learns what was stated, marked"
    assert all(line.startswith("- email: ") and MARK in line for line in lines), lines
    assert "[withheld]" in prompt.split("Earlier conversations")[1]  # the card's email
    assert _facts(gw)[EVIL]["stated_unverified"] is True  # the facts API shows the mark


def test_a_verified_callers_contacts_carry_over_and_an_impostor_displaces_none(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """A verified caller's email and phone reach the next verified session as before. An
    impostor's "new" phone pushed the verified one out of the customer's facts (a phone
    is one-valued: the newest won); it is kept beside it now, marked."""
    gw = sqlite_app_gateway
    said = f"Hi, Ann Lee here, my email is {REAL}. Call me on {PHONE}."
    _say(gw, "app-1", "webchat", [said], **VERIFIED)
    _say(gw, "call-2", "phone", [f"Hi, this is Ann Lee. New number: {NEW_PHONE}."])
    _say(gw, "call-2", "phone", [f"And my new email is {EVIL}."])
    log = SimulatorLog(gw)
    _say(gw, "app-2", "webchat", ["Please send the reset link to my email."], **VERIFIED)
    prompt = _last_prompt(log)
    for verified in (REAL, PHONE):
        lines = _lines_with(prompt, verified)
        assert lines and not any(MARK in line for line in lines), verified
    for planted in (EVIL, NEW_PHONE):
        lines = _lines_with(prompt, planted)
        assert lines and all(MARK in line for line in lines), planted
    facts = _facts(gw)
    assert not facts[REAL]["stated_unverified"] and not facts[PHONE]["stated_unverified"]
    assert facts[EVIL]["stated_unverified"] and facts[NEW_PHONE]["stated_unverified"]
    # A caller without the scope sees none of them in another conversation, as before.
    _say(gw, "chat-3", "webchat", ["Which email and phone do you have for me?"])
    assert not any(v in _last_prompt(log) for v in (REAL, EVIL, "555-0134", "555-0199"))


def test_a_replaced_value_the_agent_quoted_stays_out_of_the_card(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """The impostor's first "new number", replaced by a second, is no longer among the
    customer's facts; the agent's answer that quoted it still reaches the call's card,
    which withholds it from the verified session too."""
    gw = sqlite_app_gateway
    client = gw.openai()
    headers = {"X-Customer-Id": CUSTOMER, "X-Channel": "phone", "X-Simulator-Log-Messages": "1"}
    messages: list[ChatCompletionMessageParam] = [
        {"role": "user", "content": f"Hi, this is Ann Lee. New number: {NEW_PHONE}."},
        {"role": "assistant", "content": f"I have updated your number to {NEW_PHONE} today."},
        {"role": "user", "content": "Sorry, I mixed them up: my new number is (646) 555-0101."},
    ]
    for end in (1, 3):
        client.chat.completions.create(
            model="gpt-4o-mini",
            messages=messages[:end],
            extra_headers={**headers, "X-Conversation-Id": "call-1"},
        )
    log = SimulatorLog(gw)
    _say(gw, "app-1", "webchat", ["Please call me back."], **VERIFIED)
    prompt = _last_prompt(log)
    assert "[phone, " in prompt
    assert "555-0199" not in prompt.replace(" ", "")
    assert all(MARK in line for line in _lines_with(prompt, "555-0101"))


def test_an_app_putting_back_what_it_read_keeps_the_mark(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """The app's facts are verified data: a fact put without the mark is the app's word.
    An app that syncs by reading the facts and putting them back does not vouch for an
    impostor's email by doing so."""
    gw = sqlite_app_gateway
    _say(gw, "call-1", "phone", [f"Hi, this is Ann Lee. My new email is {EVIL}."])
    auth = {"Authorization": f"Bearer {gw.keys['acme']}"}
    url = f"{gw.v1}/customers/{CUSTOMER}/facts"
    read = list(_facts(gw).values())
    assert gw.http.put(url, json={"facts": read}, headers=auth).status_code == 200
    assert _facts(gw)[EVIL]["stated_unverified"] is True
    bad = [{**read[0], "stated_unverified": "no"}]
    refused = gw.http.put(url, json={"facts": bad}, headers=auth)
    assert refused.status_code == 400 and refused.json()["error"]["param"] == "stated_unverified"


def test_the_conversation_that_stated_it_keeps_it_once_its_turn_is_folded(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """What the customer stated here is theirs to see here, scopes or not, unmarked: the
    turn that said it leaves the window and the fact stays."""
    gw = sqlite_app_gateway
    log = SimulatorLog(gw)
    chatter = [
        f"any news about the parcel? question {n}: the courier said it left the depot on "
        "Monday, and I still have nothing at the door, nobody explains anything to me"
        for n in range(30)
    ]
    _say(
        gw,
        "call-1",
        "phone",
        ["Hi, this is Ann Lee.", f"My new email is {EVIL}.", *chatter],
        **{"X-Conversation-Class": "catalog"},
    )
    sent = log.since()[-1]["messages"]
    assert f"My new email is {EVIL}." not in [m["content"] for m in sent]  # folded
    lines = _last_prompt(log).split("\n")
    (at,) = [i for i, x in enumerate(lines) if x.startswith("- email: ") and EVIL in x]
    tag = next(x for x in reversed(lines[:at]) if x.startswith("["))
    assert tag == "[unconfirmed; source: phone transcript]"  # theirs, unmarked here


def test_a_verified_caller_stating_the_value_makes_it_verified(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    gw = sqlite_app_gateway
    _say(gw, "call-1", "phone", [f"Hi, this is Ann Lee. My new email is {EVIL}."])
    _say(gw, "app-1", "webchat", [f"Yes, my email is {EVIL} now."], **VERIFIED)
    assert _facts(gw)[EVIL]["stated_unverified"] is False
    log = SimulatorLog(gw)
    _say(gw, "app-2", "webchat", ["Please send the reset link to my email."], **VERIFIED)
    lines = _lines_with(_last_prompt(log), EVIL)
    assert lines and not any(MARK in line for line in lines)  # facts and cards: verified


@pytest.fixture(params=EVERY_BACKEND)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Every backend, and Redis with the PostgreSQL ledger beside it."""
    return backend_url(request, tmp_path)


def test_the_mark_is_stored_on_every_backend_and_old_documents_load(store_url: str) -> None:
    """Stored by this version the mark round-trips; a document of an earlier version,
    without it, still loads: a scoped fact heard in turns then is taken as stated
    unverified (anyone may have stated it), the app's own facts and basic ones not."""

    async def scenario() -> None:
        store = open_test_store(store_url)
        try:
            conversations = ConversationStore(store)
            key = customer_facts_key(CUSTOMER)
            marked = Fact("e", f"email: {EVIL}", ("email",), "verified", value=EVIL)
            marked = _extracted(marked, stated_unverified=True)
            real = _extracted(Fact("r", f"email: {REAL}", ("email",), "verified", value=REAL))
            await conversations.save_facts("acme", key, [marked, real])
            assert await conversations.facts("acme", key) == [marked, real]
            old = [
                _old(marked, "old-email", extracted=True),
                _old(marked, "old-city", extracted=True, scope="basic"),
                _old(marked, "old-app", extracted=False),
            ]
            await store.put_doc("facts", "acme", "customer:old", {"facts": old})
            loaded = {f.id: f for f in await conversations.facts("acme", "customer:old")}
            assert loaded["old-email"].stated_unverified
            assert not loaded["old-city"].stated_unverified
            assert not loaded["old-app"].stated_unverified
        finally:
            await store.close()

    asyncio.run(scenario())


def _extracted(fact: Fact, **changes: Any) -> Fact:
    return replace(fact, extracted=True, source_channel="phone", created_at=100.0, **changes)


def _old(fact: Fact, fid: str, **changes: Any) -> dict[str, Any]:
    """A fact as a version before the mark stored it (in the oldest layout, a list)."""
    doc = {k: v for k, v in fact_to_json(fact).items() if k != "stated_unverified"}
    return {**doc, "id": fid, **changes}


# -- the pure parts: which facts are kept, how they read, what a card withholds --------


def _heard(fid: str, kind: str, value: str, at: float, unverified: bool = False) -> Fact:
    scope = "verified" if kind in ("email", "phone", "address") else "basic"
    fact = Fact(fid, f"{kind}: {value}", (kind, "customer"), scope, "phone", value=value)
    return replace(fact, created_at=at, extracted=True, stated_unverified=unverified)


PHONE_1 = _heard("p1", "phone", PHONE, 1.0)
PLANTED = _heard("p2", "phone", NEW_PHONE, 2.0, unverified=True)
PHONE_3 = _heard("p3", "phone", "(646) 555-0101", 3.0)


@pytest.mark.parametrize(
    ("facts", "kept"),
    [
        ([PHONE_1, PLANTED], [PHONE_1, PLANTED]),  # the planted one displaces nothing
        ([PHONE_1, PLANTED, PHONE_3], [PHONE_3]),  # a newer verified value ends the claim
        ([PLANTED, replace(PHONE_3, id="p2b", created_at=2.5, stated_unverified=True)], None),
        ([PHONE_1, replace(PHONE_1, created_at=4.0, stated_unverified=True)], [PHONE_1]),
        ([PLANTED, replace(PLANTED, created_at=5.0, stated_unverified=False)], "verified"),
    ],
)
def test_what_an_unverified_caller_states_is_kept_apart(
    facts: list[Fact], kept: list[Fact] | str | None
) -> None:
    got = current_facts(facts)
    if kept is None:  # unverified after unverified: the newest, as before
        assert got == facts[-1:]
    elif kept == "verified":  # the same value stated by a verified caller since
        assert [(f.id, f.stated_unverified) for f in got] == [("p2", False)]
    else:
        assert got == kept


def test_a_marked_fact_reads_so_only_to_a_caller_within_its_scope() -> None:
    """In the conversation that stated it, a caller without the scope sees it as said; a
    caller within the scope (another session, or this one once verified) sees the mark."""
    assert MARK not in fact_tag(PLANTED, ("basic",))
    assert facts_block([PLANTED, PHONE_1], ("basic", "verified")) == [
        "[unconfirmed; source: phone transcript; stated by an unverified caller]",
        f"- {PLANTED.text}",
        "[unconfirmed; source: phone transcript]",
        f"- {PHONE_1.text}",
    ]


def test_a_card_withholds_what_an_unverified_caller_stated_from_every_caller() -> None:
    card = f"customer: phone {NEW_PHONE}; phone {PHONE} | outcome: we will call +12125550199"
    expected = f"customer: phone [withheld]; phone {PHONE} | outcome: we will call [withheld]"
    assert redact(card, [], ["basic", "verified"], [PLANTED, PHONE_1]) == expected
    # verified since: the card's copy (as made) is cleared by the facts document's
    verified = with_verified([PLANTED], [replace(PLANTED, stated_unverified=False)])
    assert redact(card, [], ["basic", "verified"], verified) == card


def test_a_fact_a_turn_states_is_marked_by_its_callers_scopes() -> None:
    heard = [replace(PLANTED, stated_unverified=False), _heard("c", "city", "Austin", 6.0)]
    assert [f.stated_unverified for f in stated_by(heard, ("basic",), "c1")] == [True, False]
    assert [f.stated_unverified for f in stated_by(heard, ("basic", "verified"), "c1")] == [
        False
    ] * 2
    # a verified caller stating the planted value verifies it; an unverified one does not
    assert verified_again([PLANTED], stated_by(heard, ("basic",), "c1")) == []
    (now,) = verified_again([PLANTED], stated_by(heard, ("basic", "verified"), "c1"))
    assert now == replace(PLANTED, stated_unverified=False)
    # read again from a card's turns, a scoped value is marked as the document has it
    again = [replace(f, stated_unverified=False) for f in (PLANTED, PHONE_1, PHONE_3)]
    marks = [f.stated_unverified for f in as_stored(again, [PLANTED, PHONE_1])]
    assert marks == [True, False, True]  # PHONE_3: not in the document, anyone's


def test_a_verified_value_stated_again_ends_an_older_unverified_one() -> None:
    """The verified phone (heard first), stated again by its customer after an
    impostor's 'new number': the customer has said which is theirs. Facts are met in the
    order first heard, so only the verified one's said-again time shows it (found by a
    review: both were kept)."""
    own = Fact(
        "p1",
        "phone: 11 98765-4321",
        ("phone",),
        "verified",
        created_at=1.0,
        value="11 98765-4321",
        extracted=True,
        said_again_at=3.0,
    )
    planted = Fact(
        "p2",
        "phone: 11 91111-2222",
        ("phone",),
        "verified",
        created_at=2.0,
        value="11 91111-2222",
        extracted=True,
        stated_unverified=True,
    )
    assert [f.id for f in current_facts([own, planted])] == ["p1"]
    later = replace(planted, created_at=4.0)
    assert [f.id for f in current_facts([own, later])] == ["p1", "p2"]


def test_a_customer_keeps_one_email_the_newest_they_gave(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """The packaged email pattern read every address as a "contact" fact, a kind of the
    operator's that keeps eight: three addresses given in turn were all kept, and the
    next conversation's card showed the two stale ones as current. An email is one
    value per customer: the newest given."""
    gw = sqlite_app_gateway
    asks = [f"Please update my email to ann.lee{n}@example.com, thanks." for n in range(3)]
    _say(gw, "app-1", "webchat", asks, **VERIFIED)
    emails = [v for v, f in _facts(gw).items() if "@" in v]
    assert emails == ["ann.lee2@example.com"], emails
    log = SimulatorLog(gw)
    _say(gw, "app-2", "webchat", ["Which email do you have for me?"], **VERIFIED)
    prompt = _last_prompt(log)
    assert "ann.lee2@example.com" in prompt
    assert "ann.lee0@" not in prompt and "ann.lee1@" not in prompt


def test_a_verified_fact_heard_in_another_conversation_is_not_stated_here(
    sqlite_app_gateway: InProcessGateway, app_log: SimulatorLog
) -> None:
    """Conversation B, opened without scopes, lists guesses at the customer's email; the
    customer's verified phone call A, begun after B, states the real one. Once B's turns
    are summarized, B's prompt showed that email as a fact the customer mentioned: it
    was heard after B began, and B's text holds its value. It was heard in A."""
    real = "ana.souza77@example.com"
    guesses = f"ana@example.com, {real}, asouza@example.org"
    filler = "I would like to understand the delivery schedule for the parcel. " * 12

    def turn(conv: str, scopes: str, history: list[Any], text: str) -> str:
        ids = {"X-Conversation-Id": conv, "X-Customer-Id": "cust-guess"}
        say(sqlite_app_gateway, history, text, **ids, **{"X-Customer-Scopes": scopes})
        sent = app_log.since()[-1]["messages"]
        return "\n".join(str(m.get("content")) for m in sent)

    b: list[Any] = [{"role": "system", "content": "You are a support agent."}]
    turn("conv-b", "", b, "Hi, I have a question about my account.")
    a: list[Any] = [{"role": "system", "content": "You are a support agent."}]
    turn("conv-a", "verified", a, f"My email is {real}, please update the record.")
    turn("conv-b", "", b, f"Which of these is the email you have for me: {guesses}?")
    folded = False
    for n in range(14):
        prompt = turn("conv-b", "", b, f"{filler}({n})")
        folded = folded or "Summary of earlier turns" in prompt
        facts = [line for line in prompt.splitlines() if line.startswith("- email:")]
        assert not any(real in line for line in facts), (n, facts)
    assert folded  # the guesses' turn left the window: only a fact could have shown it


def test_an_edit_in_one_conversation_keeps_a_fact_another_one_heard(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """Conversation B quotes an email that conversation A, begun after it, heard from a
    verified caller; B's app then edits that message away. The edit forgot the facts
    "heard here" by time, so A's verified email went from the customer's facts."""
    gw = sqlite_app_gateway
    real = "ana.souza77@example.com"
    b_id, a_id = {"X-Conversation-Id": "edit-b"}, {"X-Conversation-Id": "edit-a"}
    who = {"X-Customer-Id": "cust-edit"}
    b: list[Any] = []
    say(gw, b, "Hi, I have a question about my account.", **who, **b_id)
    a: list[Any] = []
    say(gw, a, f"My email is {real}, please update it.", **who, **a_id, **VERIFIED)
    say(gw, b, f"Is my email {real}?", **who, **b_id)

    def facts() -> list[str]:
        auth = {"Authorization": f"Bearer {gw.keys['acme']}"}
        got = gw.http.get(f"{gw.v1}/customers/cust-edit/facts", headers=auth).json()["facts"]
        return [f["text"] for f in got]

    assert any(real in f for f in facts())
    time.sleep(EDIT_AFTER_S + 0.2)  # an edit is sent once the turn it edits was answered
    del b[-2:]  # the app's "edit message": B's last question sent again, reworded
    say(gw, b, "Actually, never mind, what are your opening hours?", **who, **b_id)
    assert any(real in f for f in facts()), facts()
