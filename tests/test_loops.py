"""Loops and exit triggers: the detector on the labelled workload, and every action
through a running gateway with the openai SDK."""

from __future__ import annotations

import contextlib
import dataclasses
import http.server
import json
import threading
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import openai
import orjson
import pytest
from openai.types.chat import ChatCompletionMessageParam

from bench.loop_eval import chitchat, evaluate, first_escalation, first_streak, workload
from gateway.context.policy import DEFAULT_POLICY, load_policies
from gateway.loops import state as loop_state
from gateway.loops import words
from gateway.loops.detector import decide, observe_turn
from gateway.loops.pushback import pushes_back, restates
from gateway.loops.state import LoopState, escalated, merge_states, progressed
from gateway.loops.words import parse
from tests.conftest import UpstreamLog
from tests.inprocess import start_inprocess
from tests.servers import GatewayProc, edit_policy

SYSTEM = "You are the support agent of an online store."
LOOP_ASKS = [
    "Where is my order ORD-55555? It has not arrived yet.",
    "My order ORD-55555 still has not arrived, where is it?",
    "I am still waiting for order ORD-55555, where is it now?",
    "Can you tell me where order ORD-55555 is? It never arrived.",
    "Order ORD-55555 has not arrived. Where is it?",
]
SAME_ANSWER = [
    "Order ORD-55555 is in transit and should arrive within 3 to 5 business days.",
    "Your order ORD-55555 is on its way, expect it in 3 to 5 business days.",
    "ORD-55555 is in transit; it should be delivered in 3 to 5 business days.",
    "The order ORD-55555 has shipped and will arrive in 3 to 5 business days.",
    "Order ORD-55555 is in transit and should arrive within 3 to 5 business days.",
]


# No new fact after the first point but the email of the eighth: a new identifier
# (a case or confirmation number) would be progress.
DISPUTE_POINTS = [
    "I never authorized the charge of $89.90 on invoice INV-3001.",
    "The merchant name on my statement was unfamiliar to me.",
    "My bank already opened a chargeback case about it.",
    "I cancelled the subscription back in March, I am sure of it.",
    "The renewal email went to an address I no longer use.",
    "Your terms say renewals need explicit consent.",
    "I want the full amount returned to my card ending 4242.",
    "Please also close the account linked to marta@example.com.",
    "I expect a written confirmation of the reversal.",
]


# Seed 7 is neither a tuning seed (1-3) nor a reported held-out one (101, 102): these are
# floors under what bench/loop_eval.py measures, so a change that loses them fails here.
@pytest.mark.parametrize("language", ["pt", "en", "es"])
def test_detector_on_the_labelled_multilingual_workload(language: str) -> None:
    shipped = load_policies(DEFAULT_POLICY.parent).loop("-", "default")
    conversations = [c for c in workload([7], 450, ("pt", "en", "es")) if c.language == language]
    result = evaluate(conversations, shipped)
    assert result["loops"] >= 40, result
    assert result["precision"] >= 0.85 and result["recall"] >= 0.55, result
    assert result["false_alarm_rate"] <= 0.05, result
    assert result["median_delay"] <= 4, result


def test_real_conversations_are_not_escalated() -> None:
    """Real two-person chats (chitchat-dataset, the odd-numbered half: the even half was
    for tuning): none is a support loop, so every escalation would be a false alarm."""
    shipped = load_policies(DEFAULT_POLICY.parent).loop("-", "default")
    result = evaluate(chitchat("odd"), shipped)
    assert result["conversations"] > 3500
    assert result["false_alarm_rate"] <= 0.005, result


SETTINGS = load_policies(DEFAULT_POLICY.parent).loop("-", "default")  # the shipped ones
ONBOARDING = [  # a different question each turn, the same polite formulas around each answer
    (
        "como configuro o aviso automático?",
        "Compreendo sua preocupação. Para configurar o aviso automático, acesse "
        "Configurações > Notificações e ative a opção. Posso ajudar em algo mais?",
    ),
    (
        "tem algum vídeo explicando o painel?",
        "Compreendo sua preocupação. Sim, temos um tutorial em vídeo na central de ajuda, "
        "seção Painel, com cinco minutos. Posso ajudar em algo mais?",
    ),
    (
        "como convido os outros usuários?",
        "Compreendo sua preocupação. Vá em Equipe > Convidar e informe o e-mail de cada "
        "pessoa que vai usar o sistema. Posso ajudar em algo mais?",
    ),
    (
        "e como faço pra mudar a senha da minha conta?",
        "Compreendo sua preocupação. Em Perfil > Segurança clique em Alterar senha e "
        "confirme pelo código enviado. Posso ajudar em algo mais?",
    ),
]
REWORDED_LOOP = [  # the customer re-asks in other words, the agent re-answers in others
    (
        "oi, meu pedido 48213 ainda não chegou, onde está?",
        "Olá! Seu pedido 48213 está em trânsito e deve chegar em até 5 dias úteis. "
        "Posso ajudar em algo mais?",
    ),
    (
        "cadê minha encomenda? o pedido já devia ter chegado",
        "Compreendo. A encomenda segue em transporte e o prazo de entrega do pedido é de "
        "até 5 dias úteis.",
    ),
    (
        "mas quando chega afinal o pedido??",
        "Entendo sua frustração. O pedido está a caminho com a transportadora e chega em "
        "até 5 dias úteis.",
    ),
    (
        "vcs não respondem, onde está meu pedido 48213",
        "Seu pedido 48213 continua em trânsito, com entrega prevista em até 5 dias úteis.",
    ),
]


PUSHBACK_LOOP = [  # the customer pushes back, never re-asking in the first words; the
    # agent says its answer again in other words
    (
        "my internet has been down since this morning, is there an outage in my area?",
        "Yes, there is an outage in your area. Our technicians are on it and service should "
        "be back by 3 pm today.",
    ),
    (
        "it's 5pm and it's still down. you said 3pm",
        "Thanks for checking in! There is an outage affecting your area and our technicians "
        "are working to restore service as soon as possible.",
    ),
    (
        "ok but WHEN? you already told me that",
        "We apologise for the inconvenience. Technicians are working on the outage in your "
        "area and service will be restored as soon as possible.",
    ),
    (
        "do you have a time or not",
        "We appreciate your patience! Our technicians are working on the outage in your area "
        "to restore your service.",
    ),
]
PUSHBACK_MOVED_ON = (  # the same push back, answered with something new
    "do you have a time or not",
    "I've escalated it to the network team, ticket 4471920: a new part is on its way and "
    "the estimate is now 9 pm tonight. I'll text you once it is fixed.",
)
PUSHBACK_LOOP_PT = [
    (
        "comprei uma cafeteira e ela veio sem ligar, quero trocar",
        "Sinto muito! A troca de produto com defeito é feita no app, em Meus pedidos > Trocar, "
        "em até 7 dias após o recebimento.",
    ),
    (
        "fui lá e dá erro quando clico em trocar",
        "Pode ser uma instabilidade. A solicitação de troca fica em Meus pedidos, na opção "
        "Trocar, dentro do prazo de 7 dias.",
    ),
    (
        "já expliquei que dá erro, vcs podem abrir a troca por aqui?",
        "Entendo! As trocas são solicitadas pelo próprio cliente no app, em Meus pedidos, "
        "opção Trocar, no prazo de 7 dias.",
    ),
    (
        "ninguém resolve nada, quero falar com um atendente",
        "Compreendo. Lembrando que a troca é feita em Meus pedidos > Trocar, em até 7 dias "
        "do recebimento.",
    ),
]


