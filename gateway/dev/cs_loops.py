"""A deterministic, labelled, multilingual (pt, en, es) workload of customer-service
conversations for evaluating a loop detector.

A LOOP TURN is a turn where the customer asks again (reworded, with or without a
frustration marker) a question asked within the last few turns AND the agent gives the
same answer again in other words, with no new information (no new reference, date,
amount, action, step or decision). The first time a question is asked and answered is
not a loop turn. `loop_start` is the 1-based index of the first loop turn.

Planted kinds: `loop` (3-7 loop turns in a row after 0-8, or 20-60, turns of progress,
then 0-2 closing turns) and the negatives, every turn False: `asked_twice` (the question
comes back once or twice but each later answer moves things on), `topic_hopping` (a new
how-to question every turn, answers wrapped in the same formulas), `same_item_topics`
(one order, a different question about it every turn), `similar_progress` (the same
question about different orders), `verification` (the agent asks for one piece of data
after another), `long_progress` (20-120 turns that keep moving) and `closing_courtesy`
(thanks and the same closing formula, several times). Phrase banks: `cs_loops_text`
(intents: asks and same-answer rewordings) and `cs_loops_agent` (moves, onboarding
topics, formulas). Customer turns get chat noise (webchat, whatsapp), speech-recognition
noise (phone) or a formal frame (email). One `random.Random(seed)`; no clock."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass

from gateway.dev import cs_noise, cs_values
from gateway.dev.cs_loops_agent import (
    INTENT_BANK,
    ORDER_INTENTS,
    ORDER_STYLE,
    TOPICS,
    Conv,
    Intent,
    answer,
    date_text,
    field_value,
    frame,
    move,
    new_conv,
    proto,
    reply,
)

SHARES: dict[str, int] = {
    "loop": 30,
    "asked_twice": 17,
    "topic_hopping": 15,
    "same_item_topics": 8,
    "similar_progress": 8,
    "long_progress": 8,
    "verification": 7,
    "closing_courtesy": 7,
}
KINDS: tuple[str, ...] = tuple(SHARES)
CHANNELS = {"webchat": 35, "whatsapp": 25, "phone": 25, "email": 15}


@dataclass
class LabelledConversation:
    id: str
    language: str
    channel: str
    kind: str
    class_hint: str
    turns: list[tuple[str, str]]
    loop_turns: list[bool]
    loop_start: int | None


# --- the customer's side -------------------------------------------------------------


def _say(conv: Conv, text: str) -> str:
    """A customer turn as its channel bends it."""
    rng = conv.rng
    if conv.channel == "phone":
        return cs_noise.asr(rng, text, conv.lang, rng.uniform(0.3, 1.0))
    if conv.channel == "email":
        body = text[0].upper() + text[1:]
        body += "." if body[-1].isalnum() else ""
        if not conv.turns and rng.random() < 0.7:
            body = f"{rng.choice(conv.form('mail_ctx'))} {body}"
        bye = conv.fill(rng.choice(conv.form("mail_bye")))
        return f"{rng.choice(conv.form('mail_hi'))}\n\n{body}\n\n{bye}"
    if rng.random() < 0.4:
        text = text[0].upper() + text[1:]
    informal = 0.65 if conv.channel == "whatsapp" else 0.35
    return cs_noise.chat(rng, text, conv.lang, informal)


def _ask(conv: Conv, intent: Intent, asked: list[str], *, again: int = 0, ref: float = 0.4) -> str:
    """A wording of the intent's question unlike its first and its last wording (kept in
    `asked`); a re-ask (`again` > 0) may carry a frustration marker."""
    rng = conv.rng
    pool = [p for p in intent.ask[conv.lang] if p not in asked[:1] + asked[-1:]]
    phrase = rng.choice(pool)
    asked.append(phrase)
    said = conv.slots["acct"] if intent.ref == "account" else conv.slots["ref_said"]
    if "{ref}" not in phrase and intent.ref == "order" and rng.random() < ref:
        phrase = rng.choice(conv.form("ref_tag")).replace("{q}", phrase)
    text = phrase.replace("{ref}", said).replace("{plan}", conv.slots["plan"])
    text = text.replace("{amount}", conv.slots["amount"])
    marker = rng.random()
    if again and marker < 0.2 + 0.1 * again:
        text = f"{rng.choice(conv.form('again_pre'))} {text}"
    elif again > 1 and marker < 0.3 + 0.15 * again:
        text = f"{text.rstrip('?')}? {rng.choice(conv.form('again_post'))}"
    if not conv.turns and conv.channel in ("webchat", "whatsapp") and rng.random() < 0.4:
        text = f"{rng.choice(conv.form('hi'))}, {text}"
    return _say(conv, text)


# --- turns of progress ---------------------------------------------------------------


def _fresh_intent(conv: Conv, names: Sequence[str] = tuple(INTENT_BANK)) -> Intent | None:
    clash = TOPICS[conv.lang][0][1] in conv.used  # the same question as notify_config
    free = [n for n in names if n not in conv.used and not (clash and n == "notify_config")]
    if not free:
        return None
    conv.used.append(name := conv.rng.choice(free))
    return INTENT_BANK[name]


def _intent_turn(conv: Conv) -> bool:
    intent = _fresh_intent(conv)
    if intent is None:
        return False
    conv.add(_ask(conv, intent, []), answer(conv, intent, [], again=False, tense=0.0))
    return True


def _topic_turn(conv: Conv) -> bool:
    topics = TOPICS[conv.lang][1:] if "notify_config" in conv.used else TOPICS[conv.lang]
    free = [t for t in topics if t[1] not in conv.used]
    if not free:
        return False
    asks, answer = conv.rng.choice(free)
    conv.used.append(answer)
    text = conv.rng.choice(asks)
    if conv.turns and conv.rng.random() < 0.35:
        text = f"{conv.rng.choice(conv.form('next'))} {text}"
    conv.add(_say(conv, text), reply(conv, answer, wrap=0.7, tense=0.25))
    return True


def _step_turn(conv: Conv) -> bool:
    """A next step of a set-up, never on a screen of the last ten steps."""
    recent = [u[3:] for u in conv.used if u.startswith("el:")][-10:]
    screen = conv.rng.choice([e for e in conv.form("s_el") if e not in recent])
    conv.used.append(f"el:{screen}")
    verb, where = conv.rng.choice(conv.form("s_verb")), conv.rng.choice(conv.form("s_where"))
    step = f"{verb} {screen} {where}."
    conv.add(_say(conv, conv.rng.choice(conv.form("ok"))), reply(conv, step, wrap=0.15))
    return True


def _thanks_turn(conv: Conv) -> bool:
    said = _say(conv, conv.rng.choice(conv.form("thanks")))
    conv.add(said, frame(conv, conv.rng.choice(conv.form("thanks_reply"))))
    return True


def _progress(conv: Conv, turns: int) -> None:
    """`turns` turns that keep moving: new questions, how-to topics, steps, thanks."""
    makers: list[Callable[[Conv], bool]] = [_step_turn, _intent_turn, _topic_turn, _thanks_turn]
    steps = 50 if turns >= 15 else 0  # set-up walkthroughs only in long conversations
    weights = [0, 50, 50, 0] if conv.channel == "email" else [steps, 20, 20, 10]
    target = len(conv.turns) + turns
    if turns and not conv.turns:
        (_intent_turn if conv.rng.random() < 0.5 else _topic_turn)(conv)
    while len(conv.turns) < target:
        maker = conv.rng.choices(makers, weights=weights)[0]
        if not maker(conv):
            _step_turn(conv)


# --- the kinds -----------------------------------------------------------------------


def _opening(conv: Conv, most: int) -> None:
    if most and conv.channel != "email" and conv.rng.random() < 0.25:
        _verify(conv, conv.rng.randint(2, 3), intent=None)
    _progress(conv, conv.rng.randint(0, most))


def _loop(conv: Conv) -> str:
    intent = _fresh_intent(conv)
    assert intent is not None
    if conv.channel != "email" and conv.rng.random() < 0.25:
        _progress(conv, conv.rng.randint(20, 60))
    else:
        _opening(conv, 8)
    asked: list[str] = []
    said: list[str] = []
    conv.add(_ask(conv, intent, asked), answer(conv, intent, said, again=False, tense=0.0))
    if conv.rng.random() < 0.4:
        (_thanks_turn if conv.rng.random() < 0.6 else _intent_turn)(conv)
    for k in range(1, conv.rng.randint(3, 7) + 1):
        ask = _ask(conv, intent, asked, again=k)
        conv.add(ask, answer(conv, intent, said, again=True, tense=0.6), loop=True)
    _ending(conv)
    return intent.class_hint


def _ending(conv: Conv) -> None:
    rng = conv.rng
    end = rng.random()
    if end < 0.3:
        close = frame(conv, rng.choice(conv.style["close"]))
        conv.add(_say(conv, rng.choice(conv.form("giveup"))), close)
    elif end < 0.5:
        conv.slots["proto"] = proto(rng)
        said = _say(conv, rng.choice(conv.form("escalate")))
        conv.add(said, reply(conv, conv.fill(rng.choice(conv.form("escalated"))), wrap=0.0))
        if rng.random() < 0.5:
            _thanks_turn(conv)


def _asked_twice(conv: Conv) -> str:
    intent = _fresh_intent(conv)
    assert intent is not None
    _opening(conv, 6)
    asked: list[str] = []
    moved: list[str] = []
    conv.add(_ask(conv, intent, asked), answer(conv, intent, [], again=False, tense=0.0))
    for k in range(1, 1 + (2 if conv.rng.random() < 0.45 else 1)):
        gap = conv.rng.choice([0, 0, 1, 2])
        for _ in range(gap):
            (_thanks_turn if conv.rng.random() < 0.5 else _intent_turn)(conv)
        conv.add(_ask(conv, intent, asked, again=k), move(conv, intent, moved))
    if conv.rng.random() < 0.6:
        _thanks_turn(conv)
    return intent.class_hint


def _topic_hopping(conv: Conv) -> str:
    if conv.rng.random() < 0.75:
        for _ in range(conv.rng.randint(3, 9)):
            _topic_turn(conv)
        return "onboarding"
    hint = ""
    for _ in range(conv.rng.randint(3, 6)):
        intent = _fresh_intent(conv)
        assert intent is not None
        hint = hint or intent.class_hint
        conv.add(_ask(conv, intent, []), answer(conv, intent, [], again=False, tense=0.4))
    return hint


def _same_item(conv: Conv) -> str:
    for _ in range(conv.rng.randint(3, 6)):
        intent = _fresh_intent(conv, ORDER_INTENTS)
        assert intent is not None
        conv.add(_ask(conv, intent, [], ref=1.0), answer(conv, intent, [], again=False, tense=0.2))
    return "support"


def _similar(conv: Conv) -> str:
    rng = conv.rng
    statuses = rng.sample(conv.form("status"), rng.randint(3, len(conv.form("status"))))
    intent = INTENT_BANK["order_status"]
    for n, status in enumerate(statuses):
        order = cs_values.order_value(
            rng, ORDER_STYLE[conv.lang], conv.channel == "phone", conv.lang
        )
        conv.slots["ref"], conv.slots["ref_said"] = order.canonical, order.surface
        month, day = rng.randrange(12), rng.randint(1, 28)
        conv.slots["date"] = date_text(rng, conv.lang, month, day)
        if n and rng.random() < 0.6:
            ask = _say(conv, rng.choice(conv.form("similar")).replace("{ref}", order.surface))
        else:
            ask = _ask(conv, intent, [], ref=1.0)
        line = conv.fill(rng.choice(conv.form("st_line")), status=conv.fill(status))
        conv.add(ask, reply(conv, line, wrap=0.3))
    return "support"


def _verify(conv: Conv, count: int, intent: Intent | None) -> None:
    """The agent asks for `count` pieces of data one by one; the customer gives each
    (once, maybe, wrong first and then right); then `intent` is answered."""
    rng = conv.rng
    names = conv.form("v_fields")
    fields = [0, *rng.sample(range(1, len(names)), count - 1)]
    said = _ask(conv, intent, []) if intent else _say(conv, rng.choice(conv.form("hi")))
    prompt = conv.fill(rng.choice(conv.form("v_first")), field=names[0])
    for n, index in enumerate(fields):
        conv.add(said, reply(conv, prompt, wrap=0.0))
        value = field_value(conv, index)
        give = rng.choice(conv.form("give"))
        said = _say(conv, conv.fill(give, field=names[index], v=value))
        if index in (1, 4) and rng.random() < 0.3:
            retry = conv.fill(rng.choice(conv.form("v_retry")), field=names[index])
            conv.add(said, reply(conv, retry, wrap=0.0))
            fix = rng.choice(conv.form("fix"))
            said = _say(conv, conv.fill(fix, v=field_value(conv, index)))
        if n + 1 < len(fields):
            nxt = rng.choice(conv.form("v_next"))
            prompt = conv.fill(nxt, field=names[fields[n + 1]])
    if intent:
        conv.add(said, answer(conv, intent, [], again=False, tense=0.0))
    else:
        conv.add(said, reply(conv, conv.fill(rng.choice(conv.form("v_done"))), wrap=0.0))


def _verification(conv: Conv) -> str:
    intent = _fresh_intent(conv)
    assert intent is not None
    _verify(conv, conv.rng.randint(3, 5), intent)
    if conv.rng.random() < 0.5:
        _thanks_turn(conv)
    return intent.class_hint


def _long(conv: Conv) -> str:
    _opening(conv, 0)
    _progress(conv, conv.rng.randint(20, 120))
    return "technical"


def _closing(conv: Conv) -> str:
    rng = conv.rng
    intent = _fresh_intent(conv)
    assert intent is not None
    conv.add(_ask(conv, intent, []), answer(conv, intent, [], again=False, tense=0.0))
    for _ in range(rng.randint(0, 2)):
        _intent_turn(conv)
    formula = frame(conv, rng.choice(conv.form("thanks_reply")))
    thanks = rng.sample(conv.form("thanks"), 3) + rng.choices(conv.form("thanks"), k=2)
    for text in thanks[: rng.randint(3, 5)]:
        conv.add(_say(conv, text), formula)
    return intent.class_hint


BUILDERS: dict[str, Callable[[Conv], str]] = {
    "loop": _loop,
    "asked_twice": _asked_twice,
    "topic_hopping": _topic_hopping,
    "same_item_topics": _same_item,
    "similar_progress": _similar,
    "long_progress": _long,
    "verification": _verification,
    "closing_courtesy": _closing,
}


def _allocate(rng: random.Random, count: int) -> list[str]:
    """`count` kinds in SHARES proportions (largest remainders), shuffled."""
    total = sum(SHARES.values())
    exact = {k: count * s / total for k, s in SHARES.items()}
    kinds = {k: int(v) for k, v in exact.items()}
    by_rest = sorted(SHARES, key=lambda k: (kinds[k] - exact[k], KINDS.index(k)))
    for k in by_rest[: count - sum(kinds.values())]:
        kinds[k] += 1
    out = [k for k in KINDS for _ in range(kinds[k])]
    rng.shuffle(out)
    return out


def generate(
    seed: int, count: int, langs: Sequence[str] = ("pt", "en", "es")
) -> list[LabelledConversation]:
    """`count` labelled conversations, languages round-robin over `langs`, each language
    with its kinds in SHARES proportions."""
    rng = random.Random(seed)
    plans = [_allocate(rng, len(range(j, count, len(langs)))) for j in range(len(langs))]
    out: list[LabelledConversation] = []
    for n in range(count):
        lang = langs[n % len(langs)]
        kind = plans[n % len(langs)][n // len(langs)]
        long = kind == "long_progress"
        channels = [c for c in CHANNELS if not (long and c == "email")]
        channel = rng.choices(channels, weights=[CHANNELS[c] for c in channels])[0]
        conv = new_conv(rng, lang, channel)
        hint = BUILDERS[kind](conv)
        start = conv.loops.index(True) + 1 if True in conv.loops else None
        out.append(
            LabelledConversation(
                f"loops-{seed}-{n}", lang, channel, kind, hint, conv.turns, conv.loops, start
            )
        )
    return out


def to_jsonl(conversations: Iterable[LabelledConversation]) -> str:
    """One JSON object per line, the dataclass fields as keys."""
    return "".join(json.dumps(asdict(c), ensure_ascii=False) + "\n" for c in conversations)
