"""Loops and exit triggers (seed 002). Pure: no I/O, no clock.

A loop turn: the customer's message asks again what one of the recent turns asked AND
the reply answers as that turn's reply did (the gateway's own handoff text is never a
reply here). N loop turns among the last M escalate (`loop`; M = N: in a row); so does
passing the class's turn ceiling with no progress in the last K turns (`turn_ceiling`).
Compressing does not fix a loop; offering a human does.

What is compared is what is asked and answered, not the boilerplate around it:
- words are content units of the conversation's language (`gateway.loops.words`:
  Snowball stems, the language's stop words dropped, accents folded, numbers,
  identifiers);
- formulas are learned from the conversation itself: a sentence said again by the same
  side around new content ("Posso ajudar em algo mais?" after a different answer each
  time) is boilerplate, and is left out of the comparisons from that turn on;
- "asks again" is coverage: the weighted share of the customer's message already in one
  earlier turn of the window (its question or its answer: a reworded re-ask reuses words
  of either), and "answers as before" the share of the reply in that turn's reply.
  Identifiers weigh more, and a turn that brings an identifier the window has not seen
  (a protocol, a new order) moves things on;
- a loop reworded several times draws each wording from a different earlier one, so a
  turn also repeats when the window as a whole holds most of it: the customer's message
  covered by every side of the recent turns together and the reply by the recent replies
  together, each past its own (higher) threshold.
"""

from __future__ import annotations

import base64
import sys
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from gateway.loops.words import (
    LANGUAGES,
    Sentence,
    language,
    parse,
    sentences,
    union,
    votes,
    whole,
)

WINDOW = 6  # recent turns a message is compared with
RECENT_TURNS = 16  # loop turns remembered for `within` (a setting above it counts these)
RECENT_MASK = (1 << RECENT_TURNS) - 1
MAX_FORMULAS = 64
# Per message, what is kept and compared: a 4 KB message (words.MESSAGE_CHARS) rarely
# holds more; the stored window stays under ~20 KB whatever is pasted.
MAX_WORDS, MAX_IDENTIFIERS, MAX_SENTENCES = 256, 32, 64
IDENTIFIER_WEIGHT = 2
FORMULA_NEW = 0.5  # the rest of a message covered less than this is new content
FORMULA_TURNS = 2  # a sentence said in this many recent messages of a side is a formula
# A reply this covered by an earlier one answers again: the customer's sentences said again
# beside it are their question, not a formula.
ANSWERED_AGAIN = 0.8
LEAST_USER, LEAST_REPLY = 2, 5  # content units (identifiers weighted) to judge a message by


def _ones(count: int) -> int:
    """`count` loop turns in a row, as `recent` bits."""
    return (1 << min(max(count, 0), RECENT_TURNS)) - 1


def loop_turns_within(recent: int, turns: int) -> int:
    """Loop turns among the last `turns`."""
    return (recent & _ones(turns)).bit_count()


def _bounded(units: frozenset[int], most: int) -> frozenset[int]:
    """At most `most` units (the smallest: any fixed subset keeps the state bounded)."""
    return units if len(units) <= most else frozenset(sorted(units)[:most])


def _pack(units: Iterable[int]) -> str:
    values = array("I", units)
    if sys.byteorder == "big":
        values.byteswap()
    return base64.b64encode(values.tobytes()).decode()


# A stored state is read by the turn and by any merge that meets it: the last few are
# kept decoded (a full window decodes to ~300 KB of sets, so only a few).
@lru_cache(maxsize=64)
def _unpack_list(text: str) -> tuple[int, ...]:
    values = array("I")
    values.frombytes(base64.b64decode(text, validate=True))
    if sys.byteorder == "big":  # stored little-endian, whatever the replica
        values.byteswap()
    return tuple(values)


@dataclass(frozen=True)
class Side:
    """One message as stored: its content units, identifiers and sentence keys."""

    words: frozenset[int] = frozenset()
    identifiers: frozenset[int] = frozenset()
    keys: frozenset[int] = frozenset()
    whole: int = 0  # the whole message, stop words included (0: no words at all)

    @classmethod
    def of(cls, said: list[Sentence], formulas: frozenset[int], whole: int) -> Side:
        kept = [s for s in said if s.key not in formulas]
        return cls(
            _bounded(union(s.words for s in kept), MAX_WORDS),
            _bounded(union(s.identifiers for s in kept), MAX_IDENTIFIERS),
            _bounded(frozenset(s.key for s in said), MAX_SENTENCES),
            whole,
        )

    def weight(self) -> int:
        return len(self.words) + IDENTIFIER_WEIGHT * len(self.identifiers)


