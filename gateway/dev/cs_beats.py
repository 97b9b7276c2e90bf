"""The moves of a customer-service conversation, one customer turn and (usually) the
agent's reply each: open, state a fact, ask for a status, ask a fact back, correct one,
small talk, resume after a pause, refer to an earlier episode, close. `play` strings
them together up to a length."""

from __future__ import annotations

import math
from collections.abc import Callable

from gateway.dev import cs_agent, cs_chitchat, cs_phrasing, cs_talk
from gateway.dev.cs_conversation import CORRECTABLE, CUSTOMER_FACTS, Episode, Fact, Piece
from gateway.dev.cs_values import Value

Move = Callable[[Episode, bool], None]
# One long paste in ~5% of conversations (never on the phone), likelier the longer the
# conversation: P = PASTES * sqrt(messages).
PASTES = 0.019
# Agents differ (lognormal spread of reply lengths per conversation), and long cases are
# the complex ones: replies grow with (messages / 7) ** COMPLEXITY, at most x2.
VERBOSITY_SIGMA, COMPLEXITY = 0.4, 0.2

ASKABLE = [
    "name",
    "city",
    "address",
    "order",
    "sku",
    "amount",
    "date",
    "email",
    "phone",
    "problem",
    "promise",
    "deadline",
]


def play(ep: Episode, length: int, earlier: list[Episode]) -> None:
    """Turns until `length` messages; an odd length ends on a customer turn."""
    r = ep.rng
    complexity = min(2.0, max(1.0, (length / 7) ** COMPLEXITY))
    ep.verbosity = complexity * math.exp(r.gauss(0.0, VERBOSITY_SIGMA))
    if r.random() < PASTES * math.sqrt(length) and ep.episode is None and not ep.spoken:
        ep.paste_at = r.randrange(0, length, 2)
    opening(ep, earlier, reply=length > 1)
    to_state = ep.rng.sample(CUSTOMER_FACTS, ep.rng.randint(1, 5))
    while len(ep.turns) < length:
        reply = length - len(ep.turns) > 1
        if length - len(ep.turns) <= 2 and length > 6:
            close(ep, reply)
            continue
        move = _pick(ep, to_state, earlier)
        move(ep, reply)


def _pick(ep: Episode, to_state: list[str], earlier: list[Episode]) -> Move:
    r = ep.rng
    moves: list[tuple[float, Move]] = [
        (0.14, status),
        (0.18, recall),
        (0.16, small_talk),
        (0.06, correct),
    ]
    if to_state:
        moves.append((0.45, lambda e, reply: state(e, to_state.pop(0), reply)))
    if ep.channel in ("webchat", "whatsapp", "email") and len(ep.turns) > 4:
        moves.append((0.04, resume))
    if earlier:
        moves.append((0.06, lambda e, reply: refer(e, earlier, reply)))
    total = sum(w for w, _ in moves)
    x = r.uniform(0, total)
    for weight, move in moves:
        x -= weight
        if x <= 0:
            return move
    return moves[-1][1]


def _lang(ep: Episode) -> str:
    """The language of this customer turn: a mixed-language customer switches at times."""
    if ep.mixed and ep.rng.random() < 0.25:
        return cs_talk.MIX_WITH[ep.customer.lang]
    return ep.customer.lang


def _ack(ep: Episode, extra: str = "", first: bool = False) -> None:
    core = (ep.rng.choice(cs_talk.AGENT_ACK[ep.customer.lang]) + " " + extra).strip()
    ep.agent_says(cs_agent.reply(ep, core, first=first))


def opening(ep: Episode, earlier: list[Episode], reply: bool) -> None:
    r, c = ep.rng, ep.customer
    lang = c.lang
    pieces: list[Piece] = [r.choice(cs_talk.GREET[lang]) + ", "]
    needs: list[Fact] = []
    if r.random() < 0.6 and c.active("name") is None:
        pieces += ep.template(r.choice(cs_phrasing.STATE[lang]["name"]), "name", ep.value("name"))
        pieces.append(". ")
    prior = [f for f in c.facts if f.type in ("problem", "order") and f.superseded_by is None]
    if earlier and prior:
        pieces.append(_refer_phrase(ep, earlier[-1]) + r.choice(cs_talk.STATUS[lang]))
        needs = prior
    else:
        phrase = r.choice(c.problem[2][lang])
        lead = r.choice(cs_talk.PROBLEM_LEAD[lang])
        pieces += ep.template(lead, "problem", Value(c.problem[1], phrase))
    ep.customer_says(pieces, needs, lang, dress="opening")
    if reply:
        _ack(ep, cs_talk.AGENT_ASK[lang][r.choice(CUSTOMER_FACTS)], first=True)


def state(ep: Episode, kind: str, reply: bool) -> None:
    r, lang = ep.rng, ep.customer.lang
    if ep.customer.active(kind) is not None:
        small_talk(ep, reply)
        return
    pieces = ep.template(r.choice(cs_phrasing.STATE[lang][kind]), kind, ep.value(kind))
    ep.customer_says(pieces, [], lang)
    if reply:
        _ack(ep)


