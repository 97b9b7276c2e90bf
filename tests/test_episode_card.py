"""An earlier conversation reaches a new one as a short card: channel, day, topic, facts
by kind, the agent's promises and the outcome. Never a turn copied whole, always within
its ceiling."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.context.episode_card import NO_OUTCOME, WHOLE_CHARS, episode_card
from gateway.context.people import extract_people_facts
from gateway.context.types import Fact
from gateway.ledger.tokens import TokenCounter

COUNTER = TokenCounter()
MARCH_2 = 1740900000.0  # 2025-03-02 07:20 UTC
WIDE = 400  # a ceiling no card here reaches


def tokens(text: str) -> int:
    return COUNTER.count_text("gpt-4o-mini", text)


def fact(kind: str, value: str, at: float = 0.0) -> Fact:
    return Fact(
        id=f"{kind}:{value}", text=f"{kind}: {value}", tags=(kind,), value=value, created_at=at
    )


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def agent(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def card(
    facts: list[Fact],
    turns: list[dict[str, Any]],
    summary: str = "",
    ceiling: int = WIDE,
    channel: str = "phone",
    ended_at: float = MARCH_2,
) -> str:
    return episode_card(channel, ended_at, facts, turns, summary, ceiling, tokens)


DIEGO_TURNS = [
    user("Oi, boa tarde! O app não deixa eu entrar, dá erro 500 desde ontem."),
    agent("Olá! Pode me passar seu nome e o número do pedido?"),
    user("Diego, de Recife. Pedido #824883"),
    agent(
        "Pronto, Diego, já solicitei o reembolso de R$ 149,90 e o valor cai até 21/02. Algo mais?"
    ),
]
DIEGO_FACTS = [
    fact("problem", "o app não deixa eu entrar, dá erro 500"),
    fact("name", "Diego"),
    fact("city", "Recife"),
    fact("order", "#824883"),
    fact("promise", "reembolso de R$ 149,90"),
    fact("deadline", "21/02"),
]


def test_portuguese_card_has_channel_day_topic_facts_promise_and_outcome() -> None:
    assert card(DIEGO_FACTS, DIEGO_TURNS) == (
        "[phone, 2025-03-02] topic: o app não deixa eu entrar, dá erro 500"
        " | customer: name Diego; city Recife; order #824883"
        " | agent promised: reembolso de R$ 149,90 by 21/02"
        " | outcome: já solicitei o reembolso de R$ 149,90 e o valor cai até 21/02"
    )


def test_english_topic_is_the_first_request_past_its_greetings() -> None:
    turns = [
        user("Hi there, good morning! My order 48213 arrived with a cracked screen. Can you help?"),
        agent("I'm sorry to hear that. I've issued a replacement, it ships tomorrow."),
    ]
    got = card([fact("order", "48213")], turns, channel="webchat")
    assert got == (
        "[webchat, 2025-03-02] topic: My order 48213 arrived with a cracked screen"
        " | customer: order 48213 | outcome: I've issued a replacement"
    )


def test_spanish_card_reads_spanish_greetings_and_cues() -> None:
    turns = [
        user("¡Hola, buenas tardes! Me cobraron dos veces la suscripción de marzo."),
        agent("Lo siento mucho, María. Ya le enviamos la devolución de 12,99 €, ¿algo más?"),
    ]
    facts = [fact("name", "María"), fact("amount", "12,99 €")]
    assert card(facts, turns, channel="whatsapp") == (
        "[whatsapp, 2025-03-02] topic: Me cobraron dos veces la suscripción de marzo"
        " | customer: name María; amount 12,99 € | outcome: Ya le enviamos la devolución de 12,99 €"
    )


@pytest.mark.parametrize(
    ("first", "topic"),
    [
        ("Olá! Bom dia, tudo bem? Quero trocar o tamanho da camiseta", "Quero trocar o tamanho"),
        ("oi\n\nmeu boleto venceu ontem e não consigo gerar outro", "meu boleto venceu ontem"),
        ("Hello, how are you? I was charged twice for one order.", "I was charged twice for"),
        ("Hey team - the invoice PDF is blank.", "team - the invoice PDF is blank"),
        ("Buenos días. ¿Qué tal? No me llegó el código de verificación", "No me llegó el código"),
        ("Hola! Help.", "Help"),
    ],
)
def test_greetings_are_not_the_topic(first: str, topic: str) -> None:
    got = card([], [user(first)])
    assert f"topic: {topic}" in got
    assert "topic: Olá" not in got and "topic: Hello" not in got and "topic: Buenos" not in got


@pytest.mark.parametrize(
    ("first", "name", "topic"),
    [
        ("oi, aqui quem fala é a Beatriz Souza, queria saber se tem esse produto em estoque",
         "Beatriz Souza", "queria saber se tem esse produto em estoque |"),
        ("Hi, I'm Kevin Moore. There's a charge I didn't authorize on my card",
         "Kevin Moore", "There's a charge I didn't authorize on my card |"),
        ("Hi, I'm Kevin Moore.There's a charge I didn't authorize", "Kevin Moore",
         "There's a charge I didn't authorize |"),
        # a name said later is part of the topic
        ("the parcel for Ana never came", "Ana", "the parcel for Ana never came |"),
    ],
)  # fmt: skip
def test_the_customers_introduction_is_not_the_topic(first: str, name: str, topic: str) -> None:
    """The card shows the name; the topic's words go to what the customer came for."""
    got = card([fact("name", name)], [user(first), agent("Ok.")])
    assert f"topic: {topic}" in got and f"name {name}" in got