def _pack_window(turns: Iterable[tuple[Side, Side]]) -> str:
    """Every side of the window in one array: per side its whole-message unit and three
    counts, then its units."""
    values: list[int] = []
    for pair in turns:
        for side in pair:
            values += (side.whole, len(side.words), len(side.identifiers), len(side.keys))
            values += (*side.words, *side.identifiers, *side.keys)
    return _pack(values)


@lru_cache(maxsize=64)
def _unpack_window(text: str) -> tuple[tuple[Side, Side], ...]:
    values, at, sides = _unpack_list(text), 0, []
    while at + 4 <= len(values):
        whole, words, ids, keys = values[at : at + 4]
        at += 4
        end = at + words + ids + keys
        if end > len(values):
            raise ValueError("a truncated loop window")
        sides.append(
            Side(
                frozenset(values[at : at + words]),
                frozenset(values[at + words : at + words + ids]),
                frozenset(values[at + words + ids : end]),
                whole,
            )
        )
        at = end
    return tuple(zip(sides[::2], sides[1::2], strict=False))


def coverage(side: Side, words: frozenset[int], identifiers: frozenset[int]) -> float:
    """The weighted share of `side`'s units found in `words` / `identifiers`."""
    total = side.weight()
    if not total:
        return 0.0
    found = len(side.words & words) + IDENTIFIER_WEIGHT * len(side.identifiers & identifiers)
    return found / total


@dataclass(frozen=True)
class LoopState:
    turns: tuple[tuple[Side, Side], ...] = ()  # the last WINDOW turns: (customer, reply)
    formulas: tuple[int, ...] = ()  # oldest first
    tally: tuple[tuple[str, int], ...] = ()  # the conversation's language votes
    streak: int = 0  # loop turns in a row
    recent: int = 0  # bit i: the turn i turns back was a loop turn (bit 0: the last one)
    loop_turns: int = 0  # in this conversation, for the record
    last_progress_turn: int = 0

    def to_json(self) -> dict[str, object]:
        return {
            "window": _pack_window(self.turns),
            "formulas": _pack(self.formulas),
            "tally": dict(self.tally),
            "streak": self.streak,
            "recent": self.recent,
            "loop_turns": self.loop_turns,
            "last_progress_turn": self.last_progress_turn,
        }

    @classmethod
    def counters(cls, data: Any) -> LoopState:
        """The stored counters alone (what `decide` reads), the window left encoded; an
        unreadable record starts again at zero."""
        if not isinstance(data, dict):
            return cls()
        try:
            streak = int(str(data.get("streak", 0)))
            # a state stored before `recent` was kept: its streak is its last turns
            recent = data.get("recent")
            return cls(
                streak=streak,
                recent=max(int(str(recent)), 0) & RECENT_MASK
                if recent is not None
                else _ones(streak),
                loop_turns=int(str(data.get("loop_turns", 0))),
                last_progress_turn=int(str(data.get("last_progress_turn", 0))),
            )
        except ValueError:
            return cls()

    @classmethod
    def from_json(cls, data: Any) -> LoopState:
        """A stored state; one of an older layout (or an unreadable part) keeps what can
        be read and starts a new window."""
        state = cls.counters(data)
        if not isinstance(data, dict):
            return state
        try:
            tally = data.get("tally") or {}
            return replace(
                state,
                turns=_unpack_window(str(data.get("window") or "")),
                formulas=_unpack_list(str(data.get("formulas") or "")),
                tally=tuple((k, int(v)) for k, v in sorted(tally.items()) if k in LANGUAGES),
            )
        except (ValueError, TypeError, AttributeError):  # binascii.Error is a ValueError
            return state


@dataclass(frozen=True)
class LoopSettings:
    """A class's loop thresholds. No defaults: the shipped policy (context.yaml, `loop`)
    states them, and gateway.context.policy resolves its layers into this."""

    user_similarity: float  # a customer's message this covered by one recent turn re-asks it
    reply_similarity: float  # and a reply this covered by that turn's reply re-answers it
    consecutive: int  # loop turns that escalate, among the last `within` (in a row if fewer)
    # or: the message this covered by the whole window and the reply this covered by the
    # recent replies together (a rewording drawn from several earlier ones)
    window_user_similarity: float
    window_reply_similarity: float
    within: int

    def escalates(self, recent: int) -> bool:
        """`consecutive` loop turns among the last max(within, consecutive)."""
        return loop_turns_within(recent, max(self.within, self.consecutive)) >= self.consecutive


