"""Loops and exit triggers (seed 002). Pure: no I/O, no clock.

A loop turn: the customer's message is similar to one of their earlier messages AND the
reply is similar to one of the earlier replies (user to user, reply to reply: the
gateway's own handoff text is never a reply here). N loop turns in a row escalate
(`loop`); so does passing the class's turn ceiling with no progress in the last K turns
(`turn_ceiling`). Compressing does not fix a loop; offering a human does.

Similarity is lexical and robust to rewording: each message becomes a set of content
words (stopwords dropped, light stemming) plus its identifiers (order numbers, amounts,
emails), and two messages are compared by weighted overlap; identifiers weigh more, and
two messages naming different identifiers are not the same question.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

MAX_KEPT = 24  # fingerprints kept per side and conversation
# Words of a message past this many characters do not change what question it asks; a
# pasted megabyte would otherwise cost a second of hashing on every turn.
FINGERPRINT_CHARS = 64 * 1024
# Linear with `re`: possessive, so a failed separator never makes a run give back
# characters; _IDENTIFIER only ever sees one token (its lookahead is bounded by it).
_TOKEN = re.compile(r"[a-z0-9]++(?:[-_.@][a-z0-9]++)*+")
_IDENTIFIER = re.compile(r"^(?=.*\d)[a-z0-9]+(?:[-_.@][a-z0-9]+)+$|^\d{3,}$|@")
_STOP = frozenset(
    (  # noqa: SIM905 - a word list reads better as words
        "a an the and or but if then so to of in on at for from by with about as is are was "
        "were be been being do does did done have has had i me my mine you your yours we our "
        "us they them their it its this that these those there here what which who whom whose "
        "when where why how can could would should will shall may might must not no yes ok "
        "okay please thanks thank hi hello hey just still again also very really any some all "
        "more most other than too up out get got am im dont cant wont didnt doesnt isnt arent "
        "ive youre thats whats wheres "
    ).split()
)
_SUFFIXES = ("ing", "ed", "es", "s", "ly")
IDENTIFIER_WEIGHT = 3


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


@dataclass(frozen=True)
class Fingerprint:
    words: frozenset[int]
    identifiers: frozenset[int]

    def to_json(self) -> list[list[int]]:
        return [sorted(self.words), sorted(self.identifiers)]

    @classmethod
    def from_json(cls, data: list[list[int]]) -> Fingerprint:
        return cls(frozenset(data[0]), frozenset(data[1]))


def _h(token: str) -> int:
    return int.from_bytes(hashlib.blake2b(token.encode(), digest_size=4).digest(), "big")


def fingerprint(text: str) -> Fingerprint:
    words, identifiers = set(), set()
    for token in _TOKEN.findall(text[:FINGERPRINT_CHARS].lower()):
        if _IDENTIFIER.search(token):
            identifiers.add(_h(token))
        elif token not in _STOP and len(token) > 1:
            words.add(_h(_stem(token)))
    return Fingerprint(frozenset(words), frozenset(identifiers))


def similarity(a: Fingerprint, b: Fingerprint) -> float:
    """Weighted overlap in [0, 1]; 0 when both name identifiers and none is shared."""
    if a.identifiers and b.identifiers and not a.identifiers & b.identifiers:
        return 0.0
    shared = len(a.words & b.words) + IDENTIFIER_WEIGHT * len(a.identifiers & b.identifiers)
    smaller = min(
        len(a.words) + IDENTIFIER_WEIGHT * len(a.identifiers),
        len(b.words) + IDENTIFIER_WEIGHT * len(b.identifiers),
    )
    larger = max(
        len(a.words) + IDENTIFIER_WEIGHT * len(a.identifiers),
        len(b.words) + IDENTIFIER_WEIGHT * len(b.identifiers),
    )
    if smaller == 0:
        return 0.0
    # Overlap over the smaller set, damped when one message is much longer (it says more).
    return shared / smaller * min(1.0, 2 * smaller / larger)


@dataclass(frozen=True)
class LoopState:
    users: tuple[Fingerprint, ...] = ()
    replies: tuple[Fingerprint, ...] = ()
    streak: int = 0  # loop turns in a row
    loop_turns: int = 0  # in this conversation, for the record
    last_progress_turn: int = 0

    def to_json(self) -> dict[str, object]:
        return {
            "users": [f.to_json() for f in self.users],
            "replies": [f.to_json() for f in self.replies],
            "streak": self.streak,
            "loop_turns": self.loop_turns,
            "last_progress_turn": self.last_progress_turn,
        }

    @classmethod
    def from_json(cls, data: dict[str, object] | None) -> LoopState:
        if not data:
            return cls()
        users = data.get("users") or []
        replies = data.get("replies") or []
        assert isinstance(users, list) and isinstance(replies, list)
        return cls(
            users=tuple(Fingerprint.from_json(f) for f in users),
            replies=tuple(Fingerprint.from_json(f) for f in replies),
            streak=int(str(data.get("streak", 0))),
            loop_turns=int(str(data.get("loop_turns", 0))),
            last_progress_turn=int(str(data.get("last_progress_turn", 0))),
        )


@dataclass(frozen=True)
class LoopSettings:
    """A class's loop thresholds. No defaults: the shipped policy (context.yaml, `loop`)
    states them, and gateway.context.policy resolves its layers into this."""

    user_similarity: float  # a customer's message this similar to an earlier one repeats it
    reply_similarity: float  # and a reply this similar to an earlier one repeats that
    consecutive: int  # loop turns in a row that escalate


def _best(fp: Fingerprint, earlier: Sequence[Fingerprint]) -> float:
    return max((similarity(fp, e) for e in earlier), default=0.0)


def observe_turn(
    state: LoopState, user_text: str, reply_text: str, settings: LoopSettings
) -> tuple[LoopState, bool]:
    """Fold one finished turn into the state; True when it was a loop turn."""
    user, reply = fingerprint(user_text), fingerprint(reply_text)
    is_loop = (
        _best(user, state.users) >= settings.user_similarity
        and _best(reply, state.replies) >= settings.reply_similarity
    )
    return (
        replace(
            state,
            users=(*state.users, user)[-MAX_KEPT:],
            replies=(*state.replies, reply)[-MAX_KEPT:],
            streak=state.streak + 1 if is_loop else 0,
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
    """At the start of turn `turn` (1-based): escalate? After an escalation the streak
    and the progress clock reset, so the conversation goes on and is not escalated again
    unless it loops (or stalls) again. The fingerprints stay: a loop that resumes right
    after the handoff offer is recognised at once."""
    if state.streak >= settings.consecutive:
        return Decision("loop", replace(state, streak=0, last_progress_turn=turn))
    stalled = turn - state.last_progress_turn > progress_window
    if turn > turn_ceiling and stalled:
        return Decision("turn_ceiling", replace(state, streak=0, last_progress_turn=turn))
    return Decision(None, state)


def progressed(state: LoopState, turn: int) -> LoopState:
    """A fact learned or confirmed, or the app said so (`progress` / `resolved`)."""
    return replace(state, last_progress_turn=turn, streak=0)