def test_a_greeting_alone_leaves_the_topic_to_the_next_customer_message() -> None:
    turns = [user("Boa noite!"), agent("Boa noite, como posso ajudar?"), user("Cartão recusado")]
    assert "topic: Cartão recusado |" in card([], turns)


def test_a_long_first_message_gives_its_first_fifteen_words() -> None:
    words = "the parcel tracking page has shown the same depot scan for nine days now and"
    got = card([], [user(f"{words} nobody answers my emails at all")])
    assert f"topic: {words}... |" in got


def test_a_first_message_that_is_all_topic_is_cut_to_eight_words() -> None:
    message = "O app não deixa eu entrar, dá erro 500 desde ontem"  # 11 words, 51 characters
    got = card([], [user(message)])
    assert "topic: O app não deixa eu entrar, dá erro... |" in got
    assert message not in got


@pytest.mark.parametrize(
    "closing",
    [
        "Thanks for reaching out, have a great day!",
        "Obrigado pelo contato, tenha um ótimo dia!",
        "Gracias por escribirnos, que tenga buen día.",
    ],
)
def test_a_closing_courtesy_keeps_the_decision_said_before_it(closing: str) -> None:
    """The agent's last message is often a courtesy that decides nothing (and it is
    the answer an app never sends back): the outcome is the newest decision before it."""
    got = card([], [user("Where is my order?"), agent("I will refund it."), agent(closing)])
    assert got.endswith("outcome: I will refund it")
    undecided = [user("Where is my order?"), agent("Let me look."), agent(closing)]
    assert card([], undecided).endswith(f"outcome: {NO_OUTCOME}")


def test_an_outcome_is_read_from_the_last_three_agent_messages_only() -> None:
    turns = [user("Where is my order?"), agent("I will refund it.")]
    turns += [agent(text) for text in ("Anything else?", "Are you there?", "Bye!")]
    assert card([], turns).endswith(f"outcome: {NO_OUTCOME}")


def test_an_outcome_that_is_the_whole_agent_message_is_cut_to_eight_words() -> None:
    closing = "Já fiz o estorno de R$ 89,90 no seu cartão final 4432 hoje."
    got = card([], [user("Fui cobrada duas vezes"), agent(closing)])
    assert got.endswith("outcome: Já fiz o estorno de R$ 89,90 no...")


def test_a_long_decision_gives_its_first_fifteen_words() -> None:
    closing = (
        "We have escalated your case to the logistics team who will call the carrier and "
        "the warehouse today"
    )
    got = card([], [user("Parcel lost"), agent(f"Sorry for the wait. {closing}. Bye!")])
    assert got.endswith(f"outcome: {' '.join(closing.split()[:15])}...")