@dataclass(frozen=True)
class Turn:
    """One turn read against the window: the figures the decision is made of."""

    user: Side
    reply: Side
    # per earlier turn of the window, oldest first: how much of the customer's message
    # that turn holds (either side), and how much of the reply its reply holds
    against: tuple[tuple[float, float], ...]
    new_identifier: bool  # either side names an identifier the window has not seen
    # how much of the customer's message the whole window holds (every side of its
    # turns), and how much of the reply the window's replies hold together
    spread: tuple[float, float] = (0.0, 0.0)

    def repeats(self, settings: LoopSettings) -> bool:
        """A re-ask of one recent turn answered again as that turn was, or of the window
        as a whole answered again from its replies."""
        if self.new_identifier:
            return False
        user, reply = self.spread
        if user >= settings.window_user_similarity and reply >= settings.window_reply_similarity:
            return True
        return any(
            user >= settings.user_similarity and reply >= settings.reply_similarity
            for user, reply in self.against
        )


def _formulas(
    state: LoopState, said_user: list[Sentence], said_reply: list[Sentence], answered_again: bool
) -> set[int]:
    """This turn's new formulas: a sentence said again by the same side is a formula when
    it wraps new content at least as large as itself ("Posso ajudar em algo mais?" around
    a different answer each time), or when FORMULA_TURNS recent messages of that side
    said it already and this message says something else too. Never a sentence naming
    an identifier, and never the customer's while the reply repeats an earlier one (a
    question asked again with a new complaint around it is a loop, not a formula). A
    message that only repeats teaches nothing: a verbatim re-ask or re-answer is a loop."""
    found: set[int] = set()
    if not state.turns:
        return found
    known = frozenset(state.formulas)
    sides_of = (([u for u, _ in state.turns], said_user), ([r for _, r in state.turns], said_reply))
    for sides, said in sides_of[answered_again:]:
        again = {s.key: sum(s.key in x.keys for x in sides) for s in said if s.key not in known}
        again = {key: times for key, times in again.items() if times}
        if not again:
            continue
        rest = Side.of(said, known | again.keys(), 0)
        words, identifiers = union(x.words for x in sides), union(x.identifiers for x in sides)
        wraps_new = coverage(rest, words, identifiers) < FORMULA_NEW
        for sentence in said:
            times = again.get(sentence.key, 0)
            if sentence.identifiers or not times:
                continue
            if (wraps_new and len(sentence.words) <= rest.weight()) or (
                times >= FORMULA_TURNS and rest.weight()
            ):
                found.add(sentence.key)
    return found


def _against(user: Side, reply: Side, earlier: tuple[Side, Side]) -> tuple[float, float]:
    """(customer, reply) coverage by one earlier turn; a customer's message too short to
    judge is no repeat."""
    asked, answered = earlier
    user_covered = (
        coverage(user, asked.words | answered.words, asked.identifiers | answered.identifiers)
        if user.weight() >= LEAST_USER
        else 0.0
    )
    return user_covered, _answered_as(reply, answered)


def _spread(user: Side, reply: Side, window: tuple[tuple[Side, Side], ...]) -> tuple[float, float]:
    """(customer, reply) coverage by the window together: the customer's message by every
    side of its turns, the reply by its replies; 0 for a side too short to judge."""
    if not window:
        return 0.0, 0.0
    sides = [side for pair in window for side in pair]
    replies = [answered for _, answered in window]
    user_covered = (
        coverage(user, union(s.words for s in sides), union(s.identifiers for s in sides))
        if user.weight() >= LEAST_USER
        else 0.0
    )
    reply_covered = (
        coverage(reply, union(s.words for s in replies), union(s.identifiers for s in replies))
        if reply.weight() >= LEAST_REPLY
        else 0.0
    )
    return user_covered, reply_covered


def _answered_as(reply: Side, answered: Side) -> float:
    """How much of the reply an earlier reply holds: 0 for a reply too short to judge,
    unless it is that reply word for word, however little it says."""
    if reply.whole and reply.whole == answered.whole:
        return 1.0
    if reply.weight() < LEAST_REPLY:
        return 0.0
    return coverage(reply, answered.words, answered.identifiers)


def read_turn(state: LoopState, user_text: str, reply_text: str) -> tuple[LoopState, Turn]:
    """The turn's units, with the state's formulas and language updated by it (not yet
    the window)."""
    tally = dict(state.tally)
    parsed_user, parsed_reply = parse(user_text), parse(reply_text)
    for parsed in (parsed_user, parsed_reply):
        for lang, count in votes(parsed).items():
            tally[lang] = tally.get(lang, 0) + count
    lang = language(tally)
    said_user, said_reply = sentences(parsed_user, lang), sentences(parsed_reply, lang)
    wholes = whole(parsed_user), whole(parsed_reply)
    answered = Side.of(said_reply, frozenset(state.formulas), wholes[1])
    answered_again = any(_answered_as(answered, r) >= ANSWERED_AGAIN for _, r in state.turns)
    learned = _formulas(state, said_user, said_reply, answered_again)
    formulas = (*state.formulas, *sorted(learned))
    formulas = formulas[-MAX_FORMULAS:]
    known = frozenset(formulas)
    user, reply = Side.of(said_user, known, wholes[0]), Side.of(said_reply, known, wholes[1])
    all_ids = union(side.identifiers for pair in state.turns for side in pair)
    turn = Turn(
        user=user,
        reply=reply,
        against=tuple(_against(user, reply, earlier) for earlier in state.turns),
        new_identifier=bool(
            reply.identifiers - all_ids - user.identifiers or user.identifiers - all_ids
        ),
        spread=_spread(user, reply, state.turns),
    )
    return replace(state, formulas=formulas, tally=tuple(sorted(tally.items()))), turn