def _loop_turns(turns: list[tuple[str, str]]) -> list[bool]:
    state, seen = LoopState(), []
    for user, reply in turns:
        state, is_loop = observe_turn(state, user, reply, SETTINGS)
        seen.append(is_loop)
        state = LoopState.from_json(state.to_json())  # as stored between turns
    return seen


def test_formulas_around_different_answers_are_not_a_loop() -> None:
    assert _loop_turns(ONBOARDING) == [False] * 4


def test_questions_about_one_order_answered_each_in_turn_are_not_a_loop() -> None:
    """The order every turn names is the conversation's subject, not a question asked
    again: each turn asks something else about it, and the replies share its amount."""
    turns = [
        ("order 175537 arrived broken, I want to exchange it",
         "Request the exchange under My orders > Return within 7 days; the label arrives "
         "by email, and the new one ships once the USD 35.99 item is back."),
        ("you billed me twice for order 175537",
         "The second amount of USD 35.99 is a temporary hold by your bank, not a charge; "
         "it clears in 5 business days."),
        ("my coupon didn't give me a discount on order 175537",
         "The coupon only works on full-price items and orders over USD 35.99, and can't "
         "be applied afterwards."),
        ("where's my refund for order 175537",
         "The refund of USD 35.99 has been requested and is processing; allow up to 5 "
         "business days."),
    ]  # fmt: skip
    assert _loop_turns(turns) == [False] * 4


def test_the_same_order_asked_about_again_is_still_a_loop() -> None:
    turns = [
        ("where is order 175537? it should have arrived",
         "Order 175537 left our warehouse on Monday and is with the carrier, due in 2-3 "
         "business days."),
        ("order 175537 still hasn't arrived, where is it?",
         "Your order 175537 is with the carrier and should arrive within 2-3 business days."),
        ("so where is order 175537 now? it hasn't arrived",
         "Order 175537 is in transit with the carrier; delivery takes 2-3 business days."),
    ]  # fmt: skip
    assert _loop_turns(turns)[1:] == [True, True]


def test_a_reworded_loop_is_found_from_its_first_re_ask() -> None:
    assert _loop_turns(REWORDED_LOOP) == [False, True, True, True]


def test_the_same_question_about_another_order_is_not_a_loop() -> None:
    turns = [
        (f"What is the status of order ORD-{n}? It has not arrived.",
         f"Order ORD-{n} is in transit and should arrive within 3 to 5 business days.")
        for n in (11111, 22222, 33333)
    ]  # fmt: skip
    assert _loop_turns(turns) == [False] * 3


def test_an_answer_that_moves_things_on_breaks_the_loop() -> None:
    moved = (
        "onde está meu pedido 48213? já perguntei",
        "Abri uma reclamação com a transportadora, protocolo 7781234, e a resposta sai amanhã.",
    )
    assert _loop_turns([*REWORDED_LOOP[:3], moved]) == [False, True, True, False]


def test_a_customer_pushing_back_at_an_answer_said_again_is_a_loop() -> None:
    """Real loops are seldom re-asked in the first question's words: the customer pushes
    back ("you already told me that", "or not") while the agent rewords its answer. Those
    turns are loop turns, in English and in Portuguese ("já expliquei", "ninguém
    resolve"), and the conversation is escalated; the same push back answered with
    something new (a ticket, a new time) is not."""
    assert _loop_turns(PUSHBACK_LOOP) == [False, True, True, True]
    assert _loop_turns(PUSHBACK_LOOP_PT)[2:] == [True, True]
    assert first_escalation(PUSHBACK_LOOP, SETTINGS) == 4  # noticed once turn 3 is answered
    assert first_escalation(PUSHBACK_LOOP_PT, SETTINGS) == 5  # once its last turn is
    assert _loop_turns([*PUSHBACK_LOOP[:1], PUSHBACK_MOVED_ON]) == [False, False]


PUSHING_BACK = [
    ("you already told me that", True),
    ("It still doesn't work.", True),
    ("this is the third time I'm asking", True),
    ("I want to talk to a real person", True),
    ("do you have an ETA or not", True),
    ("já tentei isso e continua sem funcionar", True),
    ("cadê meu dinheiro?", True),
    ("vou no Procon", True),
    ("¿Sí o no?", True),
    ("ya lo hice y sigue sin funcionar", True),
    ("nadie me responde", True),
    # being ignored, time gone by, a person asked for, the same answer named
    ("I told you, it's the wrong house", True),
    ("where is my order nobody is answering me properly", True),
    ("are you even reading what I write??", True),
    ("it's been 3 days and nothing", True),
    ("can I speak to a human please", True),
    ("já se passaram 5 dias e a conexão continua caindo", True),
    ("este é o terceiro e-mail sobre o mesmo assunto", True),
    ("a resposta é a mesma de antes", True),
    ("vcs são ridículos", True),
    ("ya han pasado las 72h", True),
    ("quiero hablar con una supervisora", True),
    ("dígame algo concreto, ¿una semana, un mes?", True),
    ("I already have an account with you", False),
    ("I want to talk to a friend about it first", False),
    ("it's been a great trip so far", False),
    ("já são duas da tarde aqui", False),
    ("Segundo e-mail que recebi, meu pedido chega amanhã?", False),
    ("Já são 15h, a loja ainda está aberta?", False),
    ("Posso falar com alguém sobre o plano empresarial?", False),
    ("O entregador te disse quando volta?", False),
    ("Ya llevo 2 meses con ustedes, ¿puedo cambiar de plan?", False),
    ("It's been 2 months since I joined, can I upgrade?", False),
    ("Can I order the same as last time?", False),
    ("Can I speak to someone about a business plan?", False),
    ("I said it was a gift", False),
    ("I have told you twice", True),
    ("no one\u2019s helping", True),
    ("It's been over a week", True),
    ("Já faz mais de 10 dias", True),
    ("Llevo tres días esperando", True),
    ("I still love the jacket, just need a bigger size", False),
    ("Where is my order?", False),
    ("quero trocar o endereço de entrega", False),
    ("¿Cuándo llega mi pedido?", False),
]
RESTATING = [
    ("As I mentioned, the order has already shipped.", True),
    ("Like I said, refunds take 5-10 business days.", True),
    ("As previously mentioned, we cannot change the address.", True),
    ("Como informado anteriormente, o prazo é de 30 dias.", True),
    ("Conforme já expliquei, a troca é feita pelo site.", True),
    ("Como le comenté, el paquete está en tránsito.", True),
    ("Como ya le habíamos indicado, el plazo es de 10 días.", True),
    ("Lembrando que nosso atendimento funciona das 8h às 20h.", False),
    ("Le recordamos que todas las solicitudes quedan registradas.", False),
    ("Your order has shipped and arrives Friday.", False),
    ("As you mentioned, the parcel was damaged.", False),
    ("Reiteramos nossas desculpas pelo transtorno.", False),
    ("Como explicado na nossa página de ajuda, a troca é grátis.", False),
    ("As mentioned in our terms, returns take 7 days.", False),
    ("As we mentioned, the refund is on its way.", True),
    ("Como já informamos, o prazo é de 10 dias.", True),
    ("Como le he comentado, el paquete está en tránsito.", True),
    ("Tal como se le ha informado, el plazo es de 10 días.", True),
]


