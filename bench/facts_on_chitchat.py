"""What the fact extractors hear in real small talk: `chitchat-dataset`'s 7,168 human
conversations (English, two people), read as the request path reads a conversation:
the first person's messages as the customer's ("user"), the second's as the agent's
("assistant"), each newest message scanned alone with the facts heard before it
known (`gateway.context.heard._scan`, the shipped context.yaml's patterns beside the
people-facts extractor).

None of these is a support conversation, so nothing there is an order number, a
promise or a complaint; a name or a city may be said ("I'm from Provo"). Prints facts
per 100 conversations by kind, and `--sample N` draws N facts at random (seeded) with
the sentence each came from, to be judged by hand.

    python bench/facts_on_chitchat.py [--split even|odd|all] [--sample 40] [--seed 1]

Splits: even-numbered conversations (sorted ids) for tuning, odd for held-out figures,
as bench/loop_eval.py splits them.
"""

from __future__ import annotations

import argparse
import collections
import random
import sys
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from gateway.context.heard import _scan, merged_facts  # noqa: E402
from gateway.context.linear_regex import compile_linear  # noqa: E402
from gateway.context.policy import shipped_policy  # noqa: E402
from gateway.context.summaries import Pattern  # noqa: E402
from gateway.context.types import Fact, fact_kind  # noqa: E402
from gateway.dev.cs_chitchat import conversations as chitchat_conversations  # noqa: E402


def conversations(split: str) -> list[list[dict[str, str]]]:
    """The first person's messages as the customer's, the second's as the agent's."""
    roles = ("user", "assistant")
    return [
        [{"role": roles[i % 2], "content": text} for i, text in enumerate(said)]
        for said in chitchat_conversations(split)
    ]


def shipped_patterns() -> list[Pattern]:
    """The packaged context.yaml's extraction patterns, as the gateway compiles them."""
    return [
        Pattern(name, compile_linear(p.regex), tuple(p.tags), p.scope)
        for name, p in shipped_policy().extraction.items()
    ]


def heard(
    conv: list[dict[str, str]], patterns: list[Pattern], channel: str = "chat"
) -> tuple[list[tuple[Fact, str]], list[Fact]]:
    """Every fact heard, with the message it was heard in, and the facts current at the
    end (a corrected value superseded). A customer's message is read as the newest, with
    the agent's message before it; an agent's as its turn folds, as of when it was
    relayed (the record keeps each answer's relay time: "amanhã" gets its day)."""
    known: list[Fact] = []
    found: list[tuple[Fact, str]] = []
    for n, message in enumerate(conv):
        previous = conv[n - 1] if n else {}
        before = previous["content"] if previous.get("role") == "assistant" else ""
        # when it was said, if the conversation says (a workload's turns carry `at`)
        at = datetime.fromisoformat(message["at"]).timestamp() if message.get("at") else n
        # the agent's turns are read as they fold, as of their relay time (heard.of_fold)
        agent = message.get("role") == "assistant"
        new = _scan(
            [],
            [message],
            patterns,
            channel,
            float(at),
            known,
            (),
            before[-2000:],
            not agent,
            [float(at)] if agent else (),
        )
        ids = {f.id for f in known}
        found += [(f, message["content"]) for f in new if f.id not in ids]
        known = merged_facts(known, new)
    return found, known


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", default="even", choices=("even", "odd", "all"))
    parser.add_argument("--sample", type=int, default=0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kind", default="", help="sample only facts of this kind")
    args = parser.parse_args()
    patterns = shipped_patterns()
    convs = conversations(args.split)
    start = time.perf_counter()
    everything: list[tuple[int, Fact, str]] = []
    with_any = 0
    messages = 0
    for i, conv in enumerate(convs):
        messages += len(conv)
        found, _ = heard(conv, patterns)
        with_any += bool(found)
        everything += [(i, f, text) for f, text in found]
    spent = time.perf_counter() - start
    kinds = collections.Counter(fact_kind(f) or "(none)" for _, f, _ in everything)
    print(
        f"split {args.split}: {len(convs)} conversations, {messages} messages, "
        f"{len(everything)} facts heard ({100 * len(everything) / len(convs):.1f} per 100 "
        f"conversations; {100 * with_any / len(convs):.1f}% of conversations with any), "
        f"{1e6 * spent / messages:.0f} µs a message"
    )
    for kind, n in kinds.most_common():
        print(f"  {kind:10s} {n:6d}  {100 * n / len(convs):6.1f} per 100 conversations")
    pool = [e for e in everything if not args.kind or fact_kind(e[1]) == args.kind]
    for i, f, text in random.Random(args.seed).sample(pool, min(args.sample, len(pool))):
        print(f"\n[{i}] {fact_kind(f)}: {f.value!r}\n    {text[:300]!r}")


if __name__ == "__main__":
    main()
