"""Loop detection on labelled conversations and on real ones.

Figures, per language of the labelled workload (`gateway.dev.cs_loops`: loops reworded
by both sides, and hard negatives) and on the real human conversations of the
`chitchat-dataset` package (none is a support loop: every escalation there is a false
alarm):

- precision: escalated conversations that are loops (escalated once `consecutive` turns of
  the loop were seen);
- recall: loops escalated;
- median delay: turns from the loop's first turn to the escalation;
- false alarms: conversations escalated that hold no loop;
- µs per turn at 200 turns of history, the stored state's JSON round trip included.

    python bench/loop_eval.py [--seeds 101,102] [--count 600] [--lang pt,en,es]
        [--chitchat odd|even|all|none] [--sweep] [--handwritten] [--handwritten-tune]

Splits: seeds 1-3, the even-numbered chitchat conversations and the hand-written tuning
set (`--handwritten-tune`, 96 conversations by a third author) are for tuning; the
shipped thresholds were chosen on them (`--seeds 1,2,3 --chitchat even
--handwritten-tune --sweep`). Report held-out seeds not used before (107, 108, ...), the
odd-numbered chitchat conversations and the hand-written set (`--handwritten`, a second
author's conversations, never tuned on).
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gateway.context.policy import DEFAULT_POLICY, load_policies
from gateway.dev.cs_chitchat import conversations
from gateway.dev.cs_loops import generate
from gateway.loops.detector import (
    LoopSettings,
    Turn,
    decide,
    noticed,
    observe_turn,
    read_turn,
)
from gateway.loops.state import WINDOW, LoopState

NO_CEILING = 10**6


@dataclass(frozen=True)
class Labelled:
    """A conversation to score: its turns and where its loop starts (None: no loop)."""

    language: str
    turns: Sequence[tuple[str, str]]
    loop_start: int | None
    class_hint: str = "-"


def first_escalation(turns: Iterable[tuple[str, str]], settings: LoopSettings) -> int | None:
    """The turn (1-based) whose start the detector's first `loop` escalation precedes: as
    the gateway does, it is known once the loop's last turn is answered (`noticed`), so
    a conversation that ends right there is escalated too (at the turn after its last)."""
    state = LoopState()
    for turn, (user, reply) in enumerate(turns, 1):
        decision = decide(state, turn, NO_CEILING, NO_CEILING, settings)
        if decision.escalation == "loop":
            return turn
        state, _ = observe_turn(decision.state, user, reply, settings)
        if noticed(state, settings):
            return turn + 1
    return None


def evaluate(conversations: Iterable[Labelled], settings: LoopSettings) -> dict[str, float]:
    loops = true = false = 0
    delays: list[int] = []
    total = 0
    for conv in conversations:
        total += 1
        loops += conv.loop_start is not None
        at = first_escalation(conv.turns, settings)
        if at is None:
            continue
        # Found: after `consecutive` turns of the loop (an earlier escalation counted a
        # turn from before the loop in its streak).
        if conv.loop_start is not None and at >= conv.loop_start + settings.consecutive:
            true += 1
            delays.append(at - conv.loop_start)
        else:
            false += 1
    negatives = total - loops
    return {
        "conversations": total,
        "loops": loops,
        "escalated": true + false,
        "precision": true / (true + false) if true + false else 1.0,
        "recall": true / loops if loops else 1.0,
        "false_alarm_rate": false / negatives if negatives else 0.0,
        "median_delay": statistics.median(delays) if delays else float("nan"),
    }


def workload(seeds: Sequence[int], count: int, langs: Sequence[str]) -> list[Labelled]:
    return [
        Labelled(c.language, c.turns, c.loop_start, c.class_hint)
        for seed in seeds
        for c in generate(seed, count, langs)
    ]


def chitchat(split: str) -> list[Labelled]:
    """The dataset's conversations as customer/agent turns: one person's consecutive
    messages are one message; `split` keeps the even- or odd-numbered ones (sorted ids)."""
    return [
        Labelled("en", list(zip(said[::2], said[1::2], strict=False)), None)
        for said in conversations(split)
    ]


HANDWRITTEN = Path(__file__).resolve().parent / "data" / "loops_handwritten.jsonl"
# A second hand-written set, by another author who saw neither the detector nor the
# generator (pt 36, en 36, es 24), written for tuning: read, and the push-back phrases
# (gateway.loops.pushback) and their threshold were chosen on it.
HANDWRITTEN_TUNE = HANDWRITTEN.with_name("loops_handwritten_tune.jsonl")


def handwritten(path: Path = HANDWRITTEN) -> list[Labelled]:
    """72 conversations written by hand by a second author who saw neither the detector
    nor the generator (pt 36, en 24, es 12): loops, questions asked twice whose answer
    moves on, how-to questions wrapped in formulas, ordinary progress. Never tuned on."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            conv = json.loads(line)
            turns = [(str(user), str(reply)) for user, reply in conv["turns"]]
            out.append(Labelled(conv["language"], turns, conv["loop_start"], conv["kind"]))
    return out


