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
  Identifiers weigh more, and a reply that names an identifier the window has not seen
  (a protocol, the new order it answers about) moves things on, as does a customer's
  message that is mostly one (data asked for); one the customer adds to a question asked
  again, left aside by the reply, does not;
- a loop reworded several times draws each wording from a different earlier one, so a
  turn also repeats when the window as a whole holds most of it: the customer's message
  covered by every side of the recent turns together and the reply by the recent replies
  together, each past its own (higher) threshold;
- a customer pushing back ("you already told me that", "cadê meu dinheiro",
  gateway.loops.pushback) rarely re-asks in the first question's words: such a turn
  repeats when the reply is covered by one recent reply, or by the recent replies
  together, past its own (lower) threshold;
- an agent saying it restates ("as I mentioned", "como informado anteriormente", "como
  le comenté", gateway.loops.pushback) rewords what it said: a re-ask answered so
  repeats whatever the reply's words.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from gateway.loops.pushback import pushes_back, restates
from gateway.loops.state import (
    IDENTIFIER_WEIGHT,
    MAX_FORMULAS,
    LoopState,
    Side,
    escalated,
    loop_turns_within,
)
from gateway.loops.words import Sentence, language, parse, sentences, union, votes, whole

FORMULA_NEW = 0.5  # the rest of a message covered less than this is new content
FORMULA_TURNS = 2  # a sentence said in this many recent messages of a side is a formula
# A reply this covered by an earlier one answers again: the customer's sentences said again
# beside it are their question, not a formula.
ANSWERED_AGAIN = 0.8
LEAST_USER, LEAST_REPLY = 2, 5  # content units (identifiers weighted) to judge a message by


def coverage(side: Side, words: frozenset[int], identifiers: frozenset[int]) -> float:
    """The weighted share of `side`'s units found in `words` / `identifiers`."""
    total = side.weight()
    if not total:
        return 0.0
    found = len(side.words & words) + IDENTIFIER_WEIGHT * len(side.identifiers & identifiers)
    return found / total


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
    # or: the customer pushes back ("you already told me that", gateway.loops.pushback)
    # and the reply is this covered by one recent reply or by the recent replies together
    pushback_reply_similarity: float

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
    # the reply names an identifier the window has not seen, or the customer does and the
    # reply takes it up or the message is mostly that identifier (`_moves_on`)
    new_identifier: bool
    # how much of the customer's message the whole window holds (every side of its
    # turns), and how much of the reply the window's replies hold together
    spread: tuple[float, float] = (0.0, 0.0)
    pushback: bool = False  # the customer says the answer did not help or was given already
    restated: bool = False  # the reply says it says again what it said ("as I mentioned")

    def repeats(self, settings: LoopSettings) -> bool:
        """A re-ask of one recent turn answered again as that turn was, or of the window
        as a whole answered again from its replies, or a push back answered again, or a
        re-ask answered by a reply that says it restates ("as I mentioned")."""
        if self.new_identifier:
            return False
        user, reply = self.spread
        if user >= settings.window_user_similarity and reply >= settings.window_reply_similarity:
            return True
        if self.pushback and self.reply_repeated() >= settings.pushback_reply_similarity:
            return True
        if self.restated and self.asked_again(settings):
            return True
        return any(
            user >= settings.user_similarity and reply >= settings.reply_similarity
            for user, reply in self.against
        )

    def asked_again(self, settings: LoopSettings) -> bool:
        """Whether the customer's message is close enough to one recent turn's to re-ask
        it (what the reply must then answer again)."""
        return any(user >= settings.user_similarity for user, _ in self.against)

    def reply_repeated(self) -> float:
        """How much of the reply one recent reply, or the recent replies together, hold."""
        return max((self.spread[1], *(reply for _, reply in self.against)))


def _formulas(
    state: LoopState, said_user: list[Sentence], said_reply: list[Sentence], answered_again: bool
) -> set[int]:
    """This turn's new formulas: a sentence said again by the same side is a formula when
    it wraps new content at least as large as itself, or of LEAST_REPLY units when it is
    longer ("Posso ajudar em algo mais?" around a different answer each time; an agent's
    notice of twenty words said again after a new answer of eight: on its second time it
    would otherwise make the reply look answered again), or when FORMULA_TURNS recent
    messages of that side said it already and this message says something else too.
    Never a sentence naming an identifier, and never the customer's while the reply
    repeats an earlier one (a question asked again with a new complaint around it is a
    loop, not a formula). A message that only repeats teaches nothing: a verbatim re-ask
    or re-answer is a loop, and so is an answer said again beside a short apology."""
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
            if (wraps_new and min(len(sentence.words), LEAST_REPLY) <= rest.weight()) or (
                times >= FORMULA_TURNS and rest.weight()
            ):
                found.add(sentence.key)
    return found


def _against(
    user: Side, reply: Side, earlier: tuple[Side, Side], judged: bool
) -> tuple[float, float]:
    """(customer, reply) coverage by one earlier turn; a customer's message too short to
    judge (`judged` False) is no repeat."""
    asked, answered = earlier
    user_covered = (
        coverage(user, asked.words | answered.words, asked.identifiers | answered.identifiers)
        if judged
        else 0.0
    )
    return user_covered, _answered_as(reply, answered)


def _spread(
    user: Side, reply: Side, window: tuple[tuple[Side, Side], ...], judged: bool
) -> tuple[float, float]:
    """(customer, reply) coverage by the window together: the customer's message by every
    side of its turns, the reply by its replies; 0 for a side too short to judge."""
    if not window:
        return 0.0, 0.0
    sides = [side for pair in window for side in pair]
    replies = [answered for _, answered in window]
    user_covered = (
        coverage(user, union(s.words for s in sides), union(s.identifiers for s in sides))
        if judged
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


def read_turn(
    state: LoopState, user_text: str, reply_text: str, settings: LoopSettings | None = None
) -> tuple[LoopState, Turn]:
    """The turn's units, with the state's formulas and language updated by it (not yet
    the window). With `settings`, the customer's message is read for push back only when
    the reply repeats enough for it to count, and the reply for restating only when the
    customer re-asks and nothing else made the turn a loop turn: an RE2 call lets go of
    the GIL, and with the store's threads busy, getting it back can cost more than the
    call (~0.6 ms)."""
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
    # Answered again nearly word for word, a message about the subject asks it again.
    asked = user if answered_again else _subject_left_out(user, state)
    judged = user.weight() >= LEAST_USER
    turn = Turn(
        user=user,
        reply=reply,
        against=tuple(_against(asked, reply, earlier, judged) for earlier in state.turns),
        new_identifier=_moves_on(user, reply, all_ids),
        spread=_spread(asked, reply, state.turns, judged),
    )
    if settings is None or turn.reply_repeated() >= settings.pushback_reply_similarity:
        turn = replace(turn, pushback=pushes_back(user_text))
    if settings is None or (
        not turn.new_identifier and turn.asked_again(settings) and not turn.repeats(settings)
    ):
        turn = replace(turn, restated=restates(reply_text))
    return replace(state, formulas=formulas, tally=tuple(sorted(tally.items()))), turn


def _moves_on(user: Side, reply: Side, seen: frozenset[int]) -> bool:
    """Whether an identifier the window has not seen (`seen`) moves things on: one the
    reply names (a protocol, a case number, the order the customer just gave), or one
    the customer gives in a message that is mostly that identifier (data the agent asked
    for: "member number 88231907"). A number the customer adds to a question asked again
    ("I moved 600 miles away, can you cancel online?", "still no refund, order 55012?",
    "why the 404?") that the reply leaves aside brings nothing new: the reply is what
    moves a conversation on, not the customer's words."""
    if reply.identifiers - seen:
        return True
    given = user.identifiers - seen
    return bool(given) and IDENTIFIER_WEIGHT * len(user.identifiers) >= len(user.words)


SUBJECT_TURNS = 2


def _subject_left_out(user: Side, state: LoopState) -> Side:
    """The customer's message without the identifiers they named in SUBJECT_TURNS of
    the window's messages already: the conversation's subject (the order every turn
    names) says nothing about whether a question is asked again: what else the message
    says does ("order 175537 still hasn't arrived?" after "where is order 175537?", not
    "where's my refund for order 175537" after "you billed me twice for order 175537").
    A message that says nothing else ("order 175537??") keeps it: it asks about the
    subject itself; so does one answered again nearly word for word (`read_turn`).
    (Whether a message is long enough to judge is read on all of it.)"""
    if not user.identifiers:
        return user
    named = [asked.identifiers & user.identifiers for asked, _ in state.turns]
    subject = frozenset(i for i in user.identifiers if sum(i in n for n in named) >= SUBJECT_TURNS)
    if not subject:
        return user
    rest = replace(user, identifiers=user.identifiers - subject)
    return rest if rest.weight() else user


def observe_turn(
    state: LoopState, user_text: str, reply_text: str, settings: LoopSettings
) -> tuple[LoopState, bool]:
    """Fold one finished turn into the state; True when it was a loop turn."""
    state, turn = read_turn(state, user_text, reply_text, settings)
    is_loop = turn.repeats(settings)
    return state.observed(turn.user, turn.reply, is_loop), is_loop


def noticed(state: LoopState, settings: LoopSettings) -> bool:
    """Right after a turn is observed: do the loop turns counted now escalate? The loop
    is known as soon as its last turn is answered, not only when (if) the customer
    writes again."""
    return settings.escalates(state.recent)


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