def observe_turn(
    state: LoopState, user_text: str, reply_text: str, settings: LoopSettings
) -> tuple[LoopState, bool]:
    """Fold one finished turn into the state; True when it was a loop turn."""
    state, turn = read_turn(state, user_text, reply_text)
    is_loop = turn.repeats(settings)
    return (
        replace(
            state,
            turns=(*state.turns, (turn.user, turn.reply))[-WINDOW:],
            streak=state.streak + 1 if is_loop else 0,
            recent=((state.recent << 1) | is_loop) & RECENT_MASK,
            loop_turns=state.loop_turns + int(is_loop),
        ),
        is_loop,
    )


@dataclass(frozen=True)
class Decision:
    escalation: str | None  # "loop", "turn_ceiling" or None
    state: LoopState = field(default_factory=LoopState)


def decide(
    state: LoopState,
    turn: int,
    turn_ceiling: int,
    progress_window: int,
    settings: LoopSettings,
) -> Decision:
    """At the start of turn `turn` (1-based): escalate? After an escalation the loop
    turns counted and the progress clock reset, so the conversation goes on and is not
    escalated again unless it loops (or stalls) again. The window stays: a loop that resumes right
    after the handoff offer is recognised at once."""
    if settings.escalates(state.recent):
        return Decision("loop", escalated(state, turn))
    stalled = turn - state.last_progress_turn > progress_window
    if turn > turn_ceiling and stalled:
        return Decision("turn_ceiling", escalated(state, turn))
    return Decision(None, state)


def escalated(state: LoopState, turn: int) -> LoopState:
    """The state once turn `turn` escalated and was answered: streak and progress clock
    start again."""
    return replace(state, streak=0, recent=0, last_progress_turn=turn)


def progressed(state: LoopState, turn: int) -> LoopState:
    """A fact learned or confirmed, or the app said so (`progress` / `resolved`)."""
    return replace(state, last_progress_turn=turn, streak=0, recent=0)


def _after(theirs: int, mine: int, added: int) -> int:
    """`recent` of their turns followed by the last `added` of mine."""
    if added <= 0:
        return theirs
    if added >= RECENT_TURNS:
        return mine
    return ((theirs << added) | (mine & _ones(added))) & RECENT_MASK


def _run(recent: int) -> int:
    """Loop turns in a row at the end of `recent`."""
    return (~recent & (recent + 1)).bit_length() - 1


def merge_states(base: Any, mine: Any, theirs: Any, added: int) -> dict[str, object]:
    """Two writers each folded their own turns into the state they both read (`base`):
    the result holds both. `theirs` was stored first; the `added` turns `mine` folded go
    after its turns, counters add both increments, the latest progress stands. Each
    state is as stored (JSON), or None."""
    b, m, t = (LoopState.from_json(x) for x in (base, mine, theirs))
    new = m.turns[len(m.turns) - min(added, len(m.turns)) :] if added > 0 else ()
    base_tally = dict(b.tally)
    tally = dict(t.tally)
    for lang, count in m.tally:
        tally[lang] = tally.get(lang, 0) + count - base_tally.get(lang, 0)
    known = set(t.formulas)
    formulas = t.formulas + tuple(f for f in m.formulas if f not in known)
    # mine escalated or progressed (an event adds no turn, and may leave the progress
    # turn where an escalation put it): its loop turns since count, not theirs
    restarted = m.last_progress_turn > b.last_progress_turn or (
        added <= 0 and m.recent == 0 and b.recent != 0
    )
    reset = m.streak < b.streak or restarted
    recent = m.recent if restarted else _after(t.recent, m.recent, added)
    in_a_row = _run(recent)
    merged = LoopState(
        turns=(t.turns + new)[-WINDOW:],
        formulas=formulas[-MAX_FORMULAS:],
        tally=tuple(sorted((k, v) for k, v in tally.items() if v > 0)),
        # the run the merged turns end with (past what `recent` holds, as counted)
        streak=in_a_row
        if in_a_row < RECENT_TURNS
        else (m.streak if reset else t.streak + m.streak - b.streak),
        recent=recent,
        loop_turns=t.loop_turns + m.loop_turns - b.loop_turns,
        last_progress_turn=max(t.last_progress_turn, m.last_progress_turn),
    )
    return merged.to_json()