@pytest.mark.parametrize(
    ("read", "text", "expected"),
    [(pushes_back, text, said) for text, said in PUSHING_BACK]
    + [(restates, text, said) for text, said in RESTATING],
)
def test_going_around_in_circles_is_read_in_each_language(
    read: Any, text: str, expected: bool
) -> None:
    """A customer pushing back (`pushes_back`), an agent restating (`restates`)."""
    assert read(text) is expected


def test_a_re_ask_answered_by_a_reply_that_says_it_restates_is_a_loop() -> None:
    """An agent rewording its answer shares few words with it; saying that it restates
    ("as I mentioned") tells what the words do not, once the customer asks again."""
    turns = [
        ("I moved, can I change the delivery address on order 331606?",
         "Address changes are only possible before shipping, and your order has already "
         "been sent."),
        ("I need the delivery address on my order changed, I moved",
         "As I mentioned, once an order is dispatched our system doesn't allow changing "
         "the destination."),
        ("can you change the delivery address please, I moved last week",
         "Like I said, since it is with the carrier already, where it goes can no longer "
         "be modified."),
    ]  # fmt: skip
    assert _loop_turns(turns) == [False, True, True]
    unsaid = [turns[0], *((user, reply.split(", ", 1)[1]) for user, reply in turns[1:])]
    assert _loop_turns(unsaid)[1:] != [True, True]  # the words alone do not tell


@pytest.mark.parametrize(
    ("thanks", "closing"),
    [
        (["Dear support team, Ok thanks. Thanks in advance, Sarah",
          "Hello, Thank you. Looking forward to your reply. Regards, Sarah",
          "Dear support team, Great, thanks! I look forward to hearing from you. Sarah",
          "Hi team, Cool, thank you. Thanks in advance, Sarah"],
         "Hello Sarah, You're welcome! Anything else I can help with? Warm regards."),
        (["Prezados, certo, obrigado. Aguardo retorno. Atenciosamente, Larissa",
          "Olá equipe, beleza, obrigada! Fico no aguardo do retorno. Larissa",
          "Prezados, ok, obrigado. Desde já agradeço. Larissa",
          "Prezados, certo, valeu. Aguardo o seu retorno. Larissa"],
         "Bom dia, Larissa! Por nada. Posso ajudar em algo mais?"),
        (["Hola: Perfecto, ¡gracias! Quedo a la espera de su respuesta. Saludos, Lucía",
          "Buenas tardes: Vale, gracias. Quedo atenta. Saludos, Lucía",
          "Estimado equipo, mil gracias. Gracias de antemano. Lucía",
          "Hola: Genial, gracias. Espero su respuesta. Saludos, Lucía"],
         "Buenos días, Lucía: ¡De nada! ¿Algo más en que le pueda ayudar?"),
    ],
)  # fmt: skip
def test_thanks_between_an_emails_opening_and_closing_is_not_a_loop(
    thanks: list[str], closing: str
) -> None:
    """ "Dear support team", "Thanks in advance", "Looking forward to your reply", "Aguardo
    retorno", "Quedo a la espera de su respuesta": how an email opens and closes, beside
    each thanks, is not a question asked again."""
    assert _loop_turns([(said, closing) for said in thanks]) == [False] * 4


@pytest.mark.parametrize(
    "said",
    [
        "I did not get a reply about my refund",
        "Still waiting for your reply about the refund of order 4471",
        "aguardo o reembolso há 10 dias",
        "espero su respuesta sobre el reembolso del pedido 4471",
        "Hi team, where is my order 4471?",
    ],
)
def test_a_question_beside_closing_words_is_still_read(said: str) -> None:
    """Only a sentence that is all an email's closing is left out, and only the opening
    words before a question: the question's own words stay."""
    words = [folded for sentence in parse(said) for _, folded in sentence]
    assert any(w.startswith(("refund", "reembolso", "order")) for w in words)


def test_courtesy_said_again_is_not_a_loop() -> None:
    turns = [("Thanks!", "You're welcome! Anything else I can help with?")] * 4
    assert _loop_turns(turns) == [False] * 4


@pytest.mark.parametrize(
    ("thanks", "closing"),
    [
        (["certo, obrigado", "beleza, obrigada", "certo, valeu, obrigado", "beleza, valeu"],
         "Imagina, Juliana! Estamos à disposição."),
        (["vale, gracias", "genial, gracias", "vale, genial, gracias", "genial, gracias"],
         "¡Con gusto, Lucía! Quedamos a su disposición."),
    ],
)  # fmt: skip
def test_thanks_in_portuguese_or_spanish_answered_by_one_closing_is_not_a_loop(
    thanks: list[str], closing: str
) -> None:
    """The stop-word lists of pt and es lack the courtesies the English one holds ("thanks",
    "ok"): without them each "obrigado" was content said again, answered word for word."""
    assert _loop_turns([(said, closing) for said in thanks]) == [False] * 4


@pytest.mark.parametrize(
    ("thanks", "closing"),
    [
        # an email's greeting and closing words around the thanks
        (["Prezados,\n\nCerto, obrigado.\n\nAtenciosamente, Larissa",
          "Prezada,\n\nBeleza, obrigada!\n\nAtenciosamente, Larissa",
          "Prezados,\n\nOk, obrigado.\n\nCordialmente, Larissa"],
         "Bom dia, Larissa,\n\nPor nada! Posso ajudar em algo mais?\n\nFico à disposição."),
        # the customer's name under each, the agent's "Happy to help, Ashley!"
        (["Hello,\n\nOk thanks.\n\nRegards, Ashley",
          "Hi,\n\nGreat, thanks!\n\nRegards, Ashley",
          "Hello,\n\nCool, thank you.\n\nRegards, Ashley"],
         "Dear Ashley,\n\nHappy to help, Ashley! Anything else?\n\nBest, Carla"),
    ],
)  # fmt: skip
def test_thanks_by_email_signed_and_answered_by_name_is_not_a_loop(
    thanks: list[str], closing: str
) -> None:
    """An email's greeting and closing ("Prezados", "Atenciosamente", "Regards") and the
    names of who is greeted or signs are who speaks, not what is asked: a thanks said
    again, answered by the same closing, asks nothing again."""
    assert _loop_turns([(said, closing) for said in thanks]) == [False] * 3


def test_a_re_ask_in_other_words_for_one_thing_is_a_loop() -> None:
    """ "Estorno" and "reembolso", "valor" and "dinheiro" are one thing each: the customer
    asks again in another word, the agent answers the same in others."""
    turns = [
        ("o estorno do pedido não caiu",
         "O valor volta para o seu cartão em até 10 dias úteis."),
        ("quando sai meu reembolso?",
         "O dinheiro volta para o seu cartão em até 10 dias úteis."),
        ("e esse reembolso sai quando?",
         "A quantia volta para o seu cartão em até 10 dias úteis."),
    ]  # fmt: skip
    assert _loop_turns(turns) == [False, True, True]


