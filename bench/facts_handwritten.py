"""What the fact extractors hear in conversations nobody here generated: a hand-written,
labelled set of customer-service conversations (`bench/data/workload_handwritten_*.jsonl`,
pt, en, es; written by a second author who read neither the generator nor the
extractor), in the workload format that `gateway replay` reads.

Each conversation is read as the request path reads it (`facts_on_chitchat.heard`:
each newest message scanned alone, with the facts heard before it known, the shipped
context.yaml's patterns beside the people-facts extractor). At the end, per planted
fact that is still current (not superseded): is it among the facts the gateway would
show (rendered as the window renders them, looked for as `gateway replay` looks for a
fact in a request)? And per superseded one: is its old value still shown (stale)?
Facts heard that match no planted fact are counted per kind; `--show` prints them with
the misses, to be judged by hand (a name the writer did not label may be a true one).

    python bench/facts_handwritten.py [--split a|b|c|d|e|f|all] [--show] [--file F.jsonl]

Splits: `a`, `d` and `e` may be read (misses looked at, the extractor changed for
them); `b`, `c` and `f` are held out and only scored.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from facts_on_chitchat import heard, shipped_patterns  # noqa: E402

from gateway.context.prompts import fact_line  # noqa: E402
from gateway.context.types import fact_kind  # noqa: E402
from gateway.dev.replay_metrics import fact_present, normalized  # noqa: E402

DATA = ROOT / "bench" / "data"


def load(split: str, file: str | None = None) -> list[dict[str, Any]]:
    names = ("a", "b") if split == "all" else (split,)
    paths = [Path(file)] if file else [DATA / f"workload_handwritten_{n}.jsonl" for n in names]
    rows = []
    for path in paths:
        with path.open(encoding="utf-8") as f:
            rows += [json.loads(line) for line in f if line.strip()]
    return rows


def score(row: dict[str, Any], patterns: list[Any]) -> dict[str, Any]:
    """One conversation: planted facts kept / missed / stale, and facts heard unplanted."""
    conv = [{"role": t["role"], "content": t["content"], "at": t.get("at")} for t in row["turns"]]
    _, known = heard(conv, patterns, row.get("channel", "chat"))
    shown = [normalized(fact_line(f)) for f in known]
    text = "\n".join(shown)
    planted = [f for f in row["facts"] if not f.get("episode")]  # this conversation's
    out: dict[str, Any] = {"kept": [], "missed": [], "stale": [], "unplanted": []}
    for fact in planted:
        present = fact_present(fact, text)
        if fact.get("superseded_by"):
            if present:
                out["stale"].append(fact)
        else:
            out["kept" if present else "missed"].append(fact)
    for f, line in zip(known, shown, strict=True):
        if not any(fact_present(p, line) for p in planted):
            out["unplanted"].append((fact_kind(f) or "(none)", f.value or f.text))
    return out


Counts = dict[str, "collections.Counter[str]"]


def tally(rows: list[dict[str, Any]], patterns: list[Any], show: bool) -> Counts:
    """Per fact type: current planted facts kept and checked, corrected ones and those
    still shown stale, facts heard that no one planted."""
    names = ("kept", "checked", "stale", "corrected", "unplanted")
    counts: Counts = {name: collections.Counter() for name in names}
    for row in rows:
        got = score(row, patterns)
        counts["checked"].update(f["type"] for f in got["kept"] + got["missed"])
        counts["kept"].update(f["type"] for f in got["kept"])
        counts["stale"].update(f["type"] for f in got["stale"])
        counts["unplanted"].update(kind for kind, _ in got["unplanted"])
        counts["corrected"].update(
            f["type"] for f in row["facts"] if f.get("superseded_by") and not f.get("episode")
        )
        if show:
            _show(row, got)
    return counts


def _show(row: dict[str, Any], got: dict[str, Any]) -> None:
    if not (got["missed"] or got["stale"] or got["unplanted"]):
        return
    print(f"\n[{row['id']}] {row['language']} {row['channel']}")
    for fact in got["missed"]:
        said = row["turns"][fact["stated_at"]]["content"]
        print(f"  MISSED {fact['type']}: {fact['value']!r} in {said[:160]!r}")
    for fact in got["stale"]:
        print(f"  STALE  {fact['type']}: {fact['value']!r}")
    for kind, value in got["unplanted"]:
        print(f"  HEARD  {kind}: {value!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--split", default="a", choices=("a", "b", "c", "d", "e", "f", "all"))
    parser.add_argument("--show", action="store_true", help="print misses, stale, unplanted")
    parser.add_argument("--file", help="another workload JSONL instead (its episodes ignored)")
    args = parser.parse_args()
    rows = load(args.split, args.file)
    c = tally(rows, shipped_patterns(), args.show)
    langs = collections.Counter(r["language"] for r in rows)
    print(
        f"split {args.split}: {len(rows)} conversations ({dict(langs)}), "
        f"{sum(c['checked'].values())} current planted facts"
    )
    print(f"{'type':10s} {'kept':>12s} {'stale (of corrected)':>22s} {'heard, unplanted':>18s}")
    for kind in sorted(set(c["checked"]) | set(c["unplanted"]) | set(c["corrected"])):
        kept, checked = c["kept"][kind], c["checked"][kind]
        share = f"{100 * kept / checked:.1f}%" if checked else "-"
        print(
            f"{kind:10s} {share:>6s} {kept:>2d}/{checked:<3d}"
            f" {c['stale'][kind]:>10d}/{c['corrected'][kind]:<11d} {c['unplanted'][kind]:>18d}"
        )
    kept, checked = sum(c["kept"].values()), sum(c["checked"].values())
    print(f"{'all':10s} {100 * kept / max(checked, 1):.1f}% {kept}/{checked}")


if __name__ == "__main__":
    main()