def test_a_message_of_one_long_word_is_cut_in_half() -> None:
    link = "https://loja.example.com/pedidos/824883/rastreio?t=9f8e7d"  # 56 characters
    got = card([], [user(link)])
    assert f"topic: {link[:28]}... |" in got


def test_without_turns_the_running_summary_gives_topic_and_outcome() -> None:
    summary = (
        "customer: Hi. The blender I bought stopped working after a week.\n"
        "agent: Sorry about that. We will replace the blender at no cost."
    )
    got = card([], [], summary=summary)
    assert got == (
        "[phone, 2025-03-02] topic: The blender I bought stopped working after a week"
        " | outcome: We will replace the blender at no cost"
    )


@pytest.mark.parametrize("ended_at", [0.0, -5.0, float("nan"), float("inf"), 1e20])
def test_a_missing_or_impossible_end_leaves_the_day_out(ended_at: float) -> None:
    assert card([], [user("Cartão recusado")], ended_at=ended_at).startswith("[phone] topic:")


def test_values_keep_their_characters_and_lose_only_extra_whitespace() -> None:
    facts = [
        fact("email", "joão.silva+promo@exemplo.com.br"),
        fact("amount", "R$ 1.299,90"),
        fact("address", "Rua das Flores, 123\n  apto 45"),
        fact("sku", "SKU-88/AZ"),
    ]
    got = card(facts, [user("Troca do produto")])
    for value in ("joão.silva+promo@exemplo.com.br", "R$ 1.299,90", "SKU-88/AZ"):
        assert value in got
    assert "address Rua das Flores, 123 apto 45" in got
    assert "\n" not in got


def test_a_fact_whose_value_is_a_whole_message_is_left_out() -> None:
    address = "Avenida Boa Viagem 3300, apartamento 1202, Recife"  # the customer's whole turn
    facts = [fact("name", "Ana"), fact("address", address), fact("city", "Recife")]
    got = card(facts, [user("Quero mudar o endereço de entrega"), user(address)])
    assert "customer: name Ana; city Recife |" in got
    assert address not in got


def test_a_problem_fact_that_is_a_whole_message_is_shortened_as_topic() -> None:
    problem = "my card keeps getting declined at checkout since Monday"
    got = card([fact("problem", problem)], [user(problem)])
    assert "topic: my card keeps getting declined at checkout since..." in got


def test_kinds_show_in_a_fixed_order_and_values_of_a_kind_oldest_first() -> None:
    facts = [
        fact("order", "#1001", at=1),
        fact("city", "Porto Alegre", at=2),
        fact("order", "#1002", at=3),
        fact("name", "Bruna", at=4),
        fact("warranty", "2 anos", at=5),
    ]
    got = card(facts, [user("Dois pedidos atrasados")])
    assert (
        "customer: name Bruna; city Porto Alegre; order #1001; order #1002; warranty 2 anos" in got
    )


def test_fitting_gives_up_outcome_words_before_any_fact() -> None:
    full = card(DIEGO_FACTS, DIEGO_TURNS)
    tight = card(DIEGO_FACTS, DIEGO_TURNS, ceiling=tokens(full) - 8)
    assert tokens(tight) <= tokens(full) - 8
    kept, outcome = tight.split(" | outcome: ")
    assert full.startswith(f"{kept} | outcome: ")  # every fact still there
    assert outcome.startswith("já solicitei") and outcome.endswith("...")


def test_fitting_drops_older_values_of_a_kind_first_and_never_names() -> None:
    facts = [
        fact("name", "Diego", at=1),
        fact("order", "#111111", at=2),
        fact("order", "#222222", at=3),
        fact("city", "Recife", at=4),
    ]
    turns = [user("Dois pedidos não chegaram"), agent("Obrigado, aguarde.")]
    full = card(facts, turns)
    no_outcome = full.rsplit(" | outcome:", 1)[0]
    got = card(facts, turns, ceiling=tokens(no_outcome) - 1)
    assert "customer: name Diego; city Recife; order #222222" in got
    assert "#111111" not in got
    least = "[phone, 2025-03-02] topic: Dois pedidos não chegaram | customer: name Diego"
    assert card(facts, turns, ceiling=tokens(least)) == least


