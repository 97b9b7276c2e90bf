"""Reading a workload for `gateway replay`: every line checked before anything is played,
so a bad file stops with one line per problem (the file's line and the field), never a
traceback half-way through. The format is gateway/dev/cs_workload.py's docstring."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

ROLES = ("user", "assistant")
MOST_PROBLEMS = 20  # a file wrong everywhere is said so with its first few


class WorkloadError(ValueError):
    """The workload cannot be replayed: `problems`, one line each, name the file's line
    and the field."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


def turn_time(turn: dict[str, Any]) -> float:
    """A workload turn's `at` (ISO 8601, "Z" for UTC) in seconds since the epoch."""
    return datetime.fromisoformat(str(turn["at"]).replace("Z", "+00:00")).timestamp()


def _time_problem(value: Any) -> str | None:
    if not isinstance(value, str):
        return "must be an ISO 8601 time"
    try:
        turn_time({"at": value})
    except ValueError:
        return f"{value!r} is not an ISO 8601 time"
    return None


def _turns(turns: Any, where: str, timed: bool, fact_ids: set[str]) -> Iterator[str]:
    if not isinstance(turns, list):
        yield f"{where}: must be a list of turns"
        return
    for n, turn in enumerate(turns):
        yield from _turn(turn, f"{where}[{n}]", timed, fact_ids)


def _turn(turn: Any, at: str, timed: bool, fact_ids: set[str]) -> Iterator[str]:
    if not isinstance(turn, dict):
        yield f"{at}: must be an object"
        return
    if turn.get("role") not in ROLES:
        yield f"{at}.role: must be user or assistant, not {turn.get('role')!r}"
    if not isinstance(turn.get("content"), str):
        yield f"{at}.content: must be text"
    if "at" in turn or (timed and turn.get("role") == "user"):
        problem = _time_problem(turn.get("at"))
        if problem:
            yield f"{at}.at: {problem}" + (" (--clock workload plays by it)" if timed else "")
    needs = turn.get("needs")
    if needs is not None and not isinstance(needs, list):
        yield f"{at}.needs: must be a list of fact ids"
        return
    for fid in needs or ():
        if str(fid) not in fact_ids:
            yield f"{at}.needs: {fid!r} names no fact of this conversation"


def _facts(conv: dict[str, Any], turns_of: dict[str | None, Any]) -> Iterator[str]:
    facts = conv.get("facts")
    if not isinstance(facts, list):
        yield "facts: must be a list"
        return
    ids = {str(f.get("id")) for f in facts if isinstance(f, dict)}
    for n, fact in enumerate(facts):
        at = f"facts[{n}]"
        if not isinstance(fact, dict):
            yield f"{at}: must be an object"
            continue
        if fact.get("id") is None:
            yield f"{at}.id: missing"
        if not isinstance(fact.get("type"), str):
            yield f"{at}.type: must be text"
        if not any(isinstance(fact.get(k), str) for k in ("value", "surface")):
            yield f"{at}: needs a value or a surface (text)"
        episode = fact.get("episode")
        if episode not in turns_of:
            yield f"{at}.episode: {episode!r} names no episode of this conversation"
            continue
        turns, stated = turns_of[episode], fact.get("stated_at")
        size = len(turns) if isinstance(turns, list) else 0
        if not isinstance(stated, int) or isinstance(stated, bool) or not 0 <= stated < size:
            yield f"{at}.stated_at: must be the index of one of its turns (0-{size - 1})"
        newer = fact.get("superseded_by")
        if newer is not None and str(newer) not in ids:
            yield f"{at}.superseded_by: {newer!r} names no fact of this conversation"


def _text_field(conv: dict[str, Any], key: str) -> Iterator[str]:
    if not isinstance(conv.get(key), str) or not conv[key]:
        yield f"{key}: missing (text)"


def conversation_problems(conv: Any, timed: bool) -> Iterator[str]:
    """What keeps one line of the file from being replayed (no line number)."""
    if not isinstance(conv, dict):
        yield f"must be a JSON object (a conversation), not {type(conv).__name__}"
        return
    for key in ("id", "channel", "system"):
        yield from _text_field(conv, key)
    if conv.get("customer_id") in (None, ""):
        yield "customer_id: missing"
    episodes = conv.get("episodes")
    turns_of: dict[str | None, Any] = {None: conv.get("turns")}
    if not isinstance(episodes, list):
        yield "episodes: missing (a list, [] when the customer has none)"
        episodes = []
    facts = conv.get("facts")
    listed = facts if isinstance(facts, list) else []
    fact_ids = {str(f.get("id")) for f in listed if isinstance(f, dict)}
    for n, ep in enumerate(episodes):
        if not isinstance(ep, dict):
            yield f"episodes[{n}]: must be an object"
            continue
        for key in ("id", "channel"):
            if not isinstance(ep.get(key), str) or not ep[key]:
                yield f"episodes[{n}].{key}: missing (text)"
        turns_of[ep.get("id")] = ep.get("turns")
        yield from _turns(ep.get("turns"), f"episodes[{n}].turns", timed, fact_ids)
    yield from _turns(conv.get("turns"), "turns", timed, fact_ids)
    yield from _facts(conv, turns_of)


def _played_ids(conv: dict[str, Any]) -> Iterable[str]:
    yield str(conv.get("id"))
    for ep in conv.get("episodes") or ():
        if isinstance(ep, dict):
            yield str(ep.get("id"))


def read_workload(path: Path, clock: str = "wall") -> list[dict[str, Any]]:
    """Every conversation of the file, or WorkloadError naming each bad line and field
    (`clock` "workload": every customer turn needs its `at`). OSError when unreadable."""
    timed = clock == "workload"
    conversations: list[dict[str, Any]] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    with path.open(encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                conv = json.loads(line)
            except json.JSONDecodeError as exc:
                problems.append(f"{path}:{number}: not JSON: {exc.msg} (column {exc.colno})")
                continue
            found = list(conversation_problems(conv, timed))
            problems += [f"{path}:{number}: {p}" for p in found]
            if found:
                continue
            for pid in _played_ids(conv):
                if pid in seen:
                    problems.append(f"{path}:{number}: id {pid!r} is used on line {seen[pid]} too")
                seen.setdefault(pid, number)
            conversations.append(conv)
    if not problems and not conversations:
        problems.append(f"{path}: no conversations (an empty workload)")
    if problems:
        extra = len(problems) - MOST_PROBLEMS
        more = [f"... and {extra} more"] if extra > 0 else []
        raise WorkloadError(problems[:MOST_PROBLEMS] + more)
    return conversations