def test_a_re_ask_answered_from_another_turns_reply_is_a_loop() -> None:
    """The re-ask repeats the first turn's question, the reply the second turn's answer:
    no single earlier turn holds both, the window does."""
    turns = [
        ("my package never arrived, where is it?",
         "Your package left our warehouse on Monday with the courier."),
        ("the tracking page shows nothing since monday",
         "The courier scan shows it in transit to your city; delivery is due within 3 "
         "business days."),
        ("where is my package? it never arrived",
         "It is in transit to your city and due within 3 business days."),
        ("the package still has not arrived, where is it",
         "Delivery to your city is due within 3 business days; it is in transit."),
    ]  # fmt: skip
    assert _loop_turns(turns) == [False, False, True, True]


def test_loop_turns_among_the_last_few_escalate_when_within_says_so() -> None:
    """Re-ask, an unrelated question, re-ask: two loop turns of the last three. `within: 3`
    escalates on the next turn; `within: 2` (in a row) does not."""
    turns = [
        *REWORDED_LOOP[:2],
        ("e o frete, quanto custa?", "O frete é grátis em compras acima de R$ 200,00."),
        REWORDED_LOOP[2],
    ]
    state, seen = LoopState(), []
    for user, reply in turns:
        state, is_loop = observe_turn(state, user, reply, SETTINGS)
        seen.append(is_loop)
    assert seen == [False, True, False, True]
    stored = LoopState.counters(state.to_json())
    in_a_row = dataclasses.replace(SETTINGS, consecutive=2, within=2)
    two_of_three = dataclasses.replace(SETTINGS, consecutive=2, within=3)
    assert decide(stored, 5, 100, 100, in_a_row).escalation is None
    assert decide(stored, 5, 100, 100, two_of_three).escalation == "loop"


def test_loop_turns_of_two_writers_add_up_and_an_older_record_keeps_its_streak() -> None:
    settings = dataclasses.replace(SETTINGS, consecutive=2, within=2)
    base = observe_turn(LoopState(), *REWORDED_LOOP[0], settings)[0]
    mine = observe_turn(base, *REWORDED_LOOP[1], settings)[0]
    theirs = observe_turn(base, *REWORDED_LOOP[2], settings)[0]
    assert mine.recent == theirs.recent == 1
    merged = LoopState.counters(
        merge_states(base.to_json(), mine.to_json(), theirs.to_json(), added=1)
    )
    assert merged.recent == 0b11 and decide(merged, 4, 100, 100, settings).escalation == "loop"
    older = {"streak": 2, "loop_turns": 2}  # stored before `recent` was kept
    assert decide(LoopState.counters(older), 4, 100, 100, settings).escalation == "loop"


def test_the_benchmark_counts_a_loop_when_its_last_turn_is_answered() -> None:
    """bench/loop_eval.py counts as the gateway does: a conversation that ends right after
    its second loop turn is escalated (at the turn after its last), as the gateway records
    it once that turn is answered; and its threshold sweep agrees."""
    turns = list(zip(LOOP_ASKS[:3], SAME_ANSWER[:3], strict=True))
    assert first_escalation(turns, SETTINGS) == 4
    assert first_escalation(turns[:2], SETTINGS) is None  # one loop turn: not yet
    assert first_streak([False, True, True], 2) == 4
    assert first_streak([False, True, False], 2) is None


def test_one_loop_finished_by_two_turns_at_once_is_one_escalation() -> None:
    """Two replicas each answer a turn of one conversation, and each turn finishes the
    same loop: each records it; the merged record counts it once and keeps it pending."""
    from prometheus_client import CollectorRegistry

    from gateway.context.conversation_record import ConversationRecord
    from gateway.context.record_merge import merge
    from gateway.loops.escalation import Escalations
    from gateway.ops.metrics import GatewayMetrics

    escalations = Escalations(
        load_policies(DEFAULT_POLICY.parent), GatewayMetrics(CollectorRegistry())
    )
    record = ConversationRecord(id="c", tenant="t", conversation_class="support")

    def answered(r: ConversationRecord, ask: str, answer: str) -> None:
        escalations.observe(r, [{"role": "user", "content": ask}], answer, False)
        r.turns += 1

    for ask, answer in zip(LOOP_ASKS[:2], SAME_ANSWER[:2], strict=True):
        answered(record, ask, answer)
    assert record.escalations == 0  # one loop turn so far
    base = {k: orjson.dumps(v) for k, v in record.to_fields().items()}
    mine, theirs = dataclasses.replace(record), dataclasses.replace(record)
    answered(mine, LOOP_ASKS[2], SAME_ANSWER[2])
    answered(theirs, LOOP_ASKS[3], SAME_ANSWER[3])
    assert mine.escalations == theirs.escalations == 1
    stored = merge(base, mine.to_fields(), theirs.to_fields())
    assert stored["escalations"] == 1 and stored["escalation_pending"] == "loop"
    # a record stored before the field existed: a writer's null does not erase "loop"
    older = {k: v for k, v in base.items() if k != "escalation_pending"}
    later = dataclasses.replace(record, escalation_pending=None)
    assert merge(older, later.to_fields(), theirs.to_fields())["escalation_pending"] == "loop"


def test_a_progress_event_merged_with_a_loop_turn_starts_the_count_again() -> None:
    """The app reports progress (no turn added) while another writer folds a loop turn:
    the progress resets the count, as it did the streak, even when the last turn had
    escalated (the progress turn then stays where the escalation put it)."""
    settings = dataclasses.replace(SETTINGS, consecutive=2, within=2)
    state = LoopState()
    for turn in REWORDED_LOOP[:2]:
        state = observe_turn(state, *turn, settings)[0]
    base = observe_turn(escalated(state, 3), *REWORDED_LOOP[2], settings)[0]
    mine = progressed(base, 3)
    theirs = observe_turn(base, *REWORDED_LOOP[3], settings)[0]
    merged = LoopState.counters(
        merge_states(base.to_json(), mine.to_json(), theirs.to_json(), added=0)
    )
    assert merged.recent == 0 and merged.streak == 0
    assert decide(merged, 5, 100, 100, settings).escalation is None


def test_the_stored_state_stays_small_and_survives_an_older_layout() -> None:
    state = LoopState()
    for n in range(200):
        user, reply = REWORDED_LOOP[n % 4] if n % 3 else ONBOARDING[n % 4]
        state, _ = observe_turn(state, f"{user} ({n})", reply * 3, SETTINGS)
    stored = orjson.dumps(state.to_json())
    assert len(stored) < 8_000, len(stored)
    assert LoopState.from_json(orjson.loads(stored)) == state
    # read back as another replica would, with no window of its own packing remembered
    assert loop_state._decode_window(orjson.loads(stored)["window"]) == state.turns
    older = {"users": [[[1, 2], []]], "replies": [[[3], []]], "streak": 1, "loop_turns": 4}
    assert LoopState.from_json(older).loop_turns == 4