def test_a_deadline_goes_before_its_promise() -> None:
    facts = [fact("promise", "troca do aparelho"), fact("deadline", "sexta-feira")]
    full = card(facts, [user("Celular com defeito"), agent("Sem problemas.")])
    assert "agent promised: troca do aparelho by sexta-feira" in full
    got = card(
        facts, [user("Celular com defeito"), agent("Sem problemas.")], ceiling=tokens(full) - 9
    )
    assert got.endswith("agent promised: troca do aparelho")


def test_a_tiny_ceiling_still_fits() -> None:
    assert card(DIEGO_FACTS, DIEGO_TURNS, ceiling=0) == ""
    short = card(DIEGO_FACTS, DIEGO_TURNS, ceiling=12)
    assert 0 < tokens(short) <= 12
    assert short.endswith(" [...]")


def test_pieces_side_by_side_that_spell_a_message_are_shortened() -> None:
    echo = "customer: name Diego Albuquerque; city Recife"  # a customer pasting a card back
    facts = [fact("name", "Diego Albuquerque"), fact("city", "Recife")]
    got = card(facts, [user("Meu acesso caiu"), user(echo)])
    assert echo not in got
    assert "name Diego Albuquerque" in got


def test_messages_with_content_parts_are_read() -> None:
    turns = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "Hola. La factura 7781 vino sin NIF."}],
        },
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Listo, la factura corregida está en su correo."}],
        },
    ]
    got = card([], turns, channel="email")
    assert "topic: La factura 7781 vino sin NIF |" in got
    assert got.endswith("outcome: Listo")


# A turn as a customer or agent might type it, in the three languages, with the words
# the card looks for (greetings, decision cues) and the punctuation it splits on.
WORDS = [
    "oi",
    "olá",
    "hola",
    "hi",
    "bom dia",
    "buenas tardes",
    "pedido",
    "order",
    "#824883",
    "R$ 149,90",
    "refund",
    "reembolso",
    "já",
    "vou",
    "le enviamos",
    "ticket",
    "Diego",
    "Recife",
    "erro 500",
    "app",
    "não",
    "entrar",
    "the",
    "de",
    "que",
    "12/03",
    "amanhã",
]
SEPARATORS = [" ", " ", " ", ", ", ". ", "! ", "? ", "\n", "  ", " - "]


@st.composite
def spoken(draw: Any) -> str:
    words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=30))
    seps = draw(st.lists(st.sampled_from(SEPARATORS), min_size=len(words), max_size=len(words)))
    return "".join(w + s for w, s in zip(words, seps, strict=True)).strip() or "ok"


@st.composite
def conversation(draw: Any) -> tuple[list[dict[str, Any]], list[Fact], str]:
    texts = draw(st.lists(spoken(), min_size=0, max_size=20))
    turns = [user(t) if n % 2 == 0 else agent(t) for n, t in enumerate(texts)]
    kinds = ["name", "city", "address", "order", "amount", "problem", "promise", "deadline"]
    facts = []
    for n in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(kinds))
        if texts and draw(st.booleans()):
            source = draw(st.sampled_from(texts))  # a span of a turn, or all of it
            start = draw(st.integers(0, len(source) - 1))
            value = source[start : draw(st.integers(start + 1, len(source)))]
        else:
            value = draw(spoken())
        facts.append(fact(kind, value, at=float(n)))
    summary = "\n".join(
        f"{who}: {t}"
        for who, t in draw(
            st.lists(st.tuples(st.sampled_from(["customer", "agent"]), spoken()), max_size=3)
        )
    )
    return turns, facts, summary


