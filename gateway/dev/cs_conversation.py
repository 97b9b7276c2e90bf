"""One customer-service conversation (or earlier episode) built turn by turn: the
customer states, corrects and asks back facts, the agent promises amounts and
deadlines, and every customer turn is labelled with the facts a correct reply needs.
Owns the clock of the conversation (passed in, never read) and its random stream."""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from gateway.dev import cs_customer_text, cs_noise, cs_paste, cs_talk, cs_values
from gateway.dev.cs_values import Value

CUSTOMER_FACTS = ["order", "email", "phone", "address", "city", "sku", "amount", "date"]
CORRECTABLE = {"order", "email", "phone", "address", "city", "amount", "date", "name"}
# Words in a customer turn (lognormal median, sigma) per channel: phone callers run on.
CUSTOMER_WORDS = {
    "webchat": (13.0, 0.8),
    "whatsapp": (11.0, 0.85),
    "phone": (30.0, 0.6),
    "email": (45.0, 0.6),
}
GAP_SECONDS = {
    "webchat": (5, 90),
    "whatsapp": (10, 400),
    "phone": (3, 25),
    "email": (3600, 30 * 3600),
}


@dataclass
class Fact:
    id: str
    type: str
    value: str
    surface: str
    stated_by: str  # customer | agent
    stated_at: int  # turn index in its conversation or episode
    episode: str | None  # the earlier episode it was stated in; None: this conversation
    superseded_by: str | None = None


@dataclass
class Turn:
    role: str  # user | assistant
    content: str
    at: datetime
    lang: str
    needs: list[str] | None = None  # customer turns: facts stated earlier a reply needs


@dataclass
class Customer:
    """What stays the same across a customer's conversations."""

    first: str
    last: str
    lang: str
    app: tuple[str, str, str, str]
    problem: tuple[str, str, dict[str, list[str]]]
    facts: list[Fact] = field(default_factory=list)

    def active(self, kind: str) -> Fact | None:
        found = [f for f in self.facts if f.type == kind and f.superseded_by is None]
        return found[-1] if found else None


Piece = str | tuple[str, Value]  # plain words, or (fact type, value)