def cost_per_turn(conversations: Sequence[Labelled], settings: LoopSettings) -> float:
    """µs per turn of the detector as the gateway runs it (state from JSON, decide,
    observe, state to JSON) once the window is full: turns 51-200 of a 200-turn
    conversation made of the given conversations' turns, longest first, one after
    another; the median of three runs."""
    turns = [t for c in conversations for t in c.turns][:200]
    runs = []
    for _ in range(3):
        state, spent, timed = LoopState().to_json(), 0.0, 0
        for n, (user, reply) in enumerate(turns, 1):
            start = time.perf_counter()
            loop_state = decide(LoopState.counters(state), n, NO_CEILING, NO_CEILING, settings)
            observed, _ = observe_turn(
                replace(
                    LoopState.from_json(state),
                    streak=loop_state.state.streak,
                    recent=loop_state.state.recent,
                ),
                user,
                reply,
                settings,
            )
            state = observed.to_json()
            if n > 50:
                spent += time.perf_counter() - start
                timed += 1
        runs.append(spent / timed * 1e6 if timed else float("nan"))
    return statistics.median(runs)


def _line(name: str, r: dict[str, float]) -> str:
    return (
        f"{name:<18} n={r['conversations']:<5} loops={r['loops']:<4} "
        f"escalated={r['escalated']:<4} precision {r['precision']:.3f} "
        f"recall {r['recall']:.3f} false alarms {r['false_alarm_rate']:.2%} "
        f"median delay {r['median_delay']}"
    )


def report(convs: list[Labelled], real: list[Labelled], settings: LoopSettings) -> None:
    for lang in sorted({c.language for c in convs}):
        mine = [c for c in convs if c.language == lang]
        print(_line(f"generated {lang}", evaluate(mine, settings)))
    for hint in sorted({c.class_hint for c in convs}):
        mine = [c for c in convs if c.class_hint == hint]
        print(_line(f"  class {hint}", evaluate(mine, settings)))
    print(_line("generated all", evaluate(convs, settings)))
    if real:
        print(_line("chitchat (real)", evaluate(real, settings)))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", default="101,102")
    parser.add_argument("--count", type=int, default=600)
    parser.add_argument("--lang", default="pt,en,es")
    parser.add_argument("--chitchat", default="odd", choices=("odd", "even", "all", "none"))
    parser.add_argument("--sweep", action="store_true", help="a grid of thresholds too")
    parser.add_argument(
        "--handwritten", action="store_true", help="also score bench/data/loops_handwritten"
    )
    parser.add_argument(
        "--handwritten-tune",
        action="store_true",
        help="also score (and sweep on) bench/data/loops_handwritten_tune, a tuning set",
    )
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    convs = workload(seeds, args.count, args.lang.split(","))
    tune = handwritten(HANDWRITTEN_TUNE) if args.handwritten_tune else []
    real = [] if args.chitchat == "none" else chitchat(args.chitchat)
    shipped = load_policies(DEFAULT_POLICY.parent).loop("-", "default")
    print(f"seeds {seeds}, chitchat {args.chitchat} ({len(real)} conversations)")
    print(f"shipped (default class): {shipped}")
    report(convs, real, shipped)
    if args.handwritten:
        written = handwritten()
        for lang in sorted({c.language for c in written}):
            mine = [c for c in written if c.language == lang]
            print(_line(f"handwritten {lang}", evaluate(mine, shipped)))
        print(_line("handwritten all", evaluate(written, shipped)))
    for lang in sorted({c.language for c in tune}):
        mine = [c for c in tune if c.language == lang]
        print(_line(f"hw-tune {lang}", evaluate(mine, shipped)))
    for lang in sorted({c.language for c in convs}):
        longest = sorted((c for c in convs if c.language == lang), key=lambda c: -len(c.turns))
        print(f"cost {lang}: {cost_per_turn(longest, shipped):.1f} µs per turn at 200 turns")
    if real:
        longest = sorted(real, key=lambda c: -len(c.turns))
        print(f"cost chitchat: {cost_per_turn(longest, shipped):.1f} µs per turn at 200 turns")
    if args.sweep:
        # The hand-written set counts as one pool: 10-15 loops a language, where one
        # conversation moves a language's recall by 0.07-0.10.
        sweep([*convs, *(replace(c, language="hw-all") for c in tune)], real)