COUNTERS: list[Callable[[str], int]] = [tokens, lambda s: len(s.split()), lambda s: len(s) // 3]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversation(), st.integers(20, 400))
def test_no_message_of_forty_characters_appears_whole(
    talk: tuple[list[dict[str, Any]], list[Fact], str], ceiling: int
) -> None:
    turns, facts, summary = talk
    got = card(facts, turns, summary=summary, ceiling=ceiling)
    for message in turns:
        text = str(message["content"]).strip()
        collapsed = " ".join(text.split())  # as the card writes it
        assert len(text) < WHOLE_CHARS or text not in got
        assert len(collapsed) < WHOLE_CHARS or collapsed not in got


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    conversation(),
    st.integers(20, 400),
    st.sampled_from(COUNTERS),
    st.sampled_from(["phone", "web chat\n"]),
)
def test_the_card_always_fits_its_ceiling(
    talk: tuple[list[dict[str, Any]], list[Fact], str],
    ceiling: int,
    count: Callable[[str], int],
    channel: str,
) -> None:
    turns, facts, summary = talk
    got = episode_card(channel, MARCH_2, facts, turns, summary, ceiling, count)
    assert count(got) <= ceiling
    assert got.startswith("[") or not got


def test_a_typical_twenty_turn_conversation_is_a_card_under_120_tokens() -> None:
    turns = [
        user("Oi, boa tarde! Comprei uma air fryer e ela chegou com a tampa quebrada."),
        agent(
            "Olá! Sinto muito por isso. Pode me informar seu nome completo e o número do pedido?"
        ),
        user("Claro, sou a Juliana Prado, pedido #824883."),
        agent("Obrigado, Juliana. Encontrei seu pedido. Pode me enviar uma foto da tampa?"),
        user("Enviei agora pelo app, está rachada na lateral."),
        agent("Recebi a foto, obrigado. Você prefere a troca do produto ou o reembolso?"),
        user("Prefiro a troca, mas preciso dela até sexta porque é presente."),
        agent("Entendi. Vou verificar o estoque no centro de distribuição de Campinas."),
        user("Tudo bem, aguardo."),
        agent("Temos o modelo AF-3500 preto em estoque. Confirma o endereço Rua Harmonia 210?"),
        user("Isso, Rua Harmonia 210, Vila Madalena, São Paulo."),
        agent("Perfeito. O frete da troca é por nossa conta."),
        user("E a que está quebrada, faço o quê?"),
        agent("O entregador retira a air fryer danificada no momento da entrega da nova."),
        user("Ótimo. Vai chegar até sexta mesmo?"),
        agent("A previsão é quinta-feira, 13/03, com prazo máximo na sexta, 14/03."),
        user("Beleza. Meu telefone para o entregador é (11) 98765-4321."),
        agent("Anotado no pedido. Também te enviei o código de rastreio por email."),
        user("Recebi, obrigada pela ajuda!"),
        agent("Pronto, Juliana, já registrei a troca no protocolo 2025-0042. Algo mais?"),
    ]
    facts = [
        fact("problem", "ela chegou com a tampa quebrada"),
        fact("name", "Juliana Prado"),
        fact("order", "#824883"),
        fact("sku", "AF-3500"),
        fact("address", "Rua Harmonia 210, Vila Madalena, São Paulo"),
        fact("phone", "(11) 98765-4321"),
        fact("promise", "troca do produto com frete por nossa conta"),
        fact("deadline", "14/03"),
    ]
    got = card(facts, turns, ceiling=WIDE)
    assert tokens(got) < 120
    assert "topic: ela chegou com a tampa quebrada" in got
    assert "outcome: já registrei a troca no protocolo 2025-0042" in got
    assert all(f.value in got for f in facts)


def test_a_heard_date_keeps_its_day_and_a_sum_said_in_words_its_figures() -> None:
    """Weeks later "yesterday" names another day: the card shows the day it named when
    said, as the facts block does; a sum said in words shows its figures."""
    turns = [
        user("the two charges were made yesterday, I never made them"),
        agent("I'm putting a credit of three hundred twelve dollars on your card today."),
    ]
    heard = extract_people_facts(turns, "phone", MARCH_2 + 5 * 3600)  # 12:20 UTC: a local hour
    said = card(heard, turns)
    assert "yesterday (2025-03-01)" in said, said
    assert "three hundred twelve dollars (USD 312.00)" in said, said