@dataclass
class Episode:
    """A conversation under construction: `episode` is its id when it is an earlier one."""

    rng: random.Random
    customer: Customer
    channel: str
    clock: datetime
    episode: str | None
    mixed: bool = False
    asr_level: float = 0.0
    verbosity: float = 1.0  # scales the agent's reply lengths (some agents write more)
    paste_at: int | None = None  # the customer turn from which one long paste is due
    turns: list[Turn] = field(default_factory=list)

    @property
    def spoken(self) -> bool:
        return self.channel == "phone"

    # -- turns ---------------------------------------------------------------
    def customer_says(
        self, pieces: list[Piece], needs: list[Fact], lang: str, dress: str = "around"
    ) -> list[Fact]:
        """One customer turn. `dress`: "around" adds context before or after the point
        of the turn up to a drawn length, "opening" more of it after it, "none"
        nothing."""
        self._tick()
        if dress != "none":
            scale = 1.6 if dress == "opening" else 1.0  # the first turn tells the story
            pieces = self._dress(pieces, lang, dress == "around", scale)
        out, made = [], []
        for piece in pieces:
            if isinstance(piece, str):
                out.append(self._bend(piece, lang))
                continue
            kind, value = piece
            surface = cs_noise.asr_value(value.surface) if self.spoken else value.surface
            out.append(value.lead + surface)
            made.append(self._plant(kind, value.canonical, surface, "customer"))
        if self.mixed and lang == self.customer.lang and self.rng.random() < 0.15:
            out.append(" " + self.rng.choice(cs_talk.MIX_WORDS[lang]))
        content = _tidy("".join(out))
        if self.paste_at is not None and len(self.turns) >= self.paste_at:
            self.paste_at = None
            lead = self.rng.choice(cs_customer_text.PASTE_LEAD[lang])
            pasted = cs_paste.paste(self.rng, lang, self.customer.app[0])
            content = f"{content} {lead}\n\n{pasted}"
        self.turns.append(Turn("user", content, self.clock, lang, [f.id for f in needs]))
        return made

    def _dress(self, pieces: list[Piece], lang: str, before: bool, scale: float) -> list[Piece]:
        """Context, asides and complaints around the point of a turn, up to a lognormal
        number of words; phone callers join them in run-on sentences, email has a
        greeting and a closing line. Plain words only: no fact's value."""
        r = self.rng
        median, sigma = CUSTOMER_WORDS[self.channel]
        target = scale * math.exp(r.gauss(math.log(median), sigma))
        words = sum(len(p.split()) if isinstance(p, str) else 2 for p in pieces)
        pool = r.sample(cs_customer_text.CONTEXT[lang], 6)
        head: list[str] = []
        tail: list[str] = []
        while pool and words + len(pool[-1].split()) / 2 < target:
            sentence = pool.pop()
            words += len(sentence.split())
            (head if before and r.random() < 0.35 else tail).append(sentence)
        mark = r.choice([". ", ", ", " "])

        def join() -> str:  # phone callers run their sentences on
            return " " + r.choice(cs_customer_text.RUN_ON[lang]) + " " if self.spoken else mark

        lead: list[Piece] = [s + join() for s in head]
        rest: list[Piece] = [join() + s for s in tail]
        if self.channel == "email":
            lead.insert(0, r.choice(cs_customer_text.EMAIL_OPEN[lang]) + " ")
            rest.append(" " + r.choice(cs_customer_text.EMAIL_CLOSE[lang]))
        return lead + pieces + rest

    def agent_says(self, text: str, fact: tuple[str, Value] | None = None) -> Fact | None:
        self._tick()
        lang, made, lead = self.customer.lang, None, ""
        if fact is not None:
            kind, value = fact
            surface = cs_noise.asr_value(value.surface) if self.spoken else value.surface
            made, lead = self._plant(kind, value.canonical, "", "agent"), value.lead
            made.surface = surface
            text = text.replace("{v}", "\0")
        content = cs_noise.asr(self.rng, text, lang, self.asr_level * 0.3) if self.spoken else text
        if made is not None:
            if "\0" not in content:  # the recognizer dropped the word: say it again
                content += " \0"
            content = content.replace("\0", lead + made.surface)
        self.turns.append(Turn("assistant", _tidy(content), self.clock, lang))
        return made

    def _bend(self, text: str, lang: str) -> str:
        if not text.strip():
            return text
        lead, trail = text[: len(text) - len(text.lstrip())], text[len(text.rstrip()) :]
        core = text.strip()
        if self.spoken:
            core = cs_noise.asr(self.rng, core, lang, self.asr_level)
        elif self.channel == "whatsapp":
            core = cs_noise.chat(self.rng, core, lang, 0.75)
        elif self.channel == "webchat":
            core = cs_noise.chat(self.rng, core, lang, 0.4)
        else:
            core = cs_noise.chat(self.rng, core, lang, 0.05)
        # Punctuation that parted this text from a fact's value ("{v}, digitei errado")
        # leaves a space when the noise drops it, never the two glued together.
        if core and text.strip()[0] in PARTING and core[0] not in PARTING + " ":
            core = " " + core
        if core and text.strip()[-1] in PARTING and core[-1] not in PARTING + " ":
            core += " "
        return lead + core + trail

    def _plant(self, kind: str, canonical: str, surface: str, by: str) -> Fact:
        fact = Fact(
            f"f{len(self.customer.facts) + 1}",
            kind,
            canonical,
            surface,
            by,
            len(self.turns),
            self.episode,
        )
        self.customer.facts.append(fact)
        return fact

    def _tick(self) -> None:
        low, high = GAP_SECONDS[self.channel]
        if self.turns:
            self.clock += timedelta(seconds=self.rng.randint(low, high))

    def jump(self) -> None:
        """The conversation is picked up again hours or days later."""
        hours = self.rng.choice([self.rng.uniform(2, 20), self.rng.uniform(24, 144)])
        self.clock += timedelta(hours=hours)

    # -- values --------------------------------------------------------------
    def value(self, kind: str) -> Value:
        r, lang, c, spoken = self.rng, self.customer.lang, self.customer, self.spoken
        makers: dict[str, Callable[[], Value]] = {
            "name": lambda: cs_values.name_value(r, c.first, c.last),
            "city": lambda: cs_values.city_value(r, lang),
            "address": lambda: cs_values.address_value(r, lang, spoken),
            "order": lambda: cs_values.order_value(r, c.app[2], spoken, lang),
            "sku": lambda: cs_values.sku_value(r, lang, spoken),
            "amount": lambda: cs_values.amount_value(r, lang, spoken),
            "promise": lambda: cs_values.amount_value(r, lang, spoken),
            "date": lambda: cs_values.date_value(
                r, (self.clock - timedelta(days=r.randint(2, 40))).date(), lang, spoken
            ),
            "deadline": lambda: cs_values.date_value(
                r, cs_values.business_days_after(self.clock.date(), r.randint(1, 10)), lang, spoken
            ),
            "email": lambda: cs_values.email_value(r, c.first, c.last, spoken, lang),
            "phone": lambda: cs_values.phone_value(r, lang, spoken),
        }
        return makers[kind]()

    def template(self, text: str, kind: str, value: Value) -> list[Piece]:
        before, _, after = text.partition("{v}")
        return [before, (kind, value), after]


PARTING = ".,;:!?)("


def _tidy(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()
