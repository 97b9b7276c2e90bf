"""A customer correcting part of a value they gave ("o apto é 201 e não 210"): the value
said before, that part said right, supersedes it (gateway.context.people_partial)."""

from __future__ import annotations

import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from gateway.context.people import current_facts, extract_people_facts
from tests.inprocess import InProcessGateway, SimulatorLog

NOW = 1_780_000_000.0
SYSTEM = "You are the support agent of an online store. Be brief and precise."


def _current(*said: str) -> dict[str, list[str]]:
    turns = [{"role": "user", "content": s} for s in said]
    out: dict[str, list[str]] = {}
    for fact in current_facts(extract_people_facts(turns, "whatsapp", NOW)):
        out.setdefault(fact.tags[0], []).append(fact.value)
    return out


@pytest.mark.parametrize(
    ("first", "then", "kind", "now"),
    [
        (
            "meu endereço é Rua das Acácias, 88, apto 114",
            "ah não, o apto é 141 e não 114, digitei errado",
            "address",
            "Rua das Acácias, 88, apto 141",
        ),
        (
            "the delivery address is 5120 Oak Ridge Drive, Unit 7B, Dallas",
            "sorry it's 5210 not 5120",
            "address",
            "5210 Oak Ridge Drive, Unit 7B",  # the city is a fact of its own
        ),
        (
            "mi dirección es Calle Mayor 23, piso 4",
            "perdón, no es 23, es 32",
            "address",
            "Calle Mayor 32, piso 4",
        ),
        (
            "my number is 415 555 0178",
            "wait it ends in 0187 not 0178",
            "phone",
            "415 555 0187",
        ),
        (
            "o número do pedido é 5531207",
            "errei, não é 07 no final, é 70",
            "order",
            "5531270",
        ),
        (
            # said in words, as a call's transcript has it
            "o meu celular é onze nove oito sete seis cinco quatro três dois dois",
            "não é três dois dois no final é três três dois",
            "phone",
            "11987654332",
        ),
    ],
)
def test_a_part_said_again_right_corrects_the_value(
    first: str, then: str, kind: str, now: str
) -> None:
    assert _current(first, then)[kind] == [now]


@pytest.mark.parametrize(
    ("first", "then"),
    [
        # a number no earlier value holds
        ("meu endereço é Rua das Acácias, 88, apto 114", "são 3 caixas e não 2"),
        ("meu endereço é Rua das Acácias, 88, apto 114", "foram 45 minutos e não 30"),
        # one digit: a count, not a part of a value
        ("my address is 12 Elm Street, flat 3", "it's 4 items not 3"),
        # the numbers differ in length: no part of a value said again
        ("o pedido é 5531207", "é 12 e não 207"),
    ],
)
def test_other_numbers_said_with_a_no_correct_nothing(first: str, then: str) -> None:
    before = _current(first)
    after = _current(first, then)
    assert {k: v for k, v in after.items() if k != "problem"} == {
        k: v for k, v in before.items() if k != "problem"
    }


def test_a_turn_stating_the_whole_value_again_is_that_value() -> None:
    facts = _current(
        "meu endereço é Rua das Acácias, 88, apto 114",
        "o certo é 141 e não 114: Rua das Acácias, 88, apto 141",
    )
    assert facts["address"] == ["Rua das Acácias, 88, apto 141"]


def test_the_corrected_address_is_what_the_model_is_told(
    sqlite_app_gateway: InProcessGateway, app_log: SimulatorLog
) -> None:
    """Through the SDK: the address said early, its door corrected, then a long chat
    folds both turns away; the facts block the model reads has the corrected door only
    (the caller holds no scope: the customer stated every part of it in this
    conversation, so it is theirs to see in it)."""
    gw = sqlite_app_gateway
    client = openai.OpenAI(
        base_url=gw.v1, http_client=gw.http, api_key=gw.keys["acme"], max_retries=0
    )
    history: list[ChatCompletionMessageParam] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "oi, quero mudar o endereço de entrega do meu pedido"},
        {"role": "assistant", "content": "Claro! Qual é o novo endereço?"},
        {"role": "user", "content": "meu endereço é Rua das Acácias, 88, apto 114"},
        {"role": "assistant", "content": "Anotado: Rua das Acácias, 88, apto 114."},
        {"role": "user", "content": "ah não, o apto é 141 e não 114, digitei errado"},
        {"role": "assistant", "content": "Sem problema, corrigido."},
    ]
    for n in range(150):
        history.append({"role": "user", "content": f"Mensagem {n}: sigo aguardando o pedido."})
        history.append({"role": "assistant", "content": f"Resposta {n}: anotado, verificando."})
    history.append({"role": "user", "content": "pra qual endereço vai mesmo?"})
    client.chat.completions.create(
        model="gpt-4o-mini",
        messages=history,
        extra_headers={
            "X-Conversation-Id": "conv-door",
            "X-Customer-Id": "cust-door",
            "X-Simulator-Log-Messages": "1",
        },
    )
    sent = "\n".join(str(m.get("content")) for m in app_log.since()[-1]["messages"])
    facts = sent.split("Known facts about this customer:", 1)[1].split(">>>", 1)[0]
    assert "- address: Rua das Acácias, 88, apto 141 (correction)" in facts, sent
    assert "apto 114" not in facts
