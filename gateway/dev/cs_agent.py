"""An agent's reply the length real agents write: the move's core (an acknowledgement,
a promise with its `{v}`, a recalled value) dressed with a greeting, empathy, the
issue restated, a holding line, a run of steps, policy paragraphs, a summary of the
case that repeats the values on file, a closing question and, on email, a sign-off.
Lengths are lognormal per channel (longer on email and the phone, capped at 260 words)
and scaled by the conversation's verbosity, which grows with its length (long cases are
the complex ones): median ~75 words over all replies. A tenth of replies stay short."""

from __future__ import annotations

import math

from gateway.dev import cs_agent_steps as long_blocks
from gateway.dev import cs_agent_text as text
from gateway.dev.cs_conversation import Episode

MEDIAN_WORDS = {"webchat": 54.0, "whatsapp": 46.0, "phone": 58.0, "email": 95.0}
SIGMA, MOST, SHORT = 0.6, 260, 0.1
SUMMARIES = 0.12  # the weight of a case summary: it repeats values, so not too often
REPEATS = {"policy": 2}  # blocks a reply may hold twice (two policy paragraphs)
SLOTS = ("open", "empathy", "restate", "hold", "core", "steps", "policy", "summary", "ask")
SUMMARY_KINDS = ("order", "name", "email", "phone", "address", "city", "sku", "amount")
SUMMARY_KINDS_LATE = ("date", "promise", "deadline")


def reply(ep: Episode, core: str, *, first: bool = False, planting: str | None = None) -> str:
    """`core` dressed to a drawn length; `{v}` in it is left for `agent_says`."""
    r = ep.rng
    core_words = len(core.split())
    if not first and r.random() < SHORT:
        target = core_words + r.randint(0, 12)
    else:
        median = MEDIAN_WORDS[ep.channel] * ep.verbosity * (1.3 if first else 1.0)
        target = min(MOST, round(math.exp(r.gauss(math.log(median), SIGMA))))
    parts: dict[str, list[str]] = {"core": [core]} if core else {}
    if first:
        parts["open"] = [_open(ep)]
    weights = {
        "open": 0.5,
        "empathy": 0.8,
        "restate": 0.7,
        "hold": 0.6,
        "steps": 1.0,
        "policy": 1.0,
        "summary": SUMMARIES,
        "ask": 1.2,
    }
    total = sum(len(p.split()) for ps in parts.values() for p in ps)
    uses: dict[str, int] = {}
    while total < target and weights:
        slot = r.choices(list(weights), list(weights.values()))[0]
        block = _block(ep, slot, planting)
        uses[slot] = uses.get(slot, 0) + 1
        if uses[slot] >= REPEATS.get(slot, 1):
            del weights[slot]
        size = len(block.split())
        if block and total + size / 2 <= target:  # a block far too long waits its turn
            parts.setdefault(slot, []).append(block)
            total += size
    out = [p for slot in SLOTS for p in parts.get(slot, [])]
    if ep.channel == "email":
        out.append(r.choice(text.SIGN_OFF[ep.customer.lang]))
    return " ".join(out)


def _open(ep: Episode) -> str:
    choices = text.OPEN[ep.customer.lang]
    name = ep.customer.active("name")
    if name is None:
        choices = [c for c in choices if "{name}" not in c]
    return ep.rng.choice(choices).replace("{name}", ep.customer.first)


def _block(ep: Episode, slot: str, planting: str | None) -> str:
    r, c = ep.rng, ep.customer
    lang, cls = c.lang, c.problem[0]
    if slot == "open":
        return _open(ep)
    if slot == "restate":
        topic = r.choice(text.TOPIC[c.problem[1]][lang])
        return r.choice(text.RESTATE[lang]).replace("{topic}", topic)
    if slot == "steps":
        steps = r.choice(long_blocks.STEPS[cls][lang])
        start = r.randrange(0, max(1, len(steps) - 2))
        run = steps[start : start + r.randint(2, len(steps))]
        listed = " ".join(f"{i}. {s[0].upper()}{s[1:]}." for i, s in enumerate(run, start=1))
        return r.choice(text.STEPS_LEAD[lang]) + " " + listed
    if slot == "summary":
        return _summary(ep, planting)
    table = {
        "empathy": text.EMPATHY,
        "hold": text.HOLD,
        "policy": long_blocks.POLICY,
        "ask": text.QUESTION,
    }
    return r.choice(table[slot][lang])


def _summary(ep: Episode, planting: str | None) -> str:
    """The case so far, repeating the current values on file (never the one being
    planted by this reply, which is new)."""
    r, c = ep.rng, ep.customer
    labels = text.SUMMARY_LABEL[c.lang]
    rows = []
    for kind in SUMMARY_KINDS + SUMMARY_KINDS_LATE:
        fact = c.active(kind)
        if fact is not None and kind != planting:
            rows.append(f"{labels[kind]}: {fact.value}")
    if not rows:
        return ""
    rows = [row for row in rows if r.random() < 0.6] or rows[:1]  # what this case needs
    ticket = f"{r.randint(2024, 2025)}{r.randint(0, 99_999_999):08d}"
    return (
        r.choice(text.SUMMARY_LEAD[c.lang]).replace("{ticket}", ticket)
        + " "
        + "; ".join(rows)
        + "."
    )
