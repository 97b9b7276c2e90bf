"""Loop detection on the labelled workload (gateway/dev/workload.py): precision and recall of
loop turns, false escalations on progressing conversations, detection delay.

    python bench/loop_eval.py [--seed 7] [--count 500]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gateway.context.policy import DEFAULT_POLICY, load_policies
from gateway.dev.workload import Conversation, generate
from gateway.loops.detector import LoopSettings, LoopState, decide, observe_turn


def evaluate(conversations: list[Conversation], settings: LoopSettings) -> dict[str, float]:
    tp = fp = fn = 0
    delays: list[int] = []
    progressing = false_escalations = 0
    for conv in conversations:
        state, escalated_at = LoopState(), None
        for turn, ((user, reply), truth) in enumerate(
            zip(conv.turns, conv.loop_turns, strict=True), 1
        ):
            decision = decide(
                state, turn, turn_ceiling=10**6, progress_window=10**6, settings=settings
            )
            state = decision.state
            if decision.escalation == "loop" and escalated_at is None:
                escalated_at = turn
            state, said = observe_turn(state, user, reply, settings)
            tp += said and truth
            fp += said and not truth
            fn += truth and not said
        if conv.loop_start is not None and escalated_at is not None:
            delays.append(escalated_at - conv.loop_start)
        if conv.kind != "loop":
            progressing += 1
            false_escalations += escalated_at is not None
    loops = sum(c.loop_start is not None for c in conversations)
    return {
        "precision": tp / (tp + fp) if tp + fp else 1.0,
        "recall": tp / (tp + fn) if tp + fn else 1.0,
        "false_escalation_rate": false_escalations / progressing if progressing else 0.0,
        "loops_escalated": len(delays) / loops if loops else 1.0,
        "median_delay_turns": statistics.median(delays) if delays else float("nan"),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--count", type=int, default=500)
    args = parser.parse_args()
    conversations = generate(args.seed, args.count)
    kinds: dict[str, int] = {}
    for c in conversations:
        kinds[c.kind] = kinds.get(c.kind, 0) + 1
    print(f"{len(conversations)} conversations: {kinds}")
    shipped = load_policies(DEFAULT_POLICY.parent).loop("-", "default")
    print(f"shipped: {shipped}")
    for threshold in (0.6, 0.7, 0.8):
        settings = dataclasses.replace(
            shipped, user_similarity=threshold, reply_similarity=threshold
        )
        r = evaluate(conversations, settings)
        print(
            f"threshold {threshold}: precision {r['precision']:.3f} recall {r['recall']:.3f} "
            f"false escalations {r['false_escalation_rate']:.2%} loops escalated "
            f"{r['loops_escalated']:.2%} median delay {r['median_delay_turns']} turns"
        )


if __name__ == "__main__":
    main()