def _turn(
    gw: GatewayProc,
    messages: list[ChatCompletionMessageParam],
    text: str,
    reply: str | None,
    conv: str,
    stream: bool = False,
    **headers: str,
) -> tuple[str, dict[str, str]]:
    client = openai.OpenAI(base_url=gw.v1, api_key=gw.keys["acme"], max_retries=0)
    messages.append({"role": "user", "content": text})
    extra = {
        "X-Conversation-Id": conv,
        "X-Simulator-Log-Messages": "1",
        "X-Simulator-Test-Conv": conv,
        **headers,
    }
    if reply:
        extra["x-simulator-reply"] = reply
    if stream:
        with client.chat.completions.with_streaming_response.create(
            model="gpt-4o-mini", messages=messages, stream=True, extra_headers=extra
        ) as response:
            seen = {k.lower(): v for k, v in response.headers.items()}
            content = "".join(
                c.choices[0].delta.content or "" for c in response.parse() if c.choices
            )
    else:
        raw = client.chat.completions.with_raw_response.create(
            model="gpt-4o-mini", messages=messages, extra_headers=extra
        )
        seen = {k.lower(): v for k, v in raw.headers.items()}
        content = raw.parse().choices[0].message.content or ""
    messages.append({"role": "assistant", "content": content})
    return content, seen


def _loop(gw: GatewayProc, conv: str, stream: bool = False) -> list[tuple[str, dict[str, str]]]:
    messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": SYSTEM}]
    out = [
        _turn(gw, messages, "Hi, I changed my phone number to 5550101.", None, conv, stream),
        _turn(gw, messages, "Also my loyalty card is LC-7788, is it linked?", None, conv, stream),
    ]
    for ask, answer in zip(LOOP_ASKS, SAME_ANSWER, strict=True):
        out.append(_turn(gw, messages, ask, answer, conv, stream))
    return out


def test_a_scripted_loop_escalates_at_the_configured_turn(sqlite_gateway: GatewayProc) -> None:
    turns = _loop(sqlite_gateway, "loop-signal")
    escalations = [h.get("x-gateway-escalation") for _, h in turns]
    # turns 3 (first ask) .. 7: the loop starts at turn 4; turns 4 and 5 are loop turns, so
    # the loop is recorded once turn 5 is answered and turn 6 carries the signal; the
    # state resets and the loop goes on: turns 6 and 7 are loop turns again, recorded
    # once turn 7 is answered, the signal pending for a turn 8.
    assert escalations == [None, None, None, None, None, "loop", None]
    state = httpx.get(
        f"{sqlite_gateway.v1}/conversations/loop-signal",
        headers={"Authorization": f"Bearer {sqlite_gateway.keys['acme']}"},
    ).json()
    assert state["escalation"] == "loop" and state["escalations"] == 2
    assert state["escalation_pending"] == "loop"
    metrics = sqlite_gateway.admin("/metrics").text
    assert 'gateway_conversation_escalations_total{class="support",reason="loop"} 2.0' in metrics


def test_a_customer_pushing_back_is_escalated_through_the_gateway(
    sqlite_gateway: GatewayProc,
) -> None:
    """The push-back loop, played through the gateway with the SDK: once its third turn
    is answered the loop is recorded, and the next turn carries the signal."""
    messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": SYSTEM}]
    seen = [
        _turn(sqlite_gateway, messages, user, reply, "pushback-1")[1].get("x-gateway-escalation")
        for user, reply in PUSHBACK_LOOP
    ]
    assert seen == [None, None, None, "loop"]


def test_a_loop_signed_with_a_first_name_known_in_full_still_escalates(
    sqlite_gateway: GatewayProc,
) -> None:
    """The customer's facts hold "Siobhan Marsh" from an earlier conversation; in this
    one she signs each message "Siobhan". That name is the one she has, nothing learned
    on each turn: it is no progress, and her loop is escalated as an unsigned one is."""
    first: list[ChatCompletionMessageParam] = [{"role": "system", "content": SYSTEM}]
    hello = "hi, this is Siobhan Marsh, I'd like to upgrade my plan"
    customer = {"X-Customer-Id": "cust-signed"}
    _turn(sqlite_gateway, first, hello, None, "signed-0", False, **customer)
    messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": SYSTEM}]
    seen = [
        _turn(
            sqlite_gateway,
            messages,
            f"{user}\n\nThanks,\nSiobhan",
            reply,
            "signed-1",
            False,
            **customer,
        )[1].get("x-gateway-escalation")
        for user, reply in PUSHBACK_LOOP
    ]
    assert seen == [None, None, None, "loop"]


@pytest.mark.parametrize("moved_on", ["event", "confirmed fact"])
def test_a_loop_the_customer_leaves_right_after_is_escalated(
    sqlite_gateway: GatewayProc, moved_on: str
) -> None:
    """The customer asks again twice, gets the same answer twice and writes no more: the
    loop is known once its second loop turn is answered, so it is recorded, counted and
    shown then; no next turn is needed for it. The app then says the conversation moved
    on (a progress event, or a fact of the customer's it confirms): the pending action
    is dropped, and the next turn carries no escalation."""
    conv, customer = f"loop-left-{moved_on[0]}", f"cust-left-{moved_on[0]}"
    messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": SYSTEM}]
    auth = {"Authorization": f"Bearer {sqlite_gateway.keys['acme']}"}
    who = {"X-Customer-Id": customer}
    seen = []
    for n, (ask, answer) in enumerate(zip(LOOP_ASKS[:3], SAME_ANSWER[:3], strict=True)):
        _, headers = _turn(sqlite_gateway, messages, ask, answer, conv, False, **who)
        seen.append(headers.get("x-gateway-escalation"))
        state = httpx.get(f"{sqlite_gateway.v1}/conversations/{conv}", headers=auth).json()
        assert state["escalations"] == (1 if n == 2 else 0), (n, state)
    assert seen == [None, None, None]  # the answered turns were sent as they came
    assert state["escalation"] == "loop" and state["escalation_pending"] == "loop"
    if moved_on == "event":
        moved = httpx.post(
            f"{sqlite_gateway.v1}/conversations/{conv}/events",
            json={"type": "progress"},
            headers=auth,
        )
        assert moved.status_code == 200 and moved.json()["escalation_pending"] is None
    else:
        fact = {"text": "replacement for ORD-55555 agreed", "confirmed": True}
        put = httpx.put(
            f"{sqlite_gateway.v1}/customers/{customer}/facts", json={"facts": [fact]}, headers=auth
        )
        assert put.status_code == 200, put.text
    _, headers = _turn(sqlite_gateway, messages, "Ok, and my invoice?", None, conv, False, **who)
    assert headers.get("x-gateway-escalation") is None
    state = httpx.get(f"{sqlite_gateway.v1}/conversations/{conv}", headers=auth).json()
    assert state["escalation_pending"] is None and state["escalations"] == 1


