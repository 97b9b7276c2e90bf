"""Which facts a window shows, and where: pure functions the engine calls.

A caller sees the facts within its scopes, and whatever the customer stated in this
very conversation. Facts known before the conversation began sit at the top with the
earlier-episode cards (fixed for the whole conversation); facts heard in it follow the
running summary once their turns are folded. Either block changes only at compaction
(or when a correction replaces a shown fact), so the prompt's prefix stays cached.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from gateway.context.people_text import plain
from gateway.context.prompts import one_line
from gateway.context.summaries import clip_text
from gateway.context.types import Episode, Fact, Memory, heard_in_conversation
from gateway.messages import message_text, role

_WORD = re.compile(r"[a-z0-9]+(?:[-_][a-z0-9]+)*")


def subject_words(opening: Sequence[Any], summary: str) -> set[str]:
    """The conversation's subject as words: its opening request and running summary.
    Both change only at compaction, so the facts chosen (and the cached prefix they sit
    in) stay the same from one turn to the next."""
    words = set(_WORD.findall(summary.lower()))
    for message in opening:
        words.update(_WORD.findall(message_text(message).lower()))
    return words


def visible_facts(
    facts: Sequence[Fact],
    scopes: Sequence[str],
    transcript: Sequence[Any],
    started: float,
    conversation: str = "",
) -> list[Fact]:
    """The facts this caller may see: those within its scopes, and whatever the customer
    stated in this very conversation (theirs to see in it, whatever the scopes: the app
    sent those turns itself). Scopes guard what comes from elsewhere: other
    conversations, the facts API, verified data. A fact heard in an earlier conversation
    stays out even when this one's text states its value: a caller listing guesses
    would otherwise learn which one the customer's verified email is. So does one heard
    in another conversation of theirs running beside this one (`Fact.heard_in`): heard
    after this one began, its value listed here among guesses is still not theirs to
    see here. A fact stored before `heard_in` was recorded goes by when it was heard."""
    allowed = set(scopes)
    visible = [f for f in facts if f.scope in allowed]
    heard = [
        f
        for f in facts
        if f.scope not in allowed
        and f.extracted
        and f.value
        and heard_in_conversation(f, started, conversation)
    ]
    if heard:
        # one line, as a fact's value is: an address said over two lines is found
        # as facts are read (plain: a zero-width space or an accent typed apart aside).
        # Only the part of each message facts are read from (`clip_text`): a fact heard
        # here is in it, and a pasted megabyte is not walked word by word on every pass
        # (9 MB: ~0.1 s a pass, on the event loop).
        said = one_line(
            plain("\n".join(clip_text(message_text(m)) for m in transcript if role(m) == "user"))
        )
        visible += [f for f in heard if f.value in said]
    return visible


def _heard_block(
    facts: list[Fact], memory: Memory, opening: Sequence[Any], summarized: bool
) -> list[Fact]:
    """The facts heard in this conversation that the prompt shows. Heard in its turns,
    a fact is in them verbatim until they are folded: it is shown from the compaction
    that folded them (heard by then, `memory.facts_until`), unless the opening request,
    always verbatim, states it. So the block changes only at compaction, when the
    cached prefix after the summary is rebuilt anyway. The app's facts always show."""
    if not summarized:
        return [f for f in facts if not f.extracted]
    text = one_line(plain("\n".join(message_text(m) for m in opening))).casefold()
    return [
        f
        for f in facts
        if not f.extracted
        or (f.created_at <= memory.facts_until and f.value.casefold() not in text)
    ]


def showable(
    facts: Sequence[Fact], started: float, memory: Memory, opening: Sequence[Any], summarized: bool
) -> list[Fact]:
    """The facts `shown_facts` may show: all but those heard in this conversation whose
    turns are still verbatim (or that the opening request states)."""
    heard = _heard_block([f for f in facts if f.created_at >= started], memory, opening, summarized)
    kept = {id(f) for f in heard}
    return [f for f in facts if f.created_at < started or id(f) in kept]


def shown_facts(
    facts: Sequence[Fact],
    episodes: Sequence[Episode],
    started: float,
    memory: Memory,
    opening: Sequence[Any],
    summarized: bool,
) -> tuple[list[Fact], list[Fact]]:
    """(the facts shown at the top, with the cards; those shown after the summary)."""
    cards = "\n".join(e.summary for e in episodes).casefold()
    # An earlier fact a shown card already states is not said twice.
    earlier = [
        f for f in facts if f.created_at < started and not (f.value and f.value.casefold() in cards)
    ]
    heard = _heard_block([f for f in facts if f.created_at >= started], memory, opening, summarized)
    # Before anything is summarized the app's facts put during the conversation go with
    # the earlier ones: the last turns stay last.
    return ([*earlier, *heard], []) if not summarized else (earlier, heard)