def figures(conversations: Sequence[Labelled]) -> list[list[Turn]]:
    """Every turn read against its window: what the thresholds are applied to (it does
    not depend on them), so a grid of settings costs one read of the conversations."""
    out = []
    for conv in conversations:
        state, turns = LoopState(), []
        for user, reply in conv.turns:
            state, turn = read_turn(state, user, reply)
            state = replace(state, turns=(*state.turns, (turn.user, turn.reply))[-WINDOW:])
            turns.append(turn)
        out.append(turns)
    return out


def first_streak(loop_turns: Iterable[bool], consecutive: int, within: int = 0) -> int | None:
    """The turn (1-based) at whose start `consecutive` loop turns among the last
    max(within, consecutive) escalate (in a row when `within` is at most `consecutive`)."""
    last = max(within, consecutive)
    recent: list[bool] = []
    for n, is_loop in enumerate(loop_turns, 1):
        recent.append(is_loop)
        if sum(recent[-last:]) >= consecutive:
            return n + 1  # noticed once turn n is answered (`first_escalation`)
    return None


def _escalates_at(turns: list[Turn], settings: LoopSettings) -> int | None:
    return first_streak((t.repeats(settings) for t in turns), settings.consecutive, settings.within)


def by_language(
    convs: Sequence[Labelled], escalated_at: Sequence[int | None], consecutive: int
) -> dict[str, tuple[float, float]]:
    """(precision, recall) per language, given where each conversation escalated."""
    out = {}
    for lang in sorted({c.language for c in convs}):
        true = false = loops = 0
        for conv, at in zip(convs, escalated_at, strict=True):
            if conv.language != lang:
                continue
            loops += conv.loop_start is not None
            start = conv.loop_start
            if at is not None and start is not None and at >= start + consecutive:
                true += 1
            elif at is not None:
                false += 1
        out[lang] = (true / (true + false) if true + false else 1.0, true / loops if loops else 1)
    return out


def language_line(
    convs: Sequence[Labelled], escalated_at: Sequence[int | None], consecutive: int
) -> str:
    """Precision and recall per language, given where each conversation escalated."""
    found = by_language(convs, escalated_at, consecutive)
    return " | ".join(f"{lang} P {p:.3f} R {r:.3f}" for lang, (p, r) in found.items())


def _grid_line(convs: list[Labelled], read: list[list[Turn]], settings: LoopSettings) -> str:
    ats = [_escalates_at(turns, settings) for turns in read]
    return language_line(convs, ats, settings.consecutive)


