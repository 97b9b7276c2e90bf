"""A labelled workload of customer-service conversations, for loop detection (and any
evaluation that needs conversations whose truth is known). Deterministic per seed.

Kinds:
  loop               progress for a few turns, then the customer re-asks one question
                     reworded and the agent re-answers it reworded, for several turns
  asked_twice        a question asked again, but the second answer moves things on
  similar_progress   near-identical questions about different orders, different answers
  long_progress      a long conversation that keeps moving (new topic every turn)
  same_order_topics  one order, a different question about it every turn
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

QUESTIONS = [
    [
        "Where is my order {id}? It has not arrived yet.",
        "My order {id} still has not arrived, where is it?",
        "I am still waiting for order {id}, where is it now?",
        "Can you tell me where order {id} is? It never arrived.",
        "Order {id} has not arrived. Where is it?",
    ],
    [
        "I was charged twice for order {id}, please refund the extra charge.",
        "Order {id} was charged twice and I want the extra charge refunded.",
        "Please refund the double charge on order {id}.",
        "Why was order {id} charged twice? Refund the extra charge please.",
        "The extra charge on order {id} needs a refund, I was charged twice.",
    ],
    [
        "How do I return the damaged item from order {id}?",
        "The item in order {id} arrived damaged, how can I return it?",
        "I need to return a damaged item from order {id}, how?",
        "What is the return process for the damaged item in {id}?",
        "Order {id} came damaged. How do I send the item back?",
    ],
    [
        "Can I change the delivery address for order {id}?",
        "I need to change the delivery address of order {id}.",
        "Please update the delivery address on order {id}.",
        "Is it possible to change where order {id} is delivered?",
        "Change the delivery address for {id}, can you do that?",
    ],
]
ANSWERS = [
    [
        "Order {id} is in transit and should arrive within 3 to 5 business days.",
        "Your order {id} is on its way, expect it in 3 to 5 business days.",
        "{id} is in transit; it should be delivered in 3 to 5 business days.",
        "The order {id} has shipped and will arrive in 3 to 5 business days.",
    ],
    [
        "I have forwarded the double charge on {id} to billing, they will review the refund.",
        "Billing will review the refund for the double charge on order {id}.",
        "The refund request for the duplicate charge on {id} is with billing for review.",
        "I passed the duplicate charge on {id} to billing to review a refund.",
    ],
    [
        "To return the damaged item from {id}, use the return form on your account page.",
        "You can return the damaged item in order {id} with the return form in your account.",
        "Please use the return form in your account to send back the damaged item from {id}.",
        "The damaged item from {id} can be returned using the account return form.",
    ],
    [
        "Delivery addresses can be changed before shipping; order {id} can still be updated.",
        "Order {id} has not shipped, so the delivery address can still be changed.",
        "You can still change the delivery address for {id} since it has not shipped.",
        "Since {id} is not shipped yet, its delivery address can be updated.",
    ],
]
PROGRESS = [
    "Thanks. Also, my new phone number is {n}, please update it.",
    "Got it. Can you add a gift note saying happy birthday {n} to my next order?",
    "Great, the tracking code {n} works now. What about my loyalty points?",
    "Perfect. I confirmed the replacement {n}. When will the invoice INV-{n} be sent?",
    "OK. My warranty card number is {n}; is it registered?",
    "Thanks. I uploaded the photos {n}. Do you need anything else?",
]
PROGRESS_REPLIES = [
    "Updated your phone number to {n}. Anything else I can help with?",
    "Added the gift note for {n} to your next order.",
    "Your loyalty balance shows {n} points after the last purchase.",
    "Invoice INV-{n} will be emailed within one business day.",
    "Warranty {n} is registered until next year.",
    "Photos {n} received; the claim is now complete.",
]


@dataclass
class Conversation:
    kind: str
    turns: list[tuple[str, str]] = field(default_factory=list)
    loop_turns: list[bool] = field(default_factory=list)  # the truth, per turn
    loop_start: int | None = None  # 1-based turn of the first loop turn


def _order(rng: random.Random) -> str:
    return f"ORD-{rng.randint(10000, 99999)}"


def _progress(rng: random.Random, conv: Conversation, count: int) -> None:
    for _ in range(count):
        n, k = rng.randint(1000, 9999), rng.randrange(len(PROGRESS))
        conv.turns.append((PROGRESS[k].format(n=n), PROGRESS_REPLIES[k].format(n=n)))
        conv.loop_turns.append(False)


def loop(rng: random.Random) -> Conversation:
    conv = Conversation("loop")
    _progress(rng, conv, rng.randint(1, 6))
    topic, order = rng.randrange(len(QUESTIONS)), _order(rng)
    asks = rng.sample(QUESTIONS[topic], 4)
    replies = [rng.choice(ANSWERS[topic]) for _ in range(4)]
    for n, (ask, reply) in enumerate(zip(asks, replies, strict=True)):
        conv.turns.append((ask.format(id=order), reply.format(id=order)))
        conv.loop_turns.append(n > 0)
        if n == 1:
            conv.loop_start = len(conv.turns)
    return conv


def asked_twice(rng: random.Random) -> Conversation:
    conv = Conversation("asked_twice")
    _progress(rng, conv, rng.randint(0, 4))
    topic, order = rng.randrange(len(QUESTIONS)), _order(rng)
    first, second = rng.sample(QUESTIONS[topic], 2)
    conv.turns.append((first.format(id=order), rng.choice(ANSWERS[topic]).format(id=order)))
    n = rng.randint(1000, 9999)
    conv.turns.append(
        (
            second.format(id=order),
            f"Update: a replacement for {order} was approved today, reference RMA-{n}.",
        )
    )
    conv.loop_turns += [False, False]
    _progress(rng, conv, rng.randint(0, 3))
    return conv


def similar_progress(rng: random.Random) -> Conversation:
    conv = Conversation("similar_progress")
    topic = rng.randrange(len(QUESTIONS))
    for _ in range(rng.randint(3, 6)):
        order = _order(rng)
        conv.turns.append(
            (
                rng.choice(QUESTIONS[topic]).format(id=order),
                rng.choice(ANSWERS[topic]).format(id=order),
            )
        )
        conv.loop_turns.append(False)
    return conv


def long_progress(rng: random.Random) -> Conversation:
    conv = Conversation("long_progress")
    for _ in range(rng.randint(20, 40)):
        if rng.random() < 0.5:
            topic, order = rng.randrange(len(QUESTIONS)), _order(rng)
            conv.turns.append(
                (
                    rng.choice(QUESTIONS[topic]).format(id=order),
                    rng.choice(ANSWERS[topic]).format(id=order),
                )
            )
            conv.loop_turns.append(False)
        else:
            _progress(rng, conv, 1)
    return conv


def same_order_topics(rng: random.Random) -> Conversation:
    conv = Conversation("same_order_topics")
    order = _order(rng)
    for topic in rng.sample(range(len(QUESTIONS)), len(QUESTIONS)):
        conv.turns.append(
            (
                rng.choice(QUESTIONS[topic]).format(id=order),
                rng.choice(ANSWERS[topic]).format(id=order),
            )
        )
        conv.loop_turns.append(False)
    return conv


def generate(seed: int = 7, count: int = 500) -> list[Conversation]:
    rng = random.Random(seed)
    kinds = (loop, asked_twice, similar_progress, long_progress, same_order_topics)
    return [kinds[n % len(kinds)](rng) for n in range(count)]
