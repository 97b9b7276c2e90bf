"""`gateway report` on a heavy-tail workload: the seed's figures, an ALARM, a PNG."""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import httpx
import pytest

from gateway.context.conversation_record import ConversationRecord
from gateway.ops.cli import cli_logic
from gateway.ops.metrics import TURN_BUCKETS, turn_bucket
from gateway.ops.report import as_csv, as_table, compute, figure, percentile, pyplot, top_share
from gateway.ops.report_svg import concentration_svg, turn_cost_svg, usd_tick
from gateway.spend.money import usd_text
from tests.inprocess import InProcessGateway
from tests.servers import ADMIN_KEY, GatewayProc, start_gateway, write_config


def _conversation(client: httpx.Client, gw: GatewayProc, name: str, cls: str, turns: int) -> None:
    messages = [{"role": "system", "content": "You are the store's assistant."}]
    for n in range(turns):
        messages.append({"role": "user", "content": f"{name} turn {n}: " + "tell me more " * 40})
        reply = client.post(
            f"{gw.v1}/chat/completions",
            json={"model": "gpt-4o-mini", "messages": messages},
            headers={
                "Authorization": f"Bearer {gw.keys['acme']}",
                "X-Conversation-Id": name,
                "X-Conversation-Class": cls,
            },
        ).json()
        messages.append({"role": "assistant", "content": reply["choices"][0]["message"]["content"]})


def test_report_on_a_heavy_tail(tmp_path: Path, simulator_url: str) -> None:
    gw = start_gateway(tmp_path, simulator_url, f"sqlite:///{tmp_path / 'g.db'}")
    try:
        with httpx.Client(timeout=30) as client:
            for n in range(56):  # many short support conversations
                _conversation(client, gw, f"short-{n}", "support", 2 + n % 3)
            for n in range(4):  # a few long catalog browsing sessions, low quota
                _conversation(client, gw, f"long-{n}", "catalog", 60)
        config = str(tmp_path / "config.yaml")
        run = subprocess.run(  # noqa: PLW1510 - the exit code is asserted
            [
                sys.executable,
                "-m",
                "gateway",
                "report",
                "--config",
                config,
                "--format",
                "json",
                "--plot",
                str(tmp_path / "report.png"),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env={**gw.env},
        )
        assert run.returncode == 0, run.stderr
        report = json.loads(run.stdout)
        assert report["conversations"] == 60
        assert (
            report["length_percentiles"]["p50"] <= 4 and report["length_percentiles"]["p99"] == 60
        )
        assert report["top_share"]["top_5pct"] > 0.5  # three of sixty carry over half the cost
        assert report["quota_ceiling"]["catalog"]["share"] == 1.0
        assert report["quota_ceiling"]["support"]["share"] == 0.0
        assert any("ALARM class catalog" in a for a in report["alarms"])
        assert not any("support" in a for a in report["alarms"])
        marginal = report["marginal_cost"]
        assert marginal["41+"]["vs_first_turn"] > marginal["1-5"]["vs_first_turn"] >= 1.0
        assert 0 < report["cached_share"] < 1
        assert (tmp_path / "report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        table = subprocess.run(  # noqa: PLW1510
            [sys.executable, "-m", "gateway", "report", "--config", config],
            capture_output=True,
            text=True,
            timeout=120,
            env={**gw.env},
        )
        assert "ALARM class catalog" in table.stdout and "top 5%" in table.stdout
        same = gw.admin("/admin/report").json()
        assert same["alarms"] == report["alarms"] and same["conversations"] == 60
        csv_out = subprocess.run(  # noqa: PLW1510
            [sys.executable, "-m", "gateway", "report", "--config", config, "--format", "csv"],
            capture_output=True,
            text=True,
            timeout=120,
            env={**gw.env},
        )
        assert csv_out.stdout.startswith("section,key,field,value\n")
        assert "quota_ceiling,catalog,share,1.0" in csv_out.stdout
    finally:
        gw.stop()


def test_percentiles_and_concentration_by_hand() -> None:
    assert percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 50) == 5
    assert percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90) == 9
    assert percentile([], 99) == 0.0
    assert top_share([90, 5, 5] + [0] * 97, 0.01) == 0.9
    assert top_share([1] * 100, 0.05) == 0.05


