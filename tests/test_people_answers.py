"""Facts a customer gives bare, as answers to what the agent asked, and the shapes that
need no question (gateway.context.people_answers), read as the request path reads a
conversation. The sentences were written for these tests, not taken from any workload
or from the hand-written evaluation set."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.context.people import extract_people_facts
from gateway.context.people_answers import asked_kinds
from gateway.context.people_text import FOLD
from gateway.context.types import Fact

NOW = 1_700_000_000.0


def pairs(facts: list[Fact]) -> set[tuple[str, str]]:
    return {(f.tags[0], f.value) for f in facts}


def answer(agent: str, customer: str) -> set[tuple[str, str]]:
    """The customer's reply read alone, as the newest message, after the agent's."""
    turn: list[dict[str, Any]] = [{"role": "user", "content": customer}]
    return pairs(extract_people_facts(turn, "webchat", NOW, before=agent))


@pytest.mark.parametrize(
    ("agent", "kinds"),
    [
        ("Olá! Com quem eu falo, por favor?", {"name"}),
        ("Could you confirm the name on the booking and the booking reference?", {"name", "order"}),
        ("buenas tardes le atiende marta con quién tengo el gusto", {"name"}),
        ("Me passa o número do pedido?", {"order"}),
        ("Which city are you in?", {"city"}),
        ("Qual a sua cidade?", {"city"}),
        ("Your name is already on the order, thank you. Anything else?", set()),
        ("Thanks, Paulo. The refund is on its way.", set()),
    ],
)
def test_what_the_agent_asks_for(agent: str, kinds: set[str]) -> None:
    assert asked_kinds(agent.translate(FOLD)) == kinds


@pytest.mark.parametrize(
    ("agent", "customer", "expected"),
    [
        (
            "Qual o seu nome completo?",
            "é a helena castilho, cliente faz tempo",
            ("name", "helena castilho"),
        ),
        ("Who am I speaking with?", "sure it's marcus bell", ("name", "marcus bell")),
        (
            "Can I get your name?",
            "yeah it's Priya Nair and I'm calling about my bill",
            ("name", "Priya Nair"),
        ),
        ("¿Me dice su nombre completo?", "con rocío fuentes", ("name", "rocío fuentes")),
        ("Qual o número do pedido?", "8841207", ("order", "8841207")),
        ("What's the booking reference?", "it's QWP7RT", ("order", "QWP7RT")),
        ("Em que cidade você está?", "aqui em joinville", ("city", "joinville")),
        # asked for among other things ("preciso de ..."), the name on a line of its own
        # in the middle of the answer
        (
            "Para começar, preciso de algumas informações: seu nome completo e o número da "
            "apólice. Se tiver o boletim de ocorrência, pode ir separando.",
            "ngm se machucou, so o susto\nMarcos Vinicius Teixeira\napolice PA-0098812-3",
            ("name", "Marcos Vinicius Teixeira"),
        ),
        # a police report's or a dispute's number, asked for, written or read out
        (
            "You can give me the police report number and I'll add it to the file.",
            "it's 26-044193",
            ("order", "26-044193"),
        ),
        (
            "Do you have the dispute number handy?",
            "it's two six dash zero four four one nine three",
            ("order", "two six dash zero four four one nine three"),
        ),
    ],
)
def test_a_bare_answer_is_what_was_asked(
    agent: str, customer: str, expected: tuple[str, str]
) -> None:
    assert expected in answer(agent, customer)


@pytest.mark.parametrize(
    ("agent", "customer", "kind"),
    [
        ("What's your name?", "Same here.", "name"),
        ("What's your name?", "why do you need it", "name"),
        ("What's your name?", "XD", "name"),
        ("Can I get your name please?", "Gmail", "name"),
        ("Hi, I'm Sarah from support. Who am I speaking with?", "Sarah, hi! It's Tom", "name"),
        ("Which city?", "Uber dropped it off", "city"),
        ("Qual o número do pedido?", "2023, acho", "order"),
        ("Qual o número do pedido?", "01310-100", "order"),
        ("What's your order number?", "1000 points", "order"),
        ("What's your name?", "Hahaha you don't even know mine", "name"),
        ("Where are you from?", "nice question, guess", "city"),
        ("Qual o número do pedido?", "não sei, uns 3 dias atrás", "order"),
        ("Which city?", "the one by the sea lol", "city"),
        # no question asked: a bare name opening a message is no answer
        ("Thanks for waiting.", "helena castilho, cliente faz tempo", "name"),
        # nor a name alone on a line between others: the courier's, the seller's
        ("Pode me contar o que houve?", "o entregador foi\nJoão Pedro Alves\ne nada", "name"),
        # asked for, still not one the line before says is someone else's
        (
            "Qual o seu nome completo?",
            "foi entregue para o porteiro\nJoão Pereira\nmas nada",
            "name",
        ),
        ("Can I get your full name?", "the courier was\nJames Walker\nhe left it", "name"),
        ("¿Me dice su nombre completo?", "hablé con\nLucía Fernández\nayer", "name"),
    ],
)
def test_what_is_no_answer(agent: str, customer: str, kind: str) -> None:
    assert kind not in {k for k, _ in answer(agent, customer)}


@pytest.mark.parametrize(
    ("customer", "expected"),
    [
        ("tá no nome de rodrigo pinheiro entrega na rua x", ("name", "rodrigo pinheiro")),
        ("the order is in the name of Olivia Grant", ("name", "Olivia Grant")),
        ("ficou no nome de cláudio entrega ali", ("name", "cláudio")),
        ("Fernanda Queiroz\napolice 99120-3", ("name", "Fernanda Queiroz")),
        ("entrega na rua das acácias 120 ap 4, centro, curitiba", ("city", "curitiba")),
        ("It's 12 Elm Road, Sheffield S10 2AB.", ("city", "Sheffield")),
        ("estoy aquí en monterrey desde ayer", ("city", "monterrey")),
    ],
)
def test_shapes_that_need_no_question(customer: str, expected: tuple[str, str]) -> None:
    assert expected in answer("", customer)


@pytest.mark.parametrize(
    ("customer", "kind"),
    [
        ("tá no nome da minha esposa", "name"),
        ("What in the name of Sam Hill is that?", "name"),
        ("Fernanda Queiroz", "name"),  # one line alone, no question: not a form's answer
        # a line in between names someone else; the line under an address is its town
        ("Recebi esse email do vendedor:\nMarcos Paulo Lima\nGerente de vendas", "name"),
        ("Ship to:\n12 Main St\nAustin Texas", "name"),
        ("Presente pra minha filha\nSofia Mendes\nEla faz aniversário amanhã", "name"),
        ("a nota saiu no nome de Maria Souza, minha mãe", "name"),
        ("rua das acácias 120 em frente ao mercado", "city"),
        ("Ship to 12 Elm St, Victoria Park", "city"),
    ],
)
def test_shapes_that_name_no_one_and_nowhere(customer: str, kind: str) -> None:
    assert kind not in {k for k, _ in answer("", customer)}


def test_a_name_said_short_keeps_the_full_one() -> None:
    """An email signed "Dana Whitfield", then "Dana": the name stays whole; a new full
    name still replaces it."""
    said = [
        {
            "role": "user",
            "content": "Hello,\n\nmy card was charged twice.\n\nThanks,\nDana Whitfield",
        },
        {"role": "assistant", "content": "We are on it."},
        {"role": "user", "content": "Any news?\n\nThanks,\nDana"},
    ]
    names = [f.value for f in extract_people_facts(said, "email", NOW) if f.tags[0] == "name"]
    assert names == ["Dana Whitfield"]
    said.append({"role": "user", "content": "Sorry, my name is Dana Price now, I married."})
    names = [f.value for f in extract_people_facts(said, "email", NOW) if f.tags[0] == "name"]
    assert names[-1] == "Dana Price"


def test_a_lowercase_word_is_no_bare_correction_of_a_city() -> None:
    """After "here in Provo", "I mean hahaha" corrects nothing."""
    said = [
        {"role": "user", "content": "I grew up here in Provo actually"},
        {"role": "user", "content": "one of everything I mean hahaha no way"},
    ]
    cities = [f.value for f in extract_people_facts(said, "chat", NOW) if f.tags[0] == "city"]
    assert cities == ["Provo"]
