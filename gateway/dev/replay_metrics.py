"""Scoring a replay (`gateway replay`): plain functions over plain data, no I/O.

The player (gateway/dev/replay.py) hands over, for every customer turn it played, the
text of the request that reached the upstream; these functions say what that text kept
of the conversation and of the customer's earlier episodes, and sum up cost figures.

A workload conversation is played as a list of *played* conversations: its earlier
episodes, oldest first, then the conversation itself. A location is (played index,
message index). Every check is tallied as [kept, checked] under a name:

  facts.all[.TYPE]     a fact at every later customer turn of the conversation it was
                       stated in, while it is current (not yet corrected)
  facts.far[.TYPE]     the same, where more than FAR_TOKENS tokens were said after it
  facts.needed[.TYPE]  a fact of this conversation at the turns whose `needs` list it
  facts.far_beyond_verbatim, facts.needed_beyond_verbatim
                       facts.far and facts.needed counted only where the fact is neither
                       stated nor repeated in what every window sends verbatim at that
                       turn (the opening request and the last `keep_last_messages`
                       messages): elsewhere even a window that kept nothing else has it,
                       so these count only what the window itself kept
  facts.episode[.TYPE] a fact of an earlier episode at the turns whose `needs` list it
  opening              the first customer message, verbatim, at every later turn
  last4                the last four messages of the history, verbatim, at every turn
  raw_episode          requests holding the full text of an earlier episode's turn
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from gateway.context.engine import SUMMARY_LEAST_TOKENS
from gateway.context.people import CONTACT
from gateway.context.prompts import summary_message
from gateway.messages import RESULT_ROLES, leading_system

FAR_TOKENS = 8000
LAST_MESSAGES = 4
# An episode turn shorter than this ("ok", "thanks!") proves nothing when found again.
RAW_TURN_MIN_CHARS = 40
_SPACE = re.compile(r"\s+")
_EDGE = " .,;:!?¡¿\"'()"

Tally = dict[str, list[int]]
Location = tuple[int, int]
_NEVER: Location = (1 << 62, 0)


def normalized(text: str) -> str:
    """Case and runs of white space do not matter when looking for a fact."""
    return _SPACE.sub(" ", text).strip().casefold()


# Identifiers are their digits: "nº 367513", "PED367513" and "order 367513" name one
# order, "(77) 92770-9129" and "+55 77 92770-9129" one phone.
IDENTIFIER_TYPES = frozenset({"order", "sku", "phone"})
_DIGIT_GAP = re.compile(r"(?<=\d)[\s().-]+(?=\d)")
_DIGIT_RUN = re.compile(r"\d{5,}")


def fact_present(fact: Mapping[str, Any], text: str) -> bool:
    """The fact's surface (as the customer or agent said it) or its canonical value
    appears in the text (already `normalized`); an identifier's digits, however grouped."""
    forms = [
        f for f in (fact.get("surface"), fact.get("value")) if isinstance(f, str) and f.strip()
    ]
    # The punctuation around a phrase is not the fact: "do you still sell that model?"
    # is kept by "... do you still sell that model | ...".
    if any(_present_whole(normalized(form).strip(_EDGE), text) for form in forms):
        return True
    if fact.get("type") not in IDENTIFIER_TYPES:
        return False
    runs = {run for form in forms for run in _DIGIT_RUN.findall(_DIGIT_GAP.sub("", form))}
    if not runs:
        return False
    joined = _DIGIT_GAP.sub("", text)
    return any(_present_run(run, joined) for run in runs)


# A form runs on into a longer value when a letter or digit touches it, or when it is
# followed by one of these and a letter or digit: "x@shop.com" is not shown by
# "x@shop.com.br", nor "ORD-48" by "ORD-48213" or "ORD-48-b".
_JOINERS = ".@_-"
_ALNUM = r"[^\W_]"
_NOT_AFTER = rf"(?!{_ALNUM})(?![{re.escape(_JOINERS)}]{_ALNUM})"


def _present_whole(form: str, text: str) -> bool:
    """`form` in the text as a whole value, not the start, end or middle of a longer one
    (a superseded "x@shop.com" is not shown by the current "x@shop.com.br")."""
    if not form:
        return False
    return re.search(rf"(?<!{_ALNUM}){re.escape(form)}{_NOT_AFTER}", text) is not None


def _present_run(run: str, text: str) -> bool:
    """`run` as a whole number of the text, not inside a longer one (12345 in 9123456)."""
    return re.search(rf"(?<!\d){run}(?!\d)", text) is not None


def count(tally: Tally, name: str, kept: bool) -> None:
    pair = tally.setdefault(name, [0, 0])
    pair[0] += int(kept)
    pair[1] += 1


def merge(into: Tally, other: Tally) -> None:
    for name, (kept, checked) in other.items():
        pair = into.setdefault(name, [0, 0])
        pair[0] += kept
        pair[1] += checked