def test_an_app_putting_back_the_same_confirmed_fact_each_turn_does_not_end_loops(
    sqlite_gateway: GatewayProc,
) -> None:
    """An app that syncs its CRM profile before each turn PUTs the same confirmed fact
    again: each PUT read as the app confirming something, progress, so the loop streak
    and the pending escalation were dropped every turn and no loop ever escalated. A
    fact put again unchanged is no news."""
    conv, customer = "loop-synced", "cust-synced"
    messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": SYSTEM}]
    auth = {"Authorization": f"Bearer {sqlite_gateway.keys['acme']}"}
    profile = {"id": "tier", "text": "Customer tier: gold", "confirmed": True}

    def synced() -> None:
        put = httpx.put(
            f"{sqlite_gateway.v1}/customers/{customer}/facts",
            json={"facts": [profile]},
            headers=auth,
        )
        assert put.status_code == 200, put.text

    who = {"X-Customer-Id": customer}
    for ask, answer in zip(LOOP_ASKS[:3], SAME_ANSWER[:3], strict=True):
        synced()
        _turn(sqlite_gateway, messages, ask, answer, conv, False, **who)
    state = httpx.get(f"{sqlite_gateway.v1}/conversations/{conv}", headers=auth).json()
    assert state["escalations"] == 1 and state["escalation_pending"] == "loop"
    synced()
    _, headers = _turn(sqlite_gateway, messages, "So?", None, conv, False, **who)
    assert headers.get("x-gateway-escalation") == "loop"


def test_a_retry_of_the_escalated_turn_is_escalated_again_and_counted_once(
    sqlite_gateway: GatewayProc,
) -> None:
    """The turn that applies a loop's action is answered, but its client gave up waiting
    (a timeout) and the SDK sends it again (`x-stainless-retry-count: 1`): the retry's
    answer, the only one the customer sees, carried no `X-Gateway-Escalation`, and the
    escalation was spent on an answer nobody read. The retry escalates as the turn it
    repeats did; it is counted once."""
    conv, customer = "loop-retried", "cust-loop-retried"
    messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": SYSTEM}]
    auth = {"Authorization": f"Bearer {sqlite_gateway.keys['acme']}"}
    who = {"X-Customer-Id": customer}
    for ask, answer in zip(LOOP_ASKS[:3], SAME_ANSWER[:3], strict=True):
        _turn(sqlite_gateway, messages, ask, answer, conv, False, **who)
    _, headers = _turn(sqlite_gateway, messages, "So?", None, conv, False, **who)
    assert headers.get("x-gateway-escalation") == "loop"
    client = openai.OpenAI(base_url=sqlite_gateway.v1, api_key=sqlite_gateway.keys["acme"])
    retried = client.chat.completions.with_raw_response.create(
        model="gpt-4o-mini",
        messages=messages[:-1],  # the same request again, as the SDK resends it
        extra_headers={"X-Conversation-Id": conv, **who, "x-stainless-retry-count": "1"},
    )
    assert retried.headers.get("x-gateway-escalation") == "loop"
    state = httpx.get(f"{sqlite_gateway.v1}/conversations/{conv}", headers=auth).json()
    assert state["escalations"] == 1 and state["turns"] == 4


def _with_policy(gw: GatewayProc, change: dict[str, Any]) -> None:
    edit_policy(gw.root, change)
    gw.restart()


@pytest.mark.parametrize("stream", [False, True])
def test_handoff_answers_without_the_model_and_books_zero(
    sqlite_gateway: GatewayProc, upstream_log: UpstreamLog, stream: bool
) -> None:
    _with_policy(
        sqlite_gateway,
        {
            "classes.support.escalation_action": "handoff",
            "classes.support.handoff_message": "A colleague will take over now.",
        },
    )
    turns = _loop(sqlite_gateway, f"loop-handoff-{stream}", stream=stream)
    content, headers = turns[5]
    assert headers["x-gateway-escalation"] == "loop"
    assert content == "A colleague will take over now."
    mine = [
        e
        for e in upstream_log.since()
        if e["headers"].get("x-simulator-test-conv") == f"loop-handoff-{stream}"
    ]
    assert len(mine) == 6  # the handoff turn never reached the model
    ledger = sqlite_gateway.admin("/admin/ledger").json()["records"]
    handoff = [r for r in ledger if r["route"] == "handoff"]
    assert len(handoff) == 1 and Decimal(handoff[0]["cost_usd"]) == 0
    assert handoff[0]["fresh_input_tokens"] == handoff[0]["output_tokens"] == 0


def test_instruct_asks_the_model_to_offer_a_human(
    sqlite_gateway: GatewayProc, upstream_log: UpstreamLog
) -> None:
    _with_policy(sqlite_gateway, {"classes.support.escalation_action": "instruct"})
    turns = _loop(sqlite_gateway, "loop-instruct", stream=False)
    assert turns[5][1]["x-gateway-escalation"] == "loop"
    sent = [
        e
        for e in upstream_log.since()
        if e["headers"].get("x-simulator-test-conv") == "loop-instruct"
    ]
    assert len(sent) == 7  # the model still answers
    last = sent[5]["messages"][-1]
    assert last["role"] == "system" and "handoff to a human" in last["content"]
    assert all("handoff to a human" not in str(m) for m in sent[4]["messages"])


def test_dispute_past_its_ceiling_without_progress_escalates_and_progress_prevents_it(
    sqlite_gateway: GatewayProc,
) -> None:
    """Progress is an event the app posts, or a fact of the customer it confirms
    (PUT /v1/customers/{id}/facts) between turns; without either, the ceiling escalates,
    with or without a customer id."""
    auth = {"Authorization": f"Bearer {sqlite_gateway.keys['acme']}"}
    for conv, customer, progress in (
        ("dispute-stuck", None, None),
        ("dispute-stuck-customer", "cust-stuck", None),
        ("dispute-moving", None, "event"),
        ("dispute-confirmed", "cust-confirms", "facts"),
    ):
        messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": SYSTEM}]
        who = {"X-Customer-Id": customer} if customer else {}
        seen = []
        for n, point in enumerate(DISPUTE_POINTS, start=1):
            _, headers = _turn(
                sqlite_gateway,
                messages,
                f"Point {n}: {point}",
                None,
                conv,
                stream=False,  # named, so mypy knows the header dict below cannot fill it
                **{"X-Conversation-Class": "dispute", **who},
            )
            seen.append(headers.get("x-gateway-escalation"))
            if progress == "event":
                httpx.post(
                    f"{sqlite_gateway.v1}/conversations/{conv}/events",
                    json={"type": "progress"},
                    headers=auth,
                )
            elif progress == "facts":
                fact = {"text": f"refund step {n} agreed", "confirmed": True}
                put = httpx.put(
                    f"{sqlite_gateway.v1}/customers/{customer}/facts",
                    json={"facts": [fact]},
                    headers=auth,
                )
                assert put.status_code == 200, put.text
        if progress:
            assert seen == [None] * 9, (conv, seen)
        else:  # ceiling 6, no progress in the last 3 turns: turn 7, then 4 turns later
            assert seen.index("turn_ceiling") == 6 and seen.count("turn_ceiling") == 1, conv


def test_a_long_progressing_conversation_does_not_escalate(sqlite_gateway: GatewayProc) -> None:
    messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": SYSTEM}]
    seen = []
    for n in range(30):
        _, headers = _turn(
            sqlite_gateway,
            messages,
            f"Next, item SKU-{1000 + n}: can you add it to order ORD-{20000 + n}?",
            None,
            "progressing",
        )
        seen.append(headers.get("x-gateway-escalation"))
    assert seen == [None] * 30


