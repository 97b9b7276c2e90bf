"""A conversation's loop state as stored: the last turns' content units, the formulas
learned, the language votes, and the counters the decision reads (loop turns in a row and
among the recent turns, the progress clock); how two writers' states merge. Pure: no
I/O, no clock.

A stored state is bounded (WINDOW turns, each message at most MAX_WORDS units) and packed
as base64 arrays of 32-bit units; a state of an older layout, or an unreadable one, keeps
what can be read and starts a new window.
"""

from __future__ import annotations

import base64
import sys
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from gateway.context.content_memo import ContentMemo
from gateway.loops.words import LANGUAGES, Sentence, union

WINDOW = 6  # recent turns a message is compared with
RECENT_TURNS = 16  # loop turns remembered for `within` (a setting above it counts these)
RECENT_MASK = (1 << RECENT_TURNS) - 1
MAX_FORMULAS = 64
# Per message, what is kept and compared: a 4 KB message (words.MESSAGE_CHARS) rarely
# holds more; the stored window stays under ~20 KB whatever is pasted.
MAX_WORDS, MAX_IDENTIFIERS, MAX_SENTENCES = 256, 32, 64
IDENTIFIER_WEIGHT = 2


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


def _decode_list(text: str) -> tuple[int, ...]:
    values = array("I")
    values.frombytes(base64.b64decode(text, validate=True))
    if sys.byteorder == "big":  # stored little-endian, whatever the replica
        values.byteswap()
    return tuple(values)


# A stored state's formulas are read by the turn and by any merge that meets it.
_unpack_list = lru_cache(maxsize=64)(_decode_list)


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
    text = _pack(values)
    _windows.put(text, tuple(turns))
    return text


# A window packed by a turn is read back by the conversation's next turn, and by any
# merge that meets it: packing and reading share one memo of the last DECODED_WINDOWS,
# so on one replica a turn decodes no window. A full window decodes to ~300 KB of sets;
# one packed here shares the sets of the state it came from.
DECODED_WINDOWS = 128
_windows: ContentMemo[tuple[tuple[Side, Side], ...]] = ContentMemo(DECODED_WINDOWS)


def _unpack_window(text: str) -> tuple[tuple[Side, Side], ...]:
    turns = _windows.get(text)
    if turns is None:
        turns = _decode_window(text)
        _windows.put(text, turns)
    return turns


def _decode_window(text: str) -> tuple[tuple[Side, Side], ...]:
    values, at, sides = _decode_list(text), 0, []
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


@dataclass(frozen=True)
class LoopState:
    turns: tuple[tuple[Side, Side], ...] = ()  # the last WINDOW turns: (customer, reply)
    formulas: tuple[int, ...] = ()  # oldest first
    tally: tuple[tuple[str, int], ...] = ()  # the conversation's language votes
    streak: int = 0  # loop turns in a row
    recent: int = 0  # bit i: the turn i turns back was a loop turn (bit 0: the last one)
    loop_turns: int = 0  # in this conversation, for the record
    last_progress_turn: int = 0

    def observed(self, user: Side, reply: Side, is_loop: bool) -> LoopState:
        """With one more finished turn: in the window, and counted."""
        return replace(
            self,
            turns=(*self.turns, (user, reply))[-WINDOW:],
            streak=self.streak + 1 if is_loop else 0,
            recent=((self.recent << 1) | is_loop) & RECENT_MASK,
            loop_turns=self.loop_turns + int(is_loop),
        )

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


def escalated(state: LoopState, turn: int) -> LoopState:
    """The state once turn `turn` escalated and was answered: streak and progress clock
    start again."""
    return replace(state, streak=0, recent=0, last_progress_turn=turn)


def progressed(state: LoopState, turn: int) -> LoopState:
    """The app said so (`progress` / `resolved`), or confirmed a fact of the customer's:
    the conversation moved on, its loop streak and progress clock start again."""
    return replace(state, last_progress_turn=turn, streak=0, recent=0)


def learned(state: LoopState, turn: int) -> LoopState:
    """A fact learned from the turn itself: progress for the turn ceiling's clock, but
    no end to a loop. Whether the turn went round again is the detector's to say, from
    the same words (a customer who adds their city or the amount to a question asked
    again, and gets the same answer, is still going round: `observe_turn` reads a new
    identifier in the reply, or a message that is mostly the data asked for, as moving
    on); a streak zeroed by any fact heard never reached `consecutive`."""
    return replace(state, last_progress_turn=turn)


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