@dataclass(frozen=True)
class Played:
    """One conversation as played: its id (an episode's or the conversation's), its
    messages, and the request text at each customer turn, by message index."""

    id: str
    turns: Sequence[Mapping[str, Any]]
    requests: Mapping[int, str]
    # offsets[i]: tokens said before message i (len(turns) + 1 entries).
    offsets: Sequence[int] = field(default_factory=list)
    # keep_last[turn]: the policy's keep_last_messages at that request (LAST_MESSAGES
    # when not given): with the opening request, what every window sends verbatim.
    keep_last: Mapping[int, int] = field(default_factory=dict)

    def always_sent(self, turn: int) -> tuple[range, str]:
        """What every window (and full history) sends whole at the request of `turn`: the
        opening request and the last messages (their indices, and their text `normalized`)."""
        head, tail = _head_tail(self.turns[: turn + 1], self.keep_last.get(turn, LAST_MESSAGES))
        whole = [*range(head), *range(tail, turn + 1)]
        text = normalized("\n".join(str(self.turns[i].get("content") or "") for i in whole))
        return range(head, tail), text


def _location(fact: Mapping[str, Any], order: Mapping[str | None, int]) -> Location:
    return (order[fact.get("episode")], int(fact["stated_at"]))


def _current_until(
    facts: Mapping[str, Mapping[str, Any]], order: Mapping[str | None, int]
) -> dict[str, Location]:
    """Where each fact stops being current: where its correction is stated."""
    end: dict[str, Location] = {}
    for fid, fact in facts.items():
        newer = facts.get(str(fact.get("superseded_by")))
        end[fid] = _location(newer, order) if newer else _NEVER
    return end


class _AlwaysSent:
    """Per (played, turn), what every window sends whole there, computed once."""

    def __init__(self, played: Sequence[Played]) -> None:
        self.played = played
        self.seen: dict[Location, tuple[range, str]] = {}

    def beyond(self, n: int, turn: int, stated: int, fact: Mapping[str, Any]) -> bool:
        """The fact is neither stated nor said again in what every window sends whole."""
        if (n, turn) not in self.seen:
            self.seen[n, turn] = self.played[n].always_sent(turn)
        folded, text = self.seen[n, turn]
        return stated in folded and not fact_present(fact, text)


def score_facts(facts: Sequence[Mapping[str, Any]], played: Sequence[Played]) -> Tally:
    """facts.all / facts.far / facts.needed / facts.episode (and far / needed beyond
    what every window sends whole) for one workload conversation (`played`: its
    episodes, oldest first, then itself; the last one's id is the fact's `episode` null)."""
    order: dict[str | None, int] = {p.id: n for n, p in enumerate(played)}
    order[None] = len(played) - 1
    by_id = {str(f["id"]): f for f in facts}
    until = _current_until(by_id, order)
    tally: Tally = {}
    texts = [{t: normalized(s) for t, s in p.requests.items()} for p in played]
    always = _AlwaysSent(played)
    for fid, fact in by_id.items():
        where, stated = _location(fact, order)
        kind = str(fact["type"])
        p = played[where]
        for turn, text in texts[where].items():
            if turn <= stated or (where, turn) >= until[fid]:
                continue
            kept = fact_present(fact, text)
            count(tally, "facts.all", kept)
            count(tally, f"facts.all.{kind}", kept)
            if p.offsets and p.offsets[turn + 1] - p.offsets[stated + 1] > FAR_TOKENS:
                count(tally, "facts.far", kept)
                count(tally, f"facts.far.{kind}", kept)
                if always.beyond(where, turn, stated, fact):
                    count(tally, "facts.far_beyond_verbatim", kept)
    _score_needed(by_id, order, texts, always, tally)
    return tally


def _score_needed(
    by_id: Mapping[str, Mapping[str, Any]],
    order: Mapping[str | None, int],
    texts: Sequence[Mapping[int, str]],
    always: _AlwaysSent,
    tally: Tally,
) -> None:
    """facts.needed (this conversation's) and facts.episode (an earlier episode's) at the
    turns whose `needs` list them."""
    for n, p in enumerate(always.played):
        for turn, text in texts[n].items():
            for fid in p.turns[turn].get("needs") or ():
                fact = by_id[str(fid)]
                kept = fact_present(fact, text)
                where, stated = _location(fact, order)
                if where == n:
                    count(tally, "facts.needed", kept)
                    count(tally, f"facts.needed.{fact['type']}", kept)
                    if always.beyond(n, turn, stated, fact):
                        count(tally, "facts.needed_beyond_verbatim", kept)
                else:
                    count(tally, "facts.episode", kept)
                    count(tally, f"facts.episode.{fact['type']}", kept)


def score_verbatim(played: Sequence[Played]) -> Tally:
    """opening / last4 / raw_episode for one workload conversation's requests."""
    tally: Tally = {}
    for n, p in enumerate(played):
        contents = [str(t.get("content") or "") for t in p.turns]
        users = [i for i, t in enumerate(p.turns) if t.get("role") == "user"]
        own = "\n".join(contents)
        earlier = [
            s
            for q in played[:n]
            for t in q.turns
            if len(s := str(t.get("content") or "").strip()) >= RAW_TURN_MIN_CHARS and s not in own
        ]
        for turn, text in p.requests.items():
            if users and turn > users[0]:
                count(tally, "opening", contents[users[0]] in text)
            tail = contents[max(0, turn + 1 - LAST_MESSAGES) : turn + 1]
            count(tally, "last4", all(c in text for c in tail))
            if n:
                count(tally, "raw_episode", any(s in text for s in earlier))
    return tally


