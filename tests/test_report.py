"""`gateway report` on a heavy-tail workload: the seed's figures, an ALARM, a PNG."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx

from gateway.ops.metrics import TURN_BUCKETS, turn_bucket
from gateway.ops.report import percentile, top_share
from tests.servers import GatewayProc, start_gateway


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