@contextlib.contextmanager
def webhooks_to(gw: GatewayProc) -> Iterator[list[dict[str, Any]]]:
    """A webhook receiver on a loopback port, set as the tenant acme's: the events it
    received, in order."""
    received: list[dict[str, Any]] = []

    class Hook(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        _with_policy(gw, {"webhooks": {"acme": f"http://127.0.0.1:{server.server_port}/hook"}})
        yield received
    finally:
        server.shutdown()
        server.server_close()


def test_the_tenant_webhook_gets_the_event(sqlite_gateway: GatewayProc) -> None:
    with webhooks_to(sqlite_gateway) as received:
        _loop(sqlite_gateway, "loop-webhook")
        for _ in range(50):
            if received:
                break
            threading.Event().wait(0.1)
        assert received and received[0]["reason"] == "loop"
        assert received[0]["conversation"] == "loop-webhook" and received[0]["tenant"] == "acme"
        assert len(received[0]["id"]) == 24  # one id per escalation, to drop a second send


def test_progress_event_validation(sqlite_gateway: GatewayProc, tmp_path: Path) -> None:
    auth = {"Authorization": f"Bearer {sqlite_gateway.keys['acme']}"}
    bad = httpx.post(
        f"{sqlite_gateway.v1}/conversations/nope/events", json={"type": "x"}, headers=auth
    )
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "type"
    missing = httpx.post(
        f"{sqlite_gateway.v1}/conversations/nope/events", json={"type": "progress"}, headers=auth
    )
    assert missing.status_code == 404


def _escalations(gw: GatewayProc, said: list[str], conv: str, **headers: str) -> list[str | None]:
    """The escalation header of each turn of a conversation saying `said` in turn."""
    messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": SYSTEM}]
    return [
        _turn(gw, messages, text, None, conv, stream=False, **headers)[1].get(
            "x-gateway-escalation"
        )
        for text in said
    ]


def test_a_dispute_that_keeps_bringing_new_facts_is_progressing(
    sqlite_gateway: GatewayProc,
) -> None:
    said = [
        f"Here is another disputed charge: invoice INV-{4000 + n} for ${10 + n}.50."
        for n in range(1, 10)
    ]
    headers = {"X-Conversation-Class": "dispute", "X-Customer-Id": "cust-disputes"}
    assert "turn_ceiling" not in _escalations(sqlite_gateway, said, "dispute-facts", **headers)


def test_a_customer_going_round_the_same_orders_is_not_progressing(
    sqlite_gateway: GatewayProc,
) -> None:
    """Six orders asked about in turn, then the same six again: an order named again
    within the customer's last ten messages is nothing learned (`turn_facts.new_to`),
    whether or not its kind's bound dropped it meanwhile (it keeps KEEP_PER_KIND): the
    conversation is escalated, not taken for one that moves on. (More orders than six
    go round past the loop detector's window, where a re-asked order moves things on.)"""
    n = 6
    said = [
        f"Where is my order {48211 + 7 * (t % n)}? It was never delivered." for t in range(2 * n)
    ]
    seen = _escalations(sqlite_gateway, said, "orders-round", **{"X-Customer-Id": "cust-round"})
    assert seen[:n] == [None] * n and "loop" in seen[n:]


def test_a_question_asked_again_with_a_new_complaint_each_time_is_a_loop() -> None:
    """The customer's repeated question is not learned as a formula while the bot answers
    the same: only the complaint around it changes."""
    ask = "Where is my order ORD-482135?"
    answer = "Your order ORD-482135 is in transit and arrives within five business days."
    turns = [("Hi", "Hello, how can I help?")] + [
        (f"{ask} {complaint}", answer)
        for complaint in ("It has been ten days.", "Hello??", "Answer me.", "Come on.")
    ]
    assert _loop_turns(turns) == [False, False, True, True, True]


@pytest.mark.parametrize(
    "stored",
    [
        "not a dict",
        {"streak": "x"},
        {"tally": ["pt"], "streak": 1},
        {"tally": {"pt": "many"}, "window": "AAAA"},
        {"window": "!!not base64!!", "formulas": "AAA", "streak": 2},
        {"window": "AQAAAP////8=", "loop_turns": 3},  # a count larger than what follows
        {"recent": -1, "streak": 0},  # no loop turns made up from a negative number
    ],
)
def test_an_unreadable_stored_state_starts_again(stored: Any) -> None:
    state = LoopState.from_json(stored)
    assert state.turns == () and state.formulas == ()
    assert state.recent == (1 << state.streak) - 1  # the stored streak's run, or none
    state, _ = observe_turn(state, *REWORDED_LOOP[0], SETTINGS)
    assert len(state.turns) == 1


def _three_loop_turns(
    client: openai.OpenAI, conv: dict[str, str], after_each: Callable[[], None] | None = None
) -> list[ChatCompletionMessageParam]:
    """A loop's first three turns, answered the same each time (its second and third
    are loop turns: recorded, the action pending); `after_each` runs after each turn."""
    messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": SYSTEM}]
    for ask, answer in zip(LOOP_ASKS[:3], SAME_ANSWER[:3], strict=True):
        messages.append({"role": "user", "content": ask})
        reply = client.chat.completions.create(
            model="gpt-4o-mini",
            messages=messages,
            extra_headers={**conv, "x-simulator-reply": answer},
        )
        messages.append({"role": "assistant", "content": reply.choices[0].message.content})
        if after_each is not None:
            after_each()
    return messages


def test_a_failed_turn_does_not_use_up_the_escalation(tmp_path: Path) -> None:
    """The upstream times out on the turn that carries a loop's escalation: the action is
    not used up (recorded once the loop's last turn was answered, it stays pending), and
    the retry carries it; nothing is counted twice."""
    gw = start_inprocess(tmp_path, f"sqlite:///{tmp_path}/g.db", upstream={"timeout_s": 0.5})
    try:
        client = gw.openai()
        conv = {"X-Conversation-Id": "loop-timeout"}
        messages = _three_loop_turns(client, conv)
        messages.append({"role": "user", "content": LOOP_ASKS[3]})
        with pytest.raises(openai.APIStatusError) as failed:
            client.chat.completions.create(
                model="gpt-4o-mini",
                messages=messages,
                extra_headers={**conv, "x-simulator-delay-ms": "1500"},
            )
        assert failed.value.status_code == 504
        auth = {"Authorization": f"Bearer {gw.keys['acme']}"}
        state = gw.http.get(f"{gw.v1}/conversations/loop-timeout", headers=auth).json()
        # recorded once its second loop turn was answered; the action is still pending
        assert state["escalations"] == 1 and state["escalation_pending"] == "loop"
        retry = client.chat.completions.with_raw_response.create(
            model="gpt-4o-mini", messages=messages, extra_headers=conv
        )
        assert retry.headers["x-gateway-escalation"] == "loop"
        state = gw.http.get(f"{gw.v1}/conversations/loop-timeout", headers=auth).json()
        assert state["escalations"] == 1 and state["escalation_pending"] is None
    finally:
        gw.stop()


def test_a_loop_noticed_before_a_long_pause_is_not_acted_on_after_it(tmp_path: Path) -> None:
    """A loop is recorded once its last turn is answered, its action pending for the
    next turn. The customer came back five days later about something else ("the refund
    came, now my address") and got the loop's action: its signal, or with `handoff` the
    canned handoff text and no answer. Past an hour the pending action is dropped."""
    gw = start_inprocess(tmp_path, f"sqlite:///{tmp_path}/g.db")
    try:
        clock = [1_790_000_000.0]
        gw.gateway.turn_clock = lambda: clock[0]
        client = gw.openai()
        conv = {"X-Conversation-Id": "loop-pause"}

        def half_a_minute_on() -> None:
            clock[0] += 30

        messages = _three_loop_turns(client, conv, half_a_minute_on)
        auth = {"Authorization": f"Bearer {gw.keys['acme']}"}
        state = gw.http.get(f"{gw.v1}/conversations/loop-pause", headers=auth).json()
        assert state["escalations"] == 1 and state["escalation_pending"] == "loop"
        clock[0] += 5 * 86_400
        messages.append({"role": "user", "content": "It arrived, thanks! Can I add a gift note?"})
        later = client.chat.completions.with_raw_response.create(
            model="gpt-4o-mini", messages=messages, extra_headers=conv
        )
        assert "x-gateway-escalation" not in later.headers
        state = gw.http.get(f"{gw.v1}/conversations/loop-pause", headers=auth).json()
        assert state["escalations"] == 1 and state["escalation_pending"] is None
    finally:
        gw.stop()


# --- pt rewording (loops-pt branch) ---
# An agent's long notice, said after each short answer: a formula from its second time on
# (written for these tests, not taken from any workload).
NOTICE_PT = (
    "Informamos que nosso horário de atendimento telefônico vai de segunda a sexta, das "
    "nove às dezoito horas, exceto feriados nacionais e estaduais."
)
SHORT_ANSWERS_PT = (
    (
        "Qual é o prazo para trocar um produto com defeito?",
        "A troca de produtos com defeito pode ser pedida em até noventa dias após o recebimento.",
    ),
    (
        "Vocês entregam em Manaus?",
        "Sim, enviamos para todo o Brasil, inclusive Manaus, pela transportadora parceira.",
    ),
    (
        "Posso pagar com pix?",
        "Pode sim: o pix aparece como opção na tela de pagamento e confirma na hora.",
    ),
)


def test_a_long_notice_around_short_new_answers_is_a_formula() -> None:
    """A notice longer than the new answer beside it, said again, is no content from its
    second time on: the second reply is not read as the first one again."""
    from gateway.loops.detector import read_turn  # imported here: this block stays at the end

    state = LoopState()
    covered = []
    for ask, answer in SHORT_ANSWERS_PT:
        state, turn = read_turn(state, ask, f"{answer} {NOTICE_PT}", SETTINGS)
        state = state.observed(turn.user, turn.reply, turn.repeats(SETTINGS))
        covered.append(turn.reply_repeated())
    assert max(covered[1:]) < 0.5
    assert state.loop_turns == 0


def test_a_long_answer_said_again_with_little_beside_it_stays_content() -> None:
    """The same answer said again with only a short apology beside it is no formula: a
    re-ask answered so is a loop turn."""
    answer = (
        "O estorno foi solicitado ao banco e o valor volta para o seu cartão em até sete "
        "dias úteis depois da aprovação da operadora."
    )
    state, _ = observe_turn(LoopState(), "Cadê o estorno da minha compra?", answer, SETTINGS)
    state, is_loop = observe_turn(
        state, "E o estorno da compra, quando cai?", f"Peço desculpas. {answer}", SETTINGS
    )
    assert is_loop


@pytest.mark.parametrize(
    "text",
    [
        "vocês só repetem",
        "vcs não resolvem nada",
        "os atendentes não respondem",
        "ustedes no responden nunca",
        "siempre repiten lo que dice la web",
        "no ayudan en nada",
    ],
)
def test_push_back_in_the_plural(text: str) -> None:
    """Complaints about the agents in the plural ("vocês só repetem", "no responden") are
    push back as the singular is."""
    assert pushes_back(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("qual o prazo de entrega? é o nº 4521", False),
        ("preciso da 2ª via do boleto, é o nº 889", False),
        ("¿me lo devuelven o no?", True),
    ],
)
def test_an_order_number_sign_is_no_push_back(text: str, expected: bool) -> None:
    """ "nº" (número) folds to "no": "o nº 4521" is not the Spanish "¿sí o no?"."""
    assert pushes_back(text) is expected