def test_turn_buckets_are_cut_in_one_place() -> None:
    """The metrics' label and the report's columns: 1-5, 6-15, 16-40, 41+."""
    cuts = {turn: turn_bucket(turn) for turn in (1, 5, 6, 15, 16, 40, 41, 500)}
    assert list(dict.fromkeys(cuts.values())) == list(TURN_BUCKETS)
    assert [cuts[t] for t in (5, 6, 15, 16, 40, 41)] == [
        "1-5",
        "6-15",
        "6-15",
        "16-40",
        "16-40",
        "41+",
    ]


def test_plot_without_matplotlib_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """`--plot` without the [plot] extra: a one-line error naming it, exit code 2, no
    traceback (matplotlib made unimportable in a real `gateway report` process)."""
    config = write_config(tmp_path, "http://127.0.0.1:9/v1", f"sqlite:///{tmp_path / 'g.db'}")
    without = (
        "import sys; sys.modules['matplotlib'] = None; "
        "from gateway.ops.cli import main; sys.argv[0] = 'gateway'; main()"
    )
    run = subprocess.run(  # noqa: PLW1510 - the exit code is asserted
        [sys.executable, "-c", without, "report", "--config", str(config), "--plot", "x.png"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert run.returncode == 2, run.stderr
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr
    assert run.stderr.startswith("error: --plot needs matplotlib") and "[plot]" in run.stderr
    assert run.stdout == "" and not (tmp_path / "x.png").exists()


@pytest.mark.parametrize("period", ["garbage", "2026-13", "2026-1", "٢٠٢٦-01"])
def test_a_period_the_admin_api_refuses_is_refused_by_the_command(
    tmp_path: Path, period: str
) -> None:
    """`gateway report --period garbage` printed an empty report and exited 0, where
    /admin/report answers 400 for the same period: now a one-line error naming it, exit 2
    (as a refused `--plot`), nothing on stdout."""
    config = write_config(tmp_path, "http://127.0.0.1:9/v1", f"sqlite:///{tmp_path / 'g.db'}")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_logic(["report", "--config", str(config), "--period", period])
    assert (code, out.getvalue()) == (2, ""), err.getvalue()
    assert err.getvalue().count("\n") == 1 and err.getvalue().startswith("error: --period ")
    assert repr(period) in err.getvalue() and "YYYY-MM" in err.getvalue()


def test_the_plot_names_tenant_and_period_with_percent_axes() -> None:
    found = compute("2031-04", [], [_record("c1", 30, 9), _record("c2", 2, 1)], [], "acme")
    fig = figure(found)
    try:
        assert fig._suptitle.get_text() == "Cost report: acme, 2031-04"
        left, right = fig.axes
        assert "2031-04" in left.get_title() and "2031-04" in right.get_title()
        fig.canvas.draw()
        labels = [t.get_text() for t in left.get_yticklabels()]
        assert labels[0] == "0%" and labels[-1] == "100%"
        assert all(t.endswith("%") for t in labels if t)
    finally:
        pyplot().close(fig)
    whole = compute("2031-04", [], [], [])
    assert whole.title == "all tenants, 2031-04"


def test_the_svg_plots_have_percent_axes_titles_and_escape_labels() -> None:
    found = compute("2031-04", [], [_record("c1", 30, 9), _record("c2", 2, 1)], [], "<b>&co")
    svg = concentration_svg(found)
    ET.fromstring(svg)  # well-formed XML: every label escaped
    assert "<b>" not in svg and "&lt;b&gt;&amp;co, 2031-04" in svg
    assert all(f">{p}%<" in svg for p in (0, 25, 50, 75, 100))
    empty = turn_cost_svg(found)
    ET.fromstring(empty)
    assert "no priced turns" in empty
    found.marginal_cost = {"1-5": {"turns": 3, "mean_cost_usd": 0.000042, "vs_first_turn": 1.0}}
    bars = turn_cost_svg(found)
    ET.fromstring(bars)
    assert bars.count("<rect") == 1 and ">$0.00006<" in bars  # ticks of a 0.00002 step
    assert usd_tick(0.5, 0.1) == "$0.50" and usd_tick(0.00002, 0.00001) == "$0.00002"


def test_escalations_are_listed_newest_first() -> None:
    quiet = _record("quiet", 3, 0)
    old = _record("old", 9, 5, escalations=1, last_seen=100.0)
    new = _record("new", 12, 5, escalations=2, last_seen=200.0)
    found = compute("2031-04", [], [quiet, old, new], [])
    assert [e["conversation"] for e in found.escalations] == ["new", "old"]
    assert found.escalations[0] == {
        "tenant": "acme",
        "conversation": "new",
        "class": "dispute",
        "reason": "turn_ceiling",
        "escalations": 2,
        "turns": 12,
        "last_seen": 200.0,
    }
    assert "Most recent escalations:" in as_table(found)
    assert "escalation,acme/new,turn_ceiling,2" in as_csv(found)


def _record(
    name: str, turns: int, cost: int, escalations: int = 0, last_seen: float = 0.0
) -> ConversationRecord:
    return ConversationRecord(
        id=name,
        tenant="acme",
        conversation_class="dispute",
        turns=turns,
        cost_units=cost,
        escalations=escalations,
        escalation="turn_ceiling" if escalations else None,
        last_seen=last_seen,
    )


def test_admin_routes_refuse_an_unknown_format(sqlite_app_gateway: InProcessGateway) -> None:
    """`format=xml` is a 400 in OpenAI's shape on every admin route, never JSON silently;
    /admin/report also answers CSV, as `gateway report --format csv`."""
    gw = sqlite_app_gateway
    for path, params in (
        ("/admin/spend", {}),
        ("/admin/ledger", {}),
        ("/admin/ledger", {"cursor": ""}),
        ("/admin/report", {}),
        ("/admin/budgets", {"tenant": "acme"}),
        ("/admin/tenants", {}),
        ("/admin/tenants/acme/keys", {}),
    ):
        reply = gw.admin(path, format="xml", **params)
        assert reply.status_code == 400, path
        error = reply.json()["error"]
        assert error["param"] == "format" and error["type"] == "invalid_request_error", path
        assert gw.admin(path, format="json", **params).status_code == 200, path
    headers = {"Authorization": f"Bearer {ADMIN_KEY}"}
    reload = gw.http.post("/admin/reload", params={"format": "xml"}, headers=headers)
    assert reload.status_code == 400 and reload.json()["error"]["param"] == "format"
    csv_reply = gw.admin("/admin/report", format="csv")
    assert csv_reply.headers["content-type"].startswith("text/csv")
    assert csv_reply.text.startswith("section,key,field,value\n")


def test_spend_never_shows_exponent_notation(sqlite_app_gateway: InProcessGateway) -> None:
    gw = sqlite_app_gateway
    gw.openai("acme").chat.completions.create(
        model="local-llama", messages=[{"role": "user", "content": "hi"}]
    )
    for fmt in ("json", "csv"):
        text = gw.admin("/admin/spend", format=fmt).text
        assert not re.search(r"[0-9]E[-+]?[0-9]", text, re.IGNORECASE), text
    rows = {r["tenant"]: r for r in gw.admin("/admin/spend").json()["tenants"]}
    assert rows["globex"]["cost_usd"] == "0.0000000000"
    assert re.fullmatch(r"0\.[0-9]{10}", rows["acme"]["cost_usd"])
    assert [usd_text(u) for u in (0, 1, 5000, 12_345_678_901)] == [
        "0.0000000000",
        "0.0000000001",
        "0.0000005000",
        "1.2345678901",
    ]
