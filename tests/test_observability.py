"""Dashboards and alerts (deploy/grafana, deploy/prometheus) against the real metrics.

A gateway in process takes real traffic through the openai SDK (a summarizing
conversation that hits its quota, a loop that escalates, a spend ceiling that blocks, an
upstream 503, a stream); its /metrics scrape must pass `promtool check metrics`, show that
traffic, and hold every metric the dashboard and the alert rules name. The rules pass
`promtool check rules` and their unit tests (`promtool test rules`). Without promtool
(Debian's `prometheus` package ships it) only the promtool checks are skipped, saying so.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
import yaml
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.dashboard import Dashboard
from openai.types.chat import ChatCompletionMessageParam
from prometheus_client import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families

from gateway.config import SIMULATOR
from gateway.ops.metrics import GatewayMetrics
from tests.inprocess import InProcessGateway
from tests.servers import GatewayProc, edit_policy, start_gateway

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
DASHBOARD = DEPLOY / "grafana" / "dashboards" / "gateway.json"
ALERTS = DEPLOY / "prometheus" / "alerts.yml"
ALERT_TESTS = DEPLOY / "prometheus" / "alerts.test.yml"
# Series Prometheus makes itself (a scrape's outcome), not the gateway.
PROMETHEUS_SERIES = {"up"}
PROMQL_WORDS = {"by", "without", "on", "ignoring", "group_left", "group_right"}
PROMQL_WORDS |= {"and", "or", "unless", "bool", "offset"}

SYSTEM = "You are the support agent of an online store. Be brief and precise."
LOOP_ASKS = [
    "Where is my order ORD-55555? It has not arrived yet.",
    "My order ORD-55555 still has not arrived, where is it?",
    "I am still waiting for order ORD-55555, where is it now?",
    "Can you tell me where order ORD-55555 is? It never arrived.",
    "Order ORD-55555 has not arrived. Where is it?",
]
SAME_ANSWER = "Order ORD-55555 is in transit and should arrive within 3 to 5 business days."


def promtool(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    found = shutil.which("promtool")
    if found is None:
        pytest.skip(
            "promtool is absent: install Debian's `prometheus` package (it ships promtool) "
            "to run Prometheus's own checks of the metrics and alert rules"
        )
    return subprocess.run(
        [found, *args], input=stdin, capture_output=True, text=True, timeout=120, check=False
    )


def _chat(
    client: openai.OpenAI,
    messages: list[ChatCompletionMessageParam],
    text: str,
    conversation: str,
    **headers: str,
) -> dict[str, str]:
    messages.append({"role": "user", "content": text})
    raw = client.chat.completions.with_raw_response.create(
        model="gpt-4o-mini",
        messages=messages,
        extra_headers={"X-Conversation-Id": conversation, **headers},
    )
    reply = raw.parse().choices[0].message.content or ""
    messages.append({"role": "assistant", "content": reply})
    return {k.lower(): v for k, v in raw.headers.items()}


def _summarizing_conversation(client: openai.OpenAI) -> int:
    """A support conversation past its (small) quota: turns leave it for a summary."""
    messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": SYSTEM}]
    evicted = 0
    for turn in range(1, 25):
        text = (
            f"Turn {turn}: my order ORD-48213 arrived with a broken lid; any news on the "
            "replacement? I am at home all afternoon and can sign for the courier."
        )
        evicted = int(_chat(client, messages, text, "obs-long")["x-gateway-evicted-turns"])
        if evicted and turn >= 12:
            break
    return evicted


def _loop(client: openai.OpenAI) -> list[str | None]:
    """The same question, the same answer: the loop detector escalates."""
    messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": SYSTEM}]
    seen = [
        _chat(client, messages, "Hi, I changed my phone number to 5550101.", "obs-loop"),
        _chat(client, messages, "Also my loyalty card is LC-7788, is it linked?", "obs-loop"),
    ]
    for ask in LOOP_ASKS:
        seen.append(_chat(client, messages, ask, "obs-loop", **{"x-simulator-reply": SAME_ANSWER}))
    return [h.get("x-gateway-escalation") for h in seen]


def _traffic(gw: InProcessGateway) -> None:
    acme, globex = gw.openai("acme"), gw.openai("globex")
    assert _summarizing_conversation(acme) > 0, "the conversation must summarize"
    assert "loop" in _loop(acme)
    with pytest.raises(openai.RateLimitError):  # globex's plan: a ceiling of nothing
        globex.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "Is my order late?"}]
        )
    with pytest.raises(openai.InternalServerError):
        acme.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": "Where is my refund?"}],
            extra_headers={"x-simulator-status": "503"},
        )
    stream = acme.chat.completions.create(
        model="gpt-4o-mini",
        messages=[{"role": "user", "content": "Do you sell gift cards?"}],
        stream=True,
    )
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices)


@pytest.fixture(scope="module")
def scrape(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """/metrics of an in-process gateway (SQLite) after the traffic above."""
    root = tmp_path_factory.mktemp("observability")
    gw = InProcessGateway(root, SIMULATOR, f"sqlite:///{root / 'gateway.db'}")
    edit_policy(root, {"classes.support.quota_tokens": 1200})
    spend = {
        "plans": {
            "pro": {"monthly_usd": "1000", "action": "block"},
            "basic": {"monthly_usd": "0", "action": "block"},
        }
    }
    (root / "policies" / "spend.yaml").write_text(yaml.safe_dump(spend))
    gw.restart()
    try:
        _traffic(gw)
        response = gw.admin("/metrics")
        assert response.status_code == 200
        yield response.text
    finally:
        gw.stop()


def _value(text: str, name: str, **labels: str) -> float:
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                return float(sample.value)
    raise AssertionError(f"no sample {name}{labels}")


def _total(text: str, name: str, **labels: str) -> float:
    return sum(
        float(sample.value)
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items())
    )


def exported_names(text: str) -> set[str]:
    """Every series name a PromQL expression may use against this scrape: the samples,
    and each declared family (a labelled metric with no sample yet still declares it)."""
    names = set()
    for family in text_string_to_metric_families(text):
        names |= {s.name for s in family.samples}
        suffixes = {
            "counter": ("_total",),
            "histogram": ("_bucket", "_sum", "_count"),
        }.get(family.type, ("",))
        names |= {family.name + suffix for suffix in suffixes}
    return names


def metric_names(expr: str) -> set[str]:
    """The metric names in a PromQL expression (not its functions, keywords or labels)."""
    expr = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    expr = re.sub(r"\{[^}]*\}|\[[^\]]*\]", " ", expr)
    expr = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", expr)
    found = set()
    for m in re.finditer(r"(?<![\w.$])([a-zA-Z_:][\w:]*)\s*(\()?", expr):
        if m.group(2) is None and m.group(1) not in PROMQL_WORDS:
            found.add(m.group(1))
    return found


def dashboard_exprs(dashboard: dict[str, Any]) -> list[str]:
    return [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]


def alert_exprs() -> list[str]:
    groups = yaml.safe_load(ALERTS.read_text())["groups"]
    return [rule["expr"] for group in groups for rule in group["rules"]]


def test_a_scrape_after_traffic_passes_promtool_check_metrics(scrape: str) -> None:
    checked = promtool("check", "metrics", stdin=scrape)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.strip() == "" and checked.stderr.strip() == ""


def test_every_exported_metric_has_the_gateway_prefix(scrape: str) -> None:
    names = {family.name for family in text_string_to_metric_families(scrape)}
    assert names and all(name.startswith("gateway_") for name in names), sorted(names)


def test_the_traffic_shows_in_the_metrics_the_dashboard_reads(scrape: str) -> None:
    assert _value(scrape, "gateway_context_turns_evicted_total", reason="quota") > 0
    assert _value(scrape, "gateway_context_quota_hits_total", **{"class": "support"}) > 0
    # Conversations start at their first answered turn: the blocked and the failed first
    # turns start none; the loop started as "default" (then became support).
    support = {"class": "support"}
    assert _value(scrape, "gateway_conversations_started_total", **support) == 1
    assert _value(scrape, "gateway_conversations_started_total", **{"class": "default"}) == 1
    assert _value(scrape, "gateway_conversations_quota_hit_total", **support) == 1
    escalated = {"class": "support", "reason": "loop"}
    assert _value(scrape, "gateway_conversation_escalations_total", **escalated) >= 1
    assert _value(scrape, "gateway_spend_ceiling_blocks_total", plan="basic") == 1
    assert _value(scrape, "gateway_upstream_responses_total", status_class="5xx") == 1
    assert _value(scrape, "gateway_upstream_responses_total", status_class="2xx") > 10
    chat_calls = _value(scrape, "gateway_request_duration_seconds_count", route="chat")
    assert chat_calls == _total(scrape, "gateway_requests_total", route="chat") > 10
    assert _value(scrape, "gateway_overhead_seconds_count", route="chat", stream="true") == 1
    assert _value(scrape, "gateway_store_scrape_ok") == 1
    # acme spent under its monthly ceiling of 1000 USD; globex spent nothing at all.
    spent = _value(scrape, "gateway_tenant_ceiling_spent_usd", tenant="acme", period="month")
    assert spent == _value(scrape, "gateway_tenant_cost_usd_total", tenant="acme", plan="pro")
    assert _value(scrape, "gateway_tenant_ceiling_usd", tenant="acme", period="month") == 1000
    assert 'tenant="globex"' not in scrape.split("gateway_tenant_ceiling_spent_usd", 1)[1]


def test_the_dashboard_and_alerts_name_only_metrics_the_gateway_exports(scrape: str) -> None:
    exported = exported_names(scrape) | PROMETHEUS_SERIES
    dashboard = json.loads(DASHBOARD.read_text())
    for where, exprs in (("dashboard", dashboard_exprs(dashboard)), ("alerts", alert_exprs())):
        assert exprs
        for expr in exprs:
            named = metric_names(expr)
            assert named, f"{where}: no metric in {expr!r}"
            assert named <= exported, f"{where}: {sorted(named - exported)} not exported"


def test_metric_names_reads_promql() -> None:
    expr = (
        'histogram_quantile(0.95, sum by (le, route) (rate(x_bucket{route=~"a|b"}[5m])))'
        " / on (route) group_left max without (instance) (y_total offset 1h) > 1e3 and up"
    )
    assert metric_names(expr) == {"x_bucket", "y_total", "up"}


def test_the_alert_rules_pass_promtool_check_and_their_unit_tests() -> None:
    checked = promtool("check", "rules", str(ALERTS))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS: 8 rules found" in checked.stdout
    tested = promtool("test", "rules", str(ALERT_TESTS))
    assert tested.returncode == 0, tested.stdout + tested.stderr


def test_the_dashboard_has_what_grafanas_importer_needs() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["title"] and dashboard["uid"] and dashboard["schemaVersion"] >= 36
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    panels = dashboard["panels"]
    ids = [p["id"] for p in panels]
    assert len(ids) == len(set(ids)), "panel ids must be unique"
    cells: set[tuple[int, int]] = set()
    for p in panels:
        grid = p["gridPos"]
        assert grid["x"] + grid["w"] <= 24 and grid["w"] > 0 and grid["h"] > 0, p["title"]
        columns, rows = (
            range(grid["x"], grid["x"] + grid["w"]),
            range(grid["y"], grid["y"] + grid["h"]),
        )
        taken = {(x, y) for x in columns for y in rows}
        assert not cells & taken, f"{p['title']} overlaps another panel"
        cells |= taken
        if p["type"] == "row":
            continue
        assert p["title"] and p["targets"], p
        assert p["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        ref_ids = [t["refId"] for t in p["targets"]]
        assert len(ref_ids) == len(set(ref_ids)), p["title"]
        for target in p["targets"]:
            assert target["datasource"] == p["datasource"] and target["expr"].strip()
    titles = " | ".join(p["title"] for p in panels).lower()
    for wanted in (
        "spend by tenant",
        "cost per turn by plan and turn bucket",
        "cached share",
        "quota-hit share by class",
        "escalations",
        "latency p50 / p95",
        "store health",
        "pending bookings",
        "upstream error rate",
    ):
        assert wanted in titles, wanted


def _lost(written: Any, read_back: Any, path: str = "") -> list[str]:
    """Where `read_back` lacks or changed what `written` says (added defaults are fine)."""
    if isinstance(written, dict):
        if not isinstance(read_back, dict):
            return [path]
        return [
            lost
            for key, value in written.items()
            for lost in (
                _lost(value, read_back[key], f"{path}.{key}")
                if key in read_back
                else [f"{path}.{key}"]
            )
        ]
    if isinstance(written, list):
        if not isinstance(read_back, list) or len(written) != len(read_back):
            return [path]
        return [
            lost
            for i, pair in enumerate(zip(written, read_back, strict=True))
            for lost in _lost(*pair, f"{path}[{i}]")
        ]
    return [] if written == read_back else [path]


def test_the_dashboard_reads_back_whole_through_grafanas_schema_types() -> None:
    """grafana-foundation-sdk's Dashboard is generated from Grafana's own dashboard
    schema: a key it does not know (a typo, a field of another panel kind) is dropped on
    the way through, and found missing here."""
    written = json.loads(DASHBOARD.read_text())
    read_back = json.loads(json.dumps(Dashboard.from_json(written), cls=JSONEncoder))
    assert _lost(written, read_back) == []
    broken = {**written, "panels": [{**written["panels"][1], "gridpos": {"h": 1}}]}
    read_back = json.loads(json.dumps(Dashboard.from_json(broken), cls=JSONEncoder))
    assert _lost(broken, read_back) == [".panels[0].gridpos"]


@pytest.fixture
def two_workers(tmp_path: Path, simulator_url: str, redis_url: str) -> Iterator[GatewayProc]:
    gw = start_gateway(tmp_path, simulator_url, redis_url, workers=2)
    yield gw
    gw.stop()


def test_a_scrape_of_two_workers_on_redis_passes_promtool(two_workers: GatewayProc) -> None:
    """With --workers the scrape merges every process's files (PROMETHEUS_MULTIPROC_DIR):
    another exposition, checked too."""
    client = openai.OpenAI(base_url=two_workers.v1, api_key=two_workers.keys["acme"], max_retries=0)
    for n in range(4):
        client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": f"Order {n}: where is it?"}]
        )
    text = two_workers.admin("/metrics").text
    assert _value(text, "gateway_upstream_responses_total", status_class="2xx") == 4
    checked = promtool("check", "metrics", stdin=text)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert httpx.get(f"{two_workers.url}/healthz").status_code == 200


def test_config_info_names_only_the_config_running_now() -> None:
    metrics = GatewayMetrics(CollectorRegistry())
    metrics.set_config("a" * 12)
    metrics.set_config("b" * 12)
    read = metrics.registry.get_sample_value
    assert read("gateway_config_info", {"sha": "b" * 12}) == 1
    assert read("gateway_config_info", {"sha": "a" * 12}) is None


def _shas(gw: GatewayProc) -> dict[str, float]:
    return {
        sample.labels["sha"]: float(sample.value)
        for family in text_string_to_metric_families(gw.admin("/metrics").text)
        for sample in family.samples
        if sample.name == "gateway_config_info"
    }


def _workers(master: int) -> set[int]:
    """The worker processes of a `gateway serve --workers N` (uvicorn spawns them)."""
    found = subprocess.run(
        ["pgrep", "-P", str(master), "-f", "spawn_main"],
        capture_output=True,
        text=True,
        check=False,
    )
    return {int(p) for p in found.stdout.split()}


def _until(done: Any, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)


def test_two_workers_metrics_forget_the_workers_that_are_gone(
    tmp_path: Path, simulator_url: str, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under --workers N each worker writes its metrics to files; a worker restarted on
    a reload (SIGHUP) or killed left its live gauges there: /metrics showed the old and
    the new config sha both at 1 (replicas "not all reloaded"), and a killed worker's
    pending bookings for good."""
    folder = tmp_path / "metrics"
    folder.mkdir()
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(folder))
    gw = start_gateway(tmp_path, simulator_url, redis_url, workers=2)
    try:
        [first] = _shas(gw)
        _until(lambda: len(_workers(gw.proc.pid)) == 2)
        spend = {"tenants": {"acme": {"monthly_usd": "50"}}}
        (tmp_path / "policies" / "spend.yaml").write_text(yaml.safe_dump(spend))
        old = _workers(gw.proc.pid)
        gw.proc.send_signal(signal.SIGHUP)  # uvicorn restarts its workers on the new files
        _until(lambda: len(_workers(gw.proc.pid) - old) == 2)
        _until(lambda: first not in _shas(gw))
        [(second, value)] = _shas(gw).items()
        assert second != first and value == 1
        victim = min(_workers(gw.proc.pid))
        os.kill(victim, signal.SIGKILL)
        _until(lambda: len(_workers(gw.proc.pid) - {victim}) == 2)  # uvicorn starts another
        _until(lambda: httpx.get(f"{gw.url}/healthz").status_code == 200)
        _until(lambda: not list(folder.glob(f"gauge_live*_{victim}.db")))
        assert _shas(gw) == {second: 1}
    finally:
        gw.stop()
    assert not list(folder.glob("gauge_live*.db"))  # every worker dropped its own at exit
