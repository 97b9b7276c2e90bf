"""Real English small talk for the workload's filler turns, from the `chitchat-dataset`
package (7,168 human conversations from BYU's Chit Chat Challenge, shipped as one JSON
file inside the wheel; read offline, nothing is downloaded). A dev/test dependency:
`pip install chitchat-dataset` (in the `test` extra)."""

from __future__ import annotations

import importlib.util
import json
from functools import cache
from pathlib import Path

SHORTEST, LONGEST = 8, 160


class ChitchatMissing(RuntimeError):
    """The chitchat-dataset package is not installed."""

    def __init__(self) -> None:
        super().__init__(
            "the workload generator needs the chitchat-dataset package for real English "
            "small talk: pip install chitchat-dataset (or pip install '.[test]')"
        )


def dataset_path() -> Path:
    spec = importlib.util.find_spec("chitchat_dataset")
    if spec is None or spec.origin is None:
        raise ChitchatMissing
    path = Path(spec.origin).parent / "dataset.json"
    if not path.exists():
        raise ChitchatMissing
    return path


@cache
def english_lines() -> tuple[str, ...]:
    """Every message of the dataset a customer could plausibly type between questions
    (one person's consecutive utterances joined), in the file's order, deduplicated."""
    data = json.loads(dataset_path().read_text(encoding="utf-8"))
    seen: dict[str, None] = {}
    for key in sorted(data):
        for message in data[key]["messages"]:
            text = " ".join(u["text"].strip() for u in message if u["text"].strip())
            if SHORTEST <= len(text) <= LONGEST and "http" not in text:
                seen.setdefault(text, None)
    return tuple(seen)


def conversations(split: str = "all") -> list[list[str]]:
    """Each conversation as what was said in turn (one person's consecutive messages
    joined, the two people alternating); `split` "even" or "odd" keeps the even- or
    odd-numbered ones (sorted ids), the benches' tuning and held-out halves."""
    data = json.loads(dataset_path().read_text(encoding="utf-8"))
    return [
        [" ".join(u["text"] for u in group) for group in data[key]["messages"]]
        for n, key in enumerate(sorted(data))
        if split == "all" or n % 2 == (split == "odd")
    ]
