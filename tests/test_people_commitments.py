"""What the agent commits to doing, in its own words (gateway.context.people_commitments):
the clause is kept as a `commitment` fact, so that once its turn folds out of the window,
or in a later conversation's card, the model still knows what was promised. The agent's
process ("I'll check") is no commitment; a commitment naming where to reach the customer
is as guarded as that contact detail."""

from __future__ import annotations

from urllib.parse import quote

import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from gateway.context.people import current_facts, extract_people_facts
from gateway.context.people_commitments import CLAUSE_WORDS
from gateway.context.types import Fact
from tests.inprocess import InProcessGateway, SimulatorLog, play_turns

NOW = 1_780_000_000.0
SYSTEM = "You are the support agent of an online store. Be brief and precise."


def _agent(*texts: str) -> list[Fact]:
    turns = [{"role": "assistant", "content": t} for t in texts]
    return extract_people_facts(turns, "webchat", NOW)


def _commitments(*texts: str) -> list[str]:
    return [f.value for f in _agent(*texts) if f.tags[0] == "commitment"]


@pytest.mark.parametrize(
    ("said", "clause"),
    [
        # English: will, going to, under way, done
        (
            "Thanks for waiting. I'll ship a new charger tomorrow by express, no charge.",
            "I'll ship a new charger tomorrow by express, no charge",
        ),
        (
            "Understood. We're going to waive the late fee on this month's statement.",
            "We're going to waive the late fee on this month's statement",
        ),
        (
            "Good news: I'm crediting 2,000 points to your loyalty account right now.",
            "I'm crediting 2,000 points to your loyalty account right now",
        ),
        (
            "I've gone ahead and scheduled the technician for Monday morning.",
            "I've gone ahead and scheduled the technician for Monday morning",
        ),
        (
            "Sorry about that, I will personally call you back at 4pm today.",
            "I will personally call you back at 4pm today",
        ),
        (
            "you'll receive a refund of the shipping cost within a week",
            "you'll receive a refund of the shipping cost within a week",
        ),
        # Portuguese
        (
            "Certo. Vou reenviar o kit completo amanhã, sem custo de frete.",
            "Vou reenviar o kit completo amanhã, sem custo de frete",
        ),
        (
            "Pronto, já agendei a retirada do aparelho para terça à tarde.",
            "já agendei a retirada do aparelho para terça à tarde",
        ),
        (
            "Tudo bem, creditaremos o valor da mensalidade na próxima fatura.",
            "creditaremos o valor da mensalidade na próxima fatura",
        ),
        (
            "Perfeito, a equipe vai te ligar amanhã cedo para combinar a instalação.",
            "a equipe vai te ligar amanhã cedo para combinar a instalação",
        ),
        (
            "Vou fazer o estorno das duas parcelas hoje.",
            "Vou fazer o estorno das duas parcelas hoje",
        ),
        # Spanish
        (
            "De acuerdo, le vamos a cambiar el colchón por uno nuevo esta semana.",
            "le vamos a cambiar el colchón por uno nuevo esta semana",
        ),
        (
            "Listo: te lo mandamos otra vez con envío urgente.",
            "te lo mandamos otra vez con envío urgente",
        ),
        (
            "Ya te reembolsé los gastos de envío.",
            "Ya te reembolsé los gastos de envío",
        ),
        (
            "Mañana programaremos la visita del técnico.",
            "Mañana programaremos la visita del técnico",
        ),
    ],
)
def test_a_commitment_is_kept_as_the_clause_that_says_it(said: str, clause: str) -> None:
    assert _commitments(said) == [clause]


@pytest.mark.parametrize(
    "said",
    [
        "Let me check. I'll look into it and see what happened.",
        "I'll transfer you to billing now.",
        "I'm going to ask you a few questions to verify your identity.",
        "I'm checking the tracking right now.",
        "Vou verificar no sistema, só um instante.",
        "Vou te passar para o setor financeiro.",
        "Vou fazer uma pergunta rápida: o produto foi usado?",
        "Vou abrir aqui a tela do seu cadastro.",
        "Voy a revisar su caso con calma.",
        "Ya pagaste las dos cuotas, así que no debes nada.",
        "O sistema já estornou esse valor em março.",
        "I'll be honest with you, that model is discontinued.",
        "I'll add that this happens a lot with this model.",
    ],
)
def test_the_agents_own_process_commits_to_nothing(said: str) -> None:
    assert _commitments(said) == []


def test_a_call_transcript_with_no_full_stop_keeps_a_bounded_clause() -> None:
    said = (
        "ok senhor entendi então o que eu vou fazer aqui é o seguinte vou estender o carro "
        "reserva até a entrega do veículo e aí o senhor não precisa se preocupar com nada "
        "porque a oficina vai avisar a gente quando a peça chegar e a gente liga pro senhor "
        "pra combinar a retirada tudo bem"
    )
    [clause] = _commitments(said)
    assert clause.startswith("vou estender o carro reserva até a entrega do veículo")
    assert len(clause.split()) <= CLAUSE_WORDS