def status(ep: Episode, reply: bool) -> None:
    """ "Any news?": a reply needs the problem and the order; the agent may promise."""
    r, c = ep.rng, ep.customer
    needs = [f for f in (c.active("problem"), c.active("order")) if f is not None]
    ep.customer_says([r.choice(cs_talk.STATUS[c.lang])], needs, _lang(ep))
    if not reply:
        return
    kind = r.choice(["promise", "deadline"])
    if c.active(kind) is not None and r.random() < 0.5:
        text = r.choice(cs_phrasing.AGENT_CORRECT[c.lang])
        old = c.active(kind)
        assert old is not None
        new = ep.agent_says(cs_agent.reply(ep, text, planting=kind), (kind, _another(ep, old)))
        if new is not None:
            old.superseded_by = new.id
        return
    if c.active(kind) is None:
        said = cs_agent.reply(ep, r.choice(cs_phrasing.AGENT_STATE[c.lang][kind]), planting=kind)
        ep.agent_says(said, (kind, ep.value(kind)))
        return
    _ack(ep)


def recall(ep: Episode, reply: bool) -> None:
    r, c = ep.rng, ep.customer
    known = [k for k in ASKABLE if c.active(k) is not None]
    if not known:
        small_talk(ep, reply)
        return
    fact = c.active(r.choice(known))
    assert fact is not None
    lang = _lang(ep)
    ep.customer_says([r.choice(cs_phrasing.ASK[lang][fact.type])], [fact], lang)
    if reply:
        _recall_reply(ep, fact)


def correct(ep: Episode, reply: bool) -> None:
    r, c = ep.rng, ep.customer
    stated = [
        f
        for f in c.facts
        if f.type in CORRECTABLE and f.superseded_by is None and f.stated_by == "customer"
    ]
    if not stated:
        small_talk(ep, reply)
        return
    old = r.choice(stated)
    table = cs_phrasing.CORRECT[c.lang]
    text = r.choice(table.get(old.type, []) + table["_"])
    value = _another(ep, old)
    (new,) = ep.customer_says(ep.template(text, old.type, value), [], c.lang)
    old.superseded_by = new.id
    if reply:
        _ack(ep)


def small_talk(ep: Episode, reply: bool) -> None:
    r, lang = ep.rng, _lang(ep)
    if lang == "en" and r.random() < 0.75:
        line = r.choice(cs_chitchat.english_lines())
    else:
        line = r.choice(cs_talk.FILLER[lang])
    ep.customer_says([line], [], lang)
    if reply:
        _ack(ep)


def resume(ep: Episode, reply: bool) -> None:
    ep.jump()
    r, c = ep.rng, ep.customer
    needs = [f for f in (c.active("problem"), c.active("order")) if f is not None]
    ep.customer_says(
        [r.choice(cs_talk.RESUME[c.lang]) + ", " + r.choice(cs_talk.STATUS[c.lang])], needs, c.lang
    )
    if reply:
        _ack(ep)


def _refer_phrase(ep: Episode, before: Episode) -> str:
    r, lang = ep.rng, ep.customer.lang
    hours = (ep.clock - before.clock).total_seconds() / 3600
    when = [w for h, w in cs_phrasing.WHEN[lang] if hours >= h][-1]
    channel = r.choice(cs_phrasing.CHANNEL_REF[lang][before.channel])
    return r.choice(cs_phrasing.REFER[lang]).format(ch=channel, when=when)


def refer(ep: Episode, earlier: list[Episode], reply: bool) -> None:
    """The customer points back to an earlier episode and asks for one of its facts."""
    r, c = ep.rng, ep.customer
    before = r.choice(earlier)
    facts = [
        f
        for f in c.facts
        if f.episode == before.episode
        and f.superseded_by is None
        and f.type in cs_phrasing.ASK[c.lang]
    ]
    if not facts:
        status(ep, reply)
        return
    fact = r.choice(facts)
    ask = r.choice(cs_phrasing.ASK[c.lang][fact.type])
    ep.customer_says([_refer_phrase(ep, before) + ask], [fact], c.lang)
    if reply:
        _recall_reply(ep, fact)


def close(ep: Episode, reply: bool) -> None:
    r, lang = ep.rng, ep.customer.lang
    ep.customer_says([r.choice(cs_talk.CLOSE[lang])], [], lang, dress="none")
    if reply:
        ep.agent_says(cs_agent.reply(ep, r.choice(cs_talk.AGENT_CLOSE[lang])))


def _recall_reply(ep: Episode, fact: Fact) -> None:
    said = ep.rng.choice(cs_phrasing.AGENT_RECALL[ep.customer.lang])
    ep.agent_says(cs_agent.reply(ep, said).replace("{v}", _spoken_of(fact)))


def _spoken_of(fact: Fact) -> str:
    """How the agent repeats a fact: the customer's own words for the problem."""
    return fact.surface if fact.type == "problem" else fact.value


def _another(ep: Episode, old: Fact) -> Value:
    """A new value for a corrected fact: never the one it replaces."""
    value = ep.value(old.type)
    while value.canonical == old.value:
        value = ep.value(old.type)
    return value
