"""Two writes to one conversation record that both read the same version: what the
second writer stores once it finds the first one's write (optimistic concurrency, see
ConversationStore.save). Pure: field dicts in (as stored, `ConversationRecord.to_fields`),
a field dict out.

- counters add both writers' increments (two turns are two turns), except a loop that
  both writers' turns finished at once: one escalation;
- the summary, its cursor, anchor and facts horizon move together: the writer whose
  compaction reached further wins, so two turns that fold the same span leave one
  summary of it (never two, never none);
- verbatim messages (`m:{place}` fields) of both are kept above the summary's cursor;
- the loop state holds both writers' turns (gateway.loops.detector.merge_states);
- the relay times of answers (`relayed`): both writers', above the summary's cursor;
- the answer (`last_reply`, its place, `answered`, the opening, the verbatim messages,
  relay times): when both writers answered, the attempt that began later wins, whoever
  saves last (a client that timed out and retried never saw the first try's answer);
  and two answers to the same history, one of them a client's retry, are one turn;
- any other field: the value of the writer that changed it, the second one when both
  did (an event, a close, the app's state).
"""

from __future__ import annotations

from typing import Any

import orjson

from gateway.loops.state import merge_states

MESSAGE_FIELD = "m:"
_COUNTERS = (
    "turns",
    "cost_units",
    "quota_hits",
    "over_quota_turns",
    "summary_recompressions",
    "escalations",
    "events",
)
_COMPACTION = ("summary", "cursor", "anchor", "facts_until")


def merge(base: dict[str, bytes], mine: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
    """`base`: the fields both writers read (serialized); `mine`: this writer's record;
    `theirs`: the record as the other writer stored it."""

    def was(name: str, default: Any = None) -> Any:
        raw = base.get(name)
        return default if raw is None else orjson.loads(raw)

    # A field the record read had not stored yet (a record of an earlier version) is null.
    changed = {k for k, v in mine.items() if base.get(k, _NULL) != orjson.dumps(v)}
    changed |= {k for k in base if k not in mine}
    older, same_turn = _both_answered(was, mine, theirs) if "answered" in changed else (False,) * 2
    if older:  # a later attempt's answer stands
        changed = {k for k in changed if k not in _ANSWER and not k.startswith(MESSAGE_FIELD)}
    out = {k: v for k, v in theirs.items() if k not in _COUNTERS}
    out.update(_counters(was, mine, theirs))
    if same_turn:  # counted, and read by the loop detector, once
        out["turns"] -= (mine.get("turns") or 0) - (was("turns") or 0)
        changed.discard("loop_state")
    if changed & set(_COMPACTION) and _mine_wins(was, mine, theirs):
        out.update({k: mine.get(k) for k in _COMPACTION})
    if "loop_state" in changed:
        added = (mine.get("turns") or 0) - (was("turns") or 0)
        out["loop_state"] = merge_states(
            was("loop_state"), mine.get("loop_state"), theirs.get("loop_state"), added
        )
    if "relayed" in changed or older:
        both = [w.get("relayed") for w in ((mine, theirs) if older else (theirs, mine))]
        out["relayed"] = {k: v for r in both if isinstance(r, dict) for k, v in r.items()}
    skip = {*_COUNTERS, *_COMPACTION, "loop_state", "relayed", "version", "last_seen", "started"}
    for name in changed - skip:
        if name in mine:
            out[name] = mine[name]
        elif not name.startswith(MESSAGE_FIELD):
            out.pop(name, None)
    _times(out, mine, theirs)
    _above_cursor(out)
    return out


def _above_cursor(out: dict[str, Any]) -> None:
    """Verbatim messages and relay times: both writers', from the summary's cursor (or
    the opening) on."""
    floor = max(out.get("cursor") or 0, len(out.get("opening") or ()))
    for name in [k for k in out if k.startswith(MESSAGE_FIELD)]:
        if int(name.removeprefix(MESSAGE_FIELD)) < floor:
            del out[name]
    relayed = out.get("relayed")
    if isinstance(relayed, dict):  # a place that is no whole number is not kept
        out["relayed"] = {
            p: v
            for p, v in relayed.items()
            if (place := relay_place(p)) is not None and place >= floor
        }


def relay_place(key: Any) -> int | None:
    """A `relayed` key (ConversationRecord.relayed) as its place, or None when it is no
    whole number."""
    return int(key) if isinstance(key, str) and key.isdigit() else None


_NULL = orjson.dumps(None)
_ANSWER = ("last_reply", "last_reply_at", "answered", "opening", "relayed")


def _both_answered(was: Any, mine: dict[str, Any], theirs: dict[str, Any]) -> tuple[bool, bool]:
    """(this writer's attempt began before the other's, the two answered the same
    history and one was a client's retry), when the other answered too since the base."""
    ours, other = mine.get("answered"), theirs.get("answered")
    if not isinstance(ours, dict) or not isinstance(other, dict) or other == was("answered"):
        return False, False
    same = ours.get("history") == other.get("history")
    return _began(ours) < _began(other), same and bool(ours.get("retry") or other.get("retry"))


def _began(answered: dict[str, Any]) -> float:
    at = answered.get("started")
    return float(at) if isinstance(at, int | float) else 0.0


def _counters(was: Any, mine: dict[str, Any], theirs: dict[str, Any]) -> dict[str, int]:
    """Both writers' increments added."""
    out = {
        name: (theirs.get(name) or 0) + (mine.get(name) or 0) - (was(name) or 0)
        for name in _COUNTERS
    }
    if _both_noticed_the_loop(was, mine, theirs):
        out["escalations"] -= 1  # one loop, finished by two turns at once: one escalation
    return out


def _both_noticed_the_loop(was: Any, mine: dict[str, Any], theirs: dict[str, Any]) -> bool:
    """Both writers recorded a loop escalation that was not pending when they read."""
    pending = "escalation_pending"
    return (
        was(pending) is None
        and mine.get(pending) is not None
        and theirs.get(pending) is not None
        and (mine.get("escalations") or 0) > (was("escalations") or 0)
        and (theirs.get("escalations") or 0) > (was("escalations") or 0)
    )


def _mine_wins(was: Any, mine: dict[str, Any], theirs: dict[str, Any]) -> bool:
    """This writer changed the summary: it stands when the other did not touch it, when
    it is a reset (an edit inside the summarized span: made again from cursor 0), or
    when it folded further."""
    if all(theirs.get(k) == was(k) for k in _COMPACTION) or not mine.get("cursor"):
        return True
    return bool((mine.get("cursor") or 0) > (theirs.get("cursor") or 0))


def _times(out: dict[str, Any], mine: dict[str, Any], theirs: dict[str, Any]) -> None:
    out["last_seen"] = max(mine.get("last_seen") or 0.0, theirs.get("last_seen") or 0.0)
    starts = [s for s in (mine.get("started"), theirs.get("started")) if s]
    out["started"] = min(starts) if starts else 0.0
    if theirs.get("first_turn_cost_units") is not None:
        out["first_turn_cost_units"] = theirs["first_turn_cost_units"]