def test_a_commitment_naming_a_contact_detail_is_guarded_as_that_detail() -> None:
    facts = _agent(
        "I'll send the new card to 221 Baker Street, Apt 4, London.",
        "I'll email the receipt to ana.souza@example.com today.",
        "I'll refund the delivery fee of $12 by Friday.",
    )
    scopes = {f.value: f.scope for f in facts if f.tags[0] == "commitment"}
    assert scopes == {
        "I'll send the new card to 221 Baker Street, Apt 4, London": "verified",
        "I'll email the receipt to ana.souza@example.com today": "verified",
        "I'll refund the delivery fee of $12 by Friday": "basic",
    }


def test_the_last_commitments_said_are_kept_and_the_amounts_beside_them() -> None:
    said = [f"I'll ship replacement part number {n} today." for n in range(1, 7)]
    facts = current_facts(_agent(*said, "I'll refund $40 to your card by Monday."))
    assert [f.value for f in facts if f.tags[0] == "commitment"] == [
        "I'll ship replacement part number 4 today",
        "I'll ship replacement part number 5 today",
        "I'll ship replacement part number 6 today",
        "I'll refund $40 to your card by Monday",
    ]
    assert ("promise", "$40") in {(f.tags[0], f.value) for f in facts}


def _card_prompt(
    gw: InProcessGateway, log: SimulatorLog, customer: str, reply: str, **later: str
) -> str:
    """What the model is sent in a customer's second conversation after the agent said
    `reply` in the first (verified) one."""
    play_turns(
        gw,
        SYSTEM,
        (f"{customer}-a", customer, "webchat"),
        ["Hello, the mattress I bought arrived torn."],
        **{"X-Simulator-Reply": quote(reply), "X-Customer-Scopes": "verified"},
    )
    play_turns(gw, SYSTEM, (f"{customer}-b", customer, "webchat"), ["hi, any news?"], **later)
    return "\n".join(str(m.get("content")) for m in log.since()[-1]["messages"])


def test_an_earlier_conversations_commitment_reaches_the_next_ones_card(
    sqlite_app_gateway: InProcessGateway, app_log: SimulatorLog
) -> None:
    """In the words it was said in, the amount and the day it names said once (they are
    the agent's promise and deadline besides)."""
    reply = "I'm so sorry. We'll refund the $40 delivery fee to your card within 5 days."
    prompt = _card_prompt(sqlite_app_gateway, app_log, "cust-commit", reply)
    [card] = [line for line in prompt.splitlines() if "agent promised:" in line]
    promised = card.split("agent promised: ", 1)[1].split(" | ", 1)[0]
    assert promised == "We'll refund the $40 delivery fee to your card within 5 days", card


def test_a_commitment_naming_an_address_is_withheld_from_a_basic_caller(
    sqlite_app_gateway: InProcessGateway, app_log: SimulatorLog
) -> None:
    """Its scope is the address's: a card shows it to no caller without `verified` (and,
    as any scoped value the customer's facts document does not hold, to none at all:
    who stated a carded turn is not kept)."""
    reply = "We'll deliver the new mattress to 48 Elm Road, Flat 2, Leeds on Tuesday."
    prompt = _card_prompt(sqlite_app_gateway, app_log, "cust-basic", reply)
    [card] = [line for line in prompt.splitlines() if "agent promised:" in line]
    assert "Elm Road" not in prompt and "Leeds" not in card, prompt


def test_a_commitment_folded_out_of_a_long_chat_is_still_in_its_prompt(
    sqlite_app_gateway: InProcessGateway, app_log: SimulatorLog
) -> None:
    """The agent's commitment, said early in a long chat, folds out of the window: the
    model is still told of it (before this, only an amount the agent offered was)."""
    gw = sqlite_app_gateway
    client = openai.OpenAI(
        base_url=gw.v1, http_client=gw.http, api_key=gw.keys["acme"], max_retries=0
    )
    promise = "Vou reenviar o kit completo amanhã, sem custo de frete"
    history: list[ChatCompletionMessageParam] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "oi, meu kit de ferramentas chegou faltando peças"},
        {"role": "assistant", "content": f"Que chato! {promise}."},
    ]
    for n in range(150):
        history.append({"role": "user", "content": f"Mensagem {n}: sigo aguardando o pedido."})
        history.append({"role": "assistant", "content": f"Resposta {n}: anotado, verificando."})
    history.append({"role": "user", "content": "e o kit, vem amanhã mesmo?"})
    client.chat.completions.create(
        model="gpt-4o-mini",
        messages=history,
        extra_headers={
            "X-Conversation-Id": "conv-kit",
            "X-Customer-Id": "cust-kit",
            "X-Simulator-Log-Messages": "1",
        },
    )
    sent = app_log.since()[-1]["messages"]
    assert not any(m.get("content") == f"Que chato! {promise}." for m in sent)  # folded
    assert promise in "\n".join(str(m.get("content")) for m in sent)
