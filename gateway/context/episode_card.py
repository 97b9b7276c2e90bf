"""An earlier conversation as a short card for the prompt of a new one. Pure.

Not an extractive summary (it copies whole turns): channel, day, topic, the facts by
kind, what the agent promised and the outcome, in one line such as

  [phone, 2025-03-02] topic: o app não deixa eu entrar | customer: name Diego; order
  #824883 | agent promised: reembolso de R$ 149,90 by 21/02 | outcome: já fiz o estorno

Fact values are shown as written (whitespace collapsed): later code finds a fact, and
withholds it, by its value. No message of 40 characters or more appears whole in it.
Nothing taken from what the customer or the agent wrote can forge the card's " | " or a
label: inside a segment a bar is "/", and words or a value holding a label ("outcome:")
are quoted.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from gateway.context.linear_regex import LinearPattern, compile_linear
from gateway.context.people import shown_value
from gateway.context.prompts import (
    CARD_BARS,
    CARD_QUOTES,
    channel_name,
    one_line,
    single_quoted,
    unbarred,
)
from gateway.context.summaries import summary_lines
from gateway.context.types import Fact, fact_kind
from gateway.messages import message_text, role

HEAD_WORDS = 15  # a topic or an outcome: at most this many words of a message
WHOLE_WORDS = 8  # a phrase that is a whole message keeps this many of its words
WHOLE_CHARS = 40  # a message this long never appears whole in a card
TOPIC_FLOOR = 5  # words of the topic that fitting never drops (only the final cut)
TOPIC_MIN_WORDS = 4  # a first sentence shorter than this ("Help!") takes the next one too
NO_OUTCOME = "no outcome recorded"
OUTCOME_MESSAGES = 3  # the agent's last messages read for an outcome, newest first
# The customer's facts show in this order of kinds (others after them), then promises.
CUSTOMER_KINDS: tuple[str, ...] = ("name", "city", "address", "phone", "email", "order")
CUSTOMER_KINDS += ("sku", "amount", "date", "problem")  # problems past the first (the topic)
AGENT_KINDS = ("promise", "deadline")
# Characters of a message read for its topic or outcome: both are said near its start.
SCAN = 4096
ELLIPSIS = "..."
CUT_MARK = " [...]"
SEPARATOR = " | "
# What reads as the card's own separator, label or quote when a customer or an agent
# writes it (the full-width and other look-alike forms too): never the card's inside a
# segment (_said, _shown).
# A label: a word and its colon ("agent promised:"); "10:30" and "https://" are none.
_LABEL = re.compile(r"[^\W\d_] ?[:\uff1a\ufe55\ufe13\ua789\u2236\u02f8](?!/)")

_LETTER = "A-Za-zÀ-ÖØ-öø-ÿ"  # RE2's \b and \w are ASCII only
_GREETINGS = (
    "good morning|good afternoon|good evening|good day|hello there|hi there|hey there"
    "|hello|hiya|hi|hey|greetings|how are you|hope you are well|hope you're well"
    "|bom dia|boa tarde|boa noite|olá|ola|oie|oi|opa|e aí|e ai|tudo bem|tudo bom|tudo certo"
    "|como vai|buenos días|buenos dias|buenas tardes|buenas noches|buenas|hola|qué tal"
    "|que tal|cómo estás|cómo está|como estas|como esta|saludos"
)
# Client text meets these: RE2, linear in the text (gateway.context.linear_regex).
GREETING = compile_linear(
    rf"^(?:[\s¡¿]*(?:{_GREETINGS})(?:[\s,.!?¡¿;:~-]+|$))+",
    ignore_case=True,
)
# What an agent did or decided: en, pt, es. Stems match any ending ("refund", "refunded");
# short words must stand alone ("já", not "jázigo").
_CUE_STEMS = (
    "refund|reimburs|replac|escalat|resolv|ticket|credit|cancel|ship|dispatch|issued"
    "|process|schedul|arrang|fixed|sent|forward|case number"
    "|reembols|estorn|troca|trocar|substitu|protocol|chamado|encaminh|agend|devolu|envia"
    "|enviamos|enviei|crédito|aprovad|aprovamos|liberad|abrimos"
    "|reemplaz|devoluc|devoluci|solucion|escalad|reenv|le enviamos|te enviamos"
)
_CUE_WORDS = (
    "já|ya|vou|vamos|voy|hemos|he enviado|abri|feito|listo|hecho|done"
    "|(?:i|we)(?:['\u2019]ll|['\u2019]ve| will| have)"  # ' or a typographic apostrophe
)
OUTCOME_CUE = compile_linear(
    rf"(?:^|[^{_LETTER}])(?:{_CUE_STEMS})"
    rf"|(?:^|[^{_LETTER}])(?:{_CUE_WORDS})(?:$|[^{_LETTER}])",
    ignore_case=True,
)
# Sentence ends need the space after them: "R$ 149.90" and "v2.1" are not two sentences.
SENTENCE_END = compile_linear(r"[.!?…]+(?:\s+|$)")
CLAUSE_END = compile_linear(r"[.!?…]+(?:\s+|$)|[,;]\s+|\s+[\x{2013}\x{2014}-]+\s+")
_BREAK = "\x00"
_EDGE_PUNCTUATION = " .!?…,;:¡¿"
_CLAUSE_MARKS = frozenset(".!?…,;:-")  # a mark right after a name ends the introduction


@dataclass(frozen=True)
class _Said:
    role: str
    text: str  # whitespace collapsed


@dataclass(frozen=True)
class _Entry:
    kind: str
    value: str
    age: tuple[float, int]  # (created_at, position): oldest first


@dataclass(frozen=True)
class _Card:
    head: str
    topic: tuple[str, ...]  # words
    customer: tuple[_Entry, ...]
    agent: tuple[_Entry, ...]
    outcome: tuple[str, ...]  # words; NO_OUTCOME is one word, never cut to "no"
    topic_cut: bool = False
    outcome_cut: bool = False

    def render(self) -> str:
        segments = []
        if self.topic:
            segments.append(f"topic: {_said(_words(self.topic, self.topic_cut))}")
        if self.customer:
            entries = "; ".join(f"{e.kind} {_value(e.value)}" for e in self.customer)
            segments.append(f"customer: {entries}")
        if self.agent:
            segments.append(f"agent promised: {_promises(self.agent)}")
        if self.outcome:
            segments.append(f"outcome: {_said(_words(self.outcome, self.outcome_cut))}")
        return f"{self.head} {SEPARATOR.join(segments)}" if segments else self.head

    def without(self, dropped: Sequence[_Entry]) -> _Card:
        gone = set(dropped)
        return replace(
            self,
            customer=tuple(e for e in self.customer if e not in gone),
            agent=tuple(e for e in self.agent if e not in gone),
        )


def episode_card(
    channel: str,
    ended_at: float,
    facts: Sequence[Fact],
    turns: Sequence[Any],
    summary: str,
    ceiling: int,
    count: Callable[[str], int],
) -> str:
    """One conversation as a card of at most `ceiling` tokens (by `count`). `facts` are
    its current facts (one per kind and value, newest wins); `turns` the messages still
    known verbatim; `summary` its running summary, read only when the turns hold no
    customer message (topic) or no agent message (outcome)."""
    said = [_Said(role(m), text) for m in turns if (text := one_line(message_text(m)))]
    wholes = sorted({s.text for s in said if len(s.text) >= WHOLE_CHARS}, key=len, reverse=True)
    problem = next((f for f in facts if fact_kind(f) == "problem" and one_line(f.value)), None)
    customer, agent = _entries([f for f in facts if f is not problem], wholes)
    names = [v for f in facts if fact_kind(f) == "name" and (v := one_line(f.value))]
    topic = one_line(problem.value) if problem else _topic(said, summary, names)
    card = _Card(
        head=_header(channel, ended_at),
        topic=tuple(_unquoted(topic, wholes).split()),
        customer=customer,
        agent=agent,
        outcome=_outcome(said, summary, wholes),
    )
    text = _fit(card, ceiling, count)
    # Pieces that quote no message alone may still do so side by side: shorten that too.
    while (safe := _unquoted(text, wholes)) != text:
        text = safe if count(safe) <= ceiling else _cut(safe, ceiling, count)
    return text


def unquoted(text: str, turns: Sequence[Any]) -> str:
    """`text` (a model's card) with every message of `turns` it quotes whole shortened."""
    said = (one_line(message_text(m)) for m in turns)
    wholes = sorted({t for t in said if len(t) >= WHOLE_CHARS}, key=len, reverse=True)
    return _unquoted(one_line(text), wholes)


def _header(channel: str, ended_at: float) -> str:
    """Channel and day (UTC), the day left out when the end is unknown or absurd."""
    name = channel_name(channel) or "unknown"
    try:
        known = math.isfinite(ended_at) and ended_at > 0
        day = time.strftime("%Y-%m-%d", time.gmtime(ended_at)) if known else ""
    except (OverflowError, OSError, ValueError, TypeError):
        day = ""
    return f"[{name}, {day}]" if day else f"[{name}]"


def _entries(
    facts: Sequence[Fact], wholes: Sequence[str]
) -> tuple[tuple[_Entry, ...], tuple[_Entry, ...]]:
    """The facts as card entries, customer's by kind then age, agent's by age. A value
    that holds a whole message is left out: cut, it would no longer be its value."""
    seen: set[tuple[str, str]] = set()
    entries: list[_Entry] = []
    for position, fact in enumerate(facts):
        kind = fact_kind(fact)
        value = one_line(shown_value(fact) if fact.extracted else fact.value)
        if not value or (kind, value) in seen or any(w in value for w in wholes):
            continue
        if not _shown(value):  # its bar or quote would be rewritten: no longer its value
            continue
        seen.add((kind, value))
        entries.append(_Entry(kind, value, (fact.created_at, position)))
    rank = {kind: n for n, kind in enumerate(CUSTOMER_KINDS)}
    customer = [e for e in entries if e.kind not in AGENT_KINDS]
    customer.sort(key=lambda e: (rank.get(e.kind, len(rank)), e.age))
    agent = sorted((e for e in entries if e.kind in AGENT_KINDS), key=lambda e: e.age)
    return tuple(customer), tuple(agent)


# A deadline said with its cue ("até 21/02") keeps it; a bare date gets "by".
_DEADLINE_CUE = compile_linear(
    r"(?i)^(?:by|until|within|before|no later|at|em|até|ate|antes|dentro|hasta|para|en|por)(?:\s|$)"
)


def _promises(agent: Sequence[_Entry]) -> str:
    """Promises, each followed by the deadlines stated after it: "refund by 21/02"."""
    out = ""
    for entry in agent:
        if entry.kind == "deadline":
            value = _value(entry.value)
            said = value if _DEADLINE_CUE.search(entry.value) else f"by {value}"
            out += f"{' ' if out else ''}{said}"
        else:
            out += f"{'; ' if out else ''}{_value(entry.value)}"
    return out


def _said(text: str) -> str:
    """A customer's or an agent's words as a segment: a bar made "/", so they cannot end
    the segment, and quoted when they hold a label, so "outcome: refund approved" inside
    a topic reads as their words (their own double quotes made single)."""
    text = unbarred(text)
    return f'"{single_quoted(text)}"' if _LABEL.search(text) else text


def _shown(value: str) -> bool:
    """Whether a fact's value can be shown as written (a later step withholds it by its
    value): one holding a bar or a double quote is left out; one holding a label is
    shown quoted (`_value`)."""
    return not any(c in CARD_BARS or c in CARD_QUOTES for c in value)


def _value(value: str) -> str:
    return f'"{value}"' if _LABEL.search(value) else value


def _words(words: Sequence[str], cut: bool) -> str:
    return " ".join(words) + (ELLIPSIS if cut else "")


def _topic(said: Sequence[_Said], summary: str, names: Sequence[str] = ()) -> str:
    """The head of the first customer message with something past its greetings and the
    customer's introduction (the card shows the name); else of the summary's first
    customer line."""
    asked = [s.text for s in said if s.role == "user"] or _summary_lines(summary, "customer")
    for text in asked:
        match = GREETING.search(text[:SCAN])
        body = _introduced(text[len(match.group(0)) :] if match else text, names)
        if body.strip():
            return _head(body, text)
    return ""


def _introduced(body: str, names: Sequence[str]) -> str:
    """`body` past the customer's introduction ("aqui quem fala é a Beatriz, ...", "I'm
    Kevin Moore."): everything up to a name the card shows, when it ends a clause within
    the first HEAD_WORDS words and something follows it ("the parcel for Ana never came"
    keeps its name)."""
    words = body.split()
    head = " ".join(words[:HEAD_WORDS])
    ends = []
    for name in names:
        # the name as a literal, any case (offsets stay the head's: no case-folding)
        found = re.search(re.escape(name), head, re.IGNORECASE)
        if found is None:
            continue
        at, end = found.span()
        if _whole_word(head, at, end) and head[end : end + 1] in _CLAUSE_MARKS:
            ends.append(end + 1)
    if not ends:
        return body
    rest = " ".join([head[max(ends) :], *words[HEAD_WORDS:]]).strip(_EDGE_PUNCTUATION + "-")
    return rest if rest else body


def _whole_word(text: str, start: int, end: int) -> bool:
    return (start == 0 or not text[start - 1].isalnum()) and (
        end == len(text) or not text[end].isalnum()
    )


def _head(body: str, message: str) -> str:
    """The first sentence of `body` (with the next while it is under TOPIC_MIN_WORDS),
    at most HEAD_WORDS words; cut further when that is all of `message`."""
    scanned = body[:SCAN]
    wanted = 0
    for sentence in _split(SENTENCE_END, scanned):
        wanted += len(sentence.split())
        if wanted >= TOPIC_MIN_WORDS:
            break
    words = scanned.split()
    if wanted > HEAD_WORDS:
        return " ".join(words[:HEAD_WORDS]) + ELLIPSIS
    return _phrase(" ".join(words[:wanted]), message)


def _outcome(said: Sequence[_Said], summary: str, wholes: Sequence[str]) -> tuple[str, ...]:
    """A clause that says what was done or decided, from the newest agent message that
    has one among the last OUTCOME_MESSAGES (a closing "anything else?" decides
    nothing); the summary's agent lines, newest first, when the turns hold no agent
    message."""
    last = [s.text for s in said if s.role == "assistant"][::-1][:OUTCOME_MESSAGES]
    for text in last or _summary_lines(summary, "agent")[::-1]:
        for clause in _split(CLAUSE_END, text[:SCAN]):
            if OUTCOME_CUE.search(clause):
                words = clause.split()
                if len(words) > HEAD_WORDS:
                    phrase = " ".join(words[:HEAD_WORDS]) + ELLIPSIS
                else:
                    phrase = _phrase(clause, text)
                return tuple(_unquoted(phrase, wholes).split())
    return (NO_OUTCOME,)


def _phrase(phrase: str, message: str) -> str:
    """`phrase`, or when it is all of `message` (give or take end punctuation) and long
    enough to be a turn copied whole, its first WHOLE_WORDS words."""
    phrase = phrase.strip(" ,;:").rstrip(".")
    if phrase.strip(_EDGE_PUNCTUATION) != message.strip(_EDGE_PUNCTUATION):
        return phrase
    if len(phrase.split()) > WHOLE_WORDS or len(phrase) >= WHOLE_CHARS:
        return _shortened(phrase)
    return phrase


def _summary_lines(summary: str, label: str) -> list[str]:
    """The text of a running summary's `label: ...` lines ("customer", "agent")."""
    out = []
    for line in summary_lines(summary):
        who, sep, rest = line.partition(": ")
        text = one_line(rest)
        if sep and who.strip() == label and text:
            out.append(text)
    return out


def _split(pattern: LinearPattern, text: str) -> list[str]:
    marked = pattern.sub(lambda _match: _BREAK, text.replace(_BREAK, " "))
    return [part.strip() for part in marked.split(_BREAK) if part.strip()]


def _unquoted(text: str, wholes: Sequence[str]) -> str:
    """`text` with every whole message in it shortened (each round shortens the text,
    so this ends; a round can join pieces into another message, hence the rounds)."""
    quoted = next((w for w in wholes if w in text), None)
    while quoted is not None:
        text = text.replace(quoted, _shortened(quoted), 1)
        quoted = next((w for w in wholes if w in text), None)
    return text


def _shortened(phrase: str) -> str:
    """Strictly shorter than `phrase` and not containing it: its first WHOLE_WORDS words
    (one fewer than it has, if fewer) and an ellipsis, else its first half."""
    words = phrase.split()
    head = " ".join(words[: min(WHOLE_WORDS, len(words) - 1)])
    if not head or len(head) + len(ELLIPSIS) >= len(phrase):
        head = phrase[: len(phrase) // 2].rstrip()
    return head + ELLIPSIS


def _fit(card: _Card, ceiling: int, count: Callable[[str], int]) -> str:
    """The card within `ceiling` tokens. Each stage gives up the least it can: outcome
    words, then facts (older values of a kind first, then the others oldest first, names
    never), then topic words past TOPIC_FLOOR; last a cut between words."""

    def fits(shrunk: _Card) -> bool:
        return count(shrunk.render()) <= ceiling

    for stage in (_outcome_stage, _facts_stage, _topic_stage):
        steps, shrunk = stage(card)
        least = _fewest(steps, shrunk, fits)
        if least is not None:
            return shrunk(least).render()
        card = shrunk(steps)
    return _cut(card.render(), ceiling, count)


_Stage = tuple[int, Callable[[int], _Card]]


def _outcome_stage(card: _Card) -> _Stage:
    size = len(card.outcome)
    return size, lambda n: replace(card, outcome=card.outcome[: size - n], outcome_cut=n > 0)


def _facts_stage(card: _Card) -> _Stage:
    order = _drop_order(card)
    return len(order), lambda n: card.without(order[:n])


def _topic_stage(card: _Card) -> _Stage:
    size = len(card.topic)
    steps = max(0, size - TOPIC_FLOOR)
    return steps, lambda n: replace(
        card, topic=card.topic[: size - n], topic_cut=card.topic_cut or n > 0
    )


def _drop_order(card: _Card) -> list[_Entry]:
    """Facts in the order fitting gives them up: all but the newest value of each kind
    with several (oldest first), then the other customer facts oldest first, then the
    deadline and last the promise ("by 21/02" alone says nothing). Names stay."""
    entries = [e for e in (*card.customer, *card.agent) if e.kind != "name"]
    newest: dict[str, _Entry] = {}
    for entry in entries:
        if entry.kind not in newest or entry.age > newest[entry.kind].age:
            newest[entry.kind] = entry
    older = sorted((e for e in entries if newest[e.kind] is not e), key=lambda e: e.age)
    rest = [e for e in entries if newest[e.kind] is e]
    rest.sort(key=lambda e: (e.kind in AGENT_KINDS, e.kind == "promise", e.age))
    return older + rest


def _fewest(
    steps: int, shrunk: Callable[[int], _Card], fits: Callable[[_Card], bool]
) -> int | None:
    """The fewest steps (0..steps) after which the card fits, None if not even after all.
    Binary search: a few counts, not one per step. Every answer was counted."""
    if not fits(shrunk(steps)):
        return None
    low, high = 0, steps
    while low < high:
        middle = (low + high) // 2
        if fits(shrunk(middle)):
            high = middle
        else:
            low = middle + 1
    return low


def _cut(text: str, ceiling: int, count: Callable[[str], int]) -> str:
    """The longest head of `text` with its mark that fits `ceiling`, cut between words
    when that fits too; always shorter than `text` ("" when nothing fits). Binary search
    on characters, as summaries.fit does."""
    low, high = 0, max(0, len(text) - len(CUT_MARK) - 1)
    while low < high:
        middle = (low + high + 1) // 2
        if count(text[:middle].rstrip() + CUT_MARK) <= ceiling:
            low = middle
        else:
            high = middle - 1
    head = text[:low].rstrip()
    if not head:
        return ""
    if not text[low].isspace() and " " in head:
        between_words = head.rsplit(" ", 1)[0].rstrip()
        if count(between_words + CUT_MARK) <= ceiling:
            head = between_words
    return head + CUT_MARK