def test_two_numbers_read_out_are_not_one_question_asked_again() -> None:
    """A phone number read out digit by digit, then another one: no content to compare (a
    digit said as a word is none, in Portuguese and Spanish as in English), so the second
    is not the first asked again."""
    from gateway.loops.detector import read_turn  # imported here: this block stays at the end
    from gateway.loops.words import sentences

    assert sentences(parse("nove oito sete seis cinco quatro"), "pt") == []
    assert sentences(parse("nueve ocho siete seis cinco cuatro"), "es") == []
    state, _ = observe_turn(
        LoopState(),
        "meu telefone é nove nove oito sete seis cinco quatro três dois um",
        "Não encontrei esse telefone no cadastro. Pode confirmar o número, por favor?",
        SETTINGS,
    )
    _, turn = read_turn(
        state,
        "é nove oito sete seis cinco quatro três dois um zero",
        "Obrigado. Agora me informe o CPF do titular da conta, por favor.",
        SETTINGS,
    )
    assert all(user < SETTINGS.user_similarity for user, _ in turn.against)


MEMBERSHIP_LOOP = [
    ("I want to cancel my gym membership, I moved to another city.",
     "Memberships can be cancelled in person at your home club or by a certified letter "
     "to our head office."),
    ("Can I cancel it online instead? I live far away now.",
     "Cancellations must be made in person at your home club or by certified letter to "
     "the head office."),
]  # fmt: skip


def test_a_number_the_customer_adds_to_a_re_ask_is_not_progress() -> None:
    """A number the customer adds to a question asked again ("600 miles", an error code)
    that the reply leaves aside moves nothing on: the turn is a loop turn. One the reply
    takes up (the order it answers about), or data the customer gives in a message that
    is mostly that number, still moves things on."""
    re_ask = (
        "I moved 600 miles away, I can't go to the club to cancel. Can you cancel it online?",
        "I understand. Cancelling is only possible in person at your home club or by "
        "certified letter to our head office.",
    )
    assert _loop_turns([*MEMBERSHIP_LOOP, re_ask]) == [False, True, True]
    taken_up = (
        "I moved 600 miles away, can you cancel it online?",
        "I found membership 600 and cancelled it online; you'll get a confirmation.",
    )
    assert _loop_turns([*MEMBERSHIP_LOOP, taken_up])[2] is False
    data = (
        "Member number 88231907.",
        "Cancellations must be made in person at your home club or by certified letter.",
    )
    assert _loop_turns([*MEMBERSHIP_LOOP, data])[2] is False


def test_long_words_are_not_remembered_by_the_folding_cache() -> None:
    """Each capitalised word, and each word of a sentence with an accent, is folded through
    a cache of 65,536 entries: a 4,000-character word in every message (an id, base64 or a
    CJK run with no space) filled it with half a gigabyte per worker (read 13). Words over
    LONGEST_REMEMBERED characters are folded each time, not kept."""
    cache: Any = getattr(words, "_fold_cached", words.fold)  # the cache behind `fold`
    before = cache.cache_info().currsize
    for n in range(200):
        parse(f"Olá, meu código é {'Ab' * 2000}{n} e ainda não chegou")
    assert cache.cache_info().currsize - before <= 20
