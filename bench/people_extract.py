"""What the people-facts extractor costs per message (it reads every newest customer message
on the request path, and every turn that is folded).

    python bench/people_extract.py [--seed 11] [--conversations 200] [--rounds 5]

Messages come from the workload generator (gateway/dev/cs_workload.py; pt, en, es), each
read alone as the request path reads the newest message, with the facts heard before it
in its conversation as `known`. Prints the median over rounds of µs per message, by role,
and the share of messages that state at least one fact.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from gateway.context.people import current_facts, extract_people_facts
from gateway.context.types import Fact
from gateway.dev.cs_workload import generate


def _cases(conversations: list[dict[str, Any]]) -> list[tuple[dict[str, str], list[Fact]]]:
    """(message, facts heard before it) for every message, in conversation order."""
    cases = []
    for conv in conversations:
        known: list[Fact] = []
        for n, turn in enumerate(conv["turns"]):
            message = {"role": turn["role"], "content": turn["content"]}
            cases.append((message, list(known)))
            known = current_facts([*known, *extract_people_facts([message], "chat", n, known)])
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    conversations = generate(args.conversations, args.seed, ("pt", "en", "es"))
    cases = _cases(conversations)
    for role in ("user", "assistant"):
        mine = [(m, k) for m, k in cases if m["role"] == role]
        rounds = []
        stated = 0
        for _ in range(args.rounds):
            start = time.perf_counter()
            stated = sum(bool(extract_people_facts([m], "chat", 1.0, k)) for m, k in mine)
            rounds.append((time.perf_counter() - start) / len(mine) * 1e6)
        print(
            f"{role:9} {len(mine):6} messages  {statistics.median(rounds):7.1f} µs/message "
            f"(rounds {min(rounds):.1f}-{max(rounds):.1f})  stating a fact: "
            f"{100 * stated / len(mine):.1f}%"
        )


if __name__ == "__main__":
    main()