def token_offsets(sizes: Iterable[int]) -> list[int]:
    """offsets[i] = sum(sizes[:i]), one more entry than sizes."""
    out = [0]
    for size in sizes:
        out.append(out[-1] + size)
    return out


def pct(kept: int, checked: int) -> float | None:
    return round(100 * kept / checked, 2) if checked else None


def top_share(costs: Sequence[Decimal], fraction: float) -> float | None:
    """Share (%) of the total cost spent by the costliest `fraction` of conversations
    (at least one)."""
    total = sum(costs, Decimal(0))
    if not costs or total <= 0:
        return None
    k = max(1, math.ceil(len(costs) * fraction - 1e-9))
    return round(float(100 * sum(sorted(costs, reverse=True)[:k], Decimal(0)) / total), 2)


def _head_tail(rest: Sequence[Any], keep_last: int) -> tuple[int, int]:
    """The opening's end and where the kept last messages start (a tool call's results
    never without the call: the window keeps whole units)."""
    head = next((i + 1 for i, m in enumerate(rest) if m.get("role") == "user"), 0)
    tail = max(head, len(rest) - keep_last)
    while tail > head and rest[tail].get("role") in RESULT_ROLES:
        tail -= 1
    return head, tail


def always_sent(messages: Sequence[Any], keep_last: int) -> list[Any]:
    """What every window sends whole and the quota caps: the opening request (and what
    precedes it) and the last `keep_last` messages. (The app's system message(s) are
    sent whole too, but the quota does not cap them: see WindowReport.history_tokens.)"""
    rest = messages[leading_system(messages) :]
    head, tail = _head_tail(rest, keep_last)
    return [*rest[:head], *rest[tail:]]


def folded_span(messages: Sequence[Any], keep_last: int) -> tuple[int, int] | None:
    """The messages between the opening request and the last `keep_last` (transcript
    indices, end excluded): what a window that must shorten sends as a summary, one
    line at least (the gateway never lets a middle leave without a trace). None when
    there are none."""
    head, tail = _head_tail(messages[leading_system(messages) :], keep_last)
    return (head, tail) if tail > head else None


def floor_tokens(messages: Sequence[Any], keep_last: int, count: Callable[[list[Any]], int]) -> int:
    """The least any window sends of this history, as the engine counts it (`count`: a
    list's tokens, no reply priming): the opening request and the last messages verbatim,
    and a one-line summary of what lies between, or the whole history when that is less."""
    floor = count(always_sent(messages, keep_last))
    span = folded_span(messages, keep_last)
    if span is None:
        return floor
    line = count([summary_message("", *span)]) + SUMMARY_LEAST_TOKENS
    return min(floor + line, count(list(messages[leading_system(messages) :])))


@dataclass
class QuotaTurn:
    """One request's window against its class's quota (the policy side only)."""

    conversation_class: str
    history_tokens: int
    quota_tokens: int
    # The least any window sends of this history: the opening request and the last
    # messages verbatim, and a one-line summary of what lies between (or the whole
    # history, when that is less). When it passes the quota, no window could stay under.
    floor_tokens: int


def quota_by_class(turns: Iterable[QuotaTurn]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for t in turns:
        row = out.setdefault(t.conversation_class, {"turns": 0, "over": 0, "over_unavoidable": 0})
        row["turns"] += 1
        if t.history_tokens > t.quota_tokens:
            row["over"] += 1
            row["over_unavoidable"] += int(t.floor_tokens > t.quota_tokens)
    return dict(sorted(out.items()))


def fact_figures(tally: Tally) -> dict[str, Any]:
    """Retention percentages, overall and per fact type, with how many checks each."""
    kinds = sorted({n.split(".")[2] for n in tally if n.count(".") == 2})
    figures: dict[str, Any] = {}
    for group in ("all", "far", "needed", "far_beyond_verbatim", "needed_beyond_verbatim"):
        kept, checked = tally.get(f"facts.{group}", [0, 0])
        figures[group] = {"pct": pct(kept, checked), "checked": checked}
    kept, checked = tally.get("facts.episode", [0, 0])
    figures["episode_at_referring_turns"] = {"pct": pct(kept, checked), "checked": checked}
    # Contact details heard in another conversation are `verified` facts: a caller
    # without that scope (the replay sends none) gets them withheld, by design.
    basic = [tally[n] for n in tally if n.startswith("facts.episode.") and n[14:] not in CONTACT]
    kept, checked = sum(k for k, _ in basic), sum(c for _, c in basic)
    figures["episode_without_contact_details"] = {"pct": pct(kept, checked), "checked": checked}
    figures["by_type"] = {
        kind: {
            group: pct(*tally.get(f"facts.{group}.{kind}", [0, 0]))
            for group in ("all", "far", "needed", "episode")
        }
        for kind in kinds
    }
    return figures