GRID = {  # what Turn.repeats reads
    "user_similarity": (0.1, 0.2, 0.3),
    "reply_similarity": (0.3, 0.4, 0.5),
    # above 1: that route off
    "window_user_similarity": (0.4, 0.5, 0.7, 2.0),
    "window_reply_similarity": (0.5, 0.6, 0.7, 0.8),
    "pushback_reply_similarity": (0.2, 0.25, 0.3, 0.4, 2.0),
}
STREAKS = ((2, 2), (2, 3), (2, 4), (3, 3), (3, 4))  # (consecutive, within)
REAL_ALARMS_MOST = 0.005  # of real conversations escalated, at most


PRECISION_LEAST = 0.95  # in each generated language (the goal)
# Mean recalls (of en, es, pt and the hand-written pool) this close are 3-4 generated
# loops apart (one of 180 moves the mean by 0.0014), less than one hand-written loop
# (one of 40: 0.0063): the fewer real conversations escalated decides between them.
MEAN_TIE = 0.005


def _pickable(found: dict[str, tuple[float, float]]) -> tuple[float, float] | None:
    """(worst-language recall, mean recall) of a setting whose precision is at least
    PRECISION_LEAST in every generated language, else None. The hand-written set's recall
    counts (its languages pooled, "hw-all"), not its precision: with 40 loops, one early
    escalation moves its precision by 0.03-0.1."""
    if any(p < PRECISION_LEAST for lang, (p, _) in found.items() if not lang.startswith("hw-")):
        return None
    recalls = [r for _, r in found.values()]
    return min(recalls), sum(recalls) / len(recalls)


def sweep(convs: list[Labelled], real: list[Labelled]) -> None:
    """Every setting of GRID x STREAKS, then the one the rule picks among those with at
    most REAL_ALARMS_MOST of the real conversations escalated and precision at least
    PRECISION_LEAST in each generated language: the best worst-language recall; among
    settings within 0.02 of it, those within MEAN_TIE of the best mean recall, and of
    these the fewest real alarms. (Loop turns among the last 3 or 4 were left out of the
    pick until 2026-12-06: the detector of 2026-12-01 escalated 17-19 of the held-out
    real conversations with them against 10 in a row. Since the subject, frame and
    restating changes they escalate 9 of the tuning half against 8, and are picked by
    the same rule as the others.)"""
    read, read_real = figures(convs), figures(real)
    names = (*GRID, "consecutive", "within")
    print(" ".join(names) + " | per language precision (P) and recall (R) | real alarms")
    rows = []
    for values in itertools.product(*GRID.values()):
        settings = LoopSettings(**dict(zip(GRID, values, strict=True)), consecutive=2, within=2)
        flags = [[t.repeats(settings) for t in turns] for turns in read]
        real_flags = [[t.repeats(settings) for t in turns] for turns in read_real]
        for consecutive, within in STREAKS:
            ats = [first_streak(f, consecutive, within) for f in flags]
            alarms = sum(first_streak(f, consecutive, within) is not None for f in real_flags)
            row = (*values, consecutive, within)
            found = by_language(convs, ats, consecutive)
            if alarms <= REAL_ALARMS_MOST * len(real):
                score = _pickable(found)
                if score is not None:
                    rows.append((score, alarms, row))
            line = " | ".join(f"{lang} P {p:.3f} R {r:.3f}" for lang, (p, r) in found.items())
            print(f"{' '.join(map(str, row))} | {line} | {alarms}/{len(real)}")
    if rows:
        best = max(score[0] for score, _, _ in rows)
        near = [r for r in rows if r[0][0] >= best - 0.02]
        best_mean = max(r[0][1] for r in near)
        near = [r for r in near if r[0][1] >= best_mean - MEAN_TIE]
        (worst, mean), alarms, row = min(near, key=lambda r: (r[1], -r[0][1]))
        print(
            f"picked: {dict(zip(names, row, strict=True))} worst recall {worst:.3f}, "
            f"mean recall {mean:.3f}, real alarms {alarms}/{len(real)}"
        )


if __name__ == "__main__":
    main()
