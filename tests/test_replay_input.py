"""`gateway replay` on bad input: one error line per problem, naming the file's line and
the field (or the user's policy folder), and a non-zero exit; never a traceback, never a
report of zeros."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gateway.dev.cs_workload import generate
from gateway.ops.cli import cli_logic


def _conversation() -> dict[str, Any]:
    conv = generate(1, seed=2, langs=["en"])[0]
    conv["episodes"] = []
    conv["facts"] = [f for f in conv["facts"] if not f.get("episode")]
    for turn in conv["turns"]:
        turn["needs"] = []
    return conv


def _replay(
    tmp_path: Path, lines: list[str], capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str]:
    path = tmp_path / "w.jsonl"
    path.write_text("".join(f"{line}\n" for line in lines))
    code = cli_logic(["replay", str(path), "--baseline", "none", *args])
    return code, capsys.readouterr().err


def _errors(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("error: ")]


def test_a_policy_folder_error_names_the_folder_not_its_temporary_copy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "context.yaml").write_text("quotas: {}\n")
    code, err = _replay(tmp_path, [json.dumps(_conversation())], capsys, "--policies", str(folder))
    assert code == 1
    assert f"error: {folder / 'context.yaml'}: quotas: unknown key" in _errors(err)
    assert "gateway-replay-" not in err
    (folder / "context.yaml").write_text("classes: [\n")  # not YAML: its reason names it too
    code, err = _replay(tmp_path, [json.dumps(_conversation())], capsys, "--policies", str(folder))
    assert code == 1
    assert "gateway-replay-" not in err
    assert str(folder / "context.yaml") in _errors(err)[0]


def test_a_policy_folder_with_nothing_replay_reads_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "limits.yaml").write_text("{}\n")
    code, err = _replay(tmp_path, [json.dumps(_conversation())], capsys, "--policies", str(folder))
    assert code == 2
    assert "has neither context.yaml nor spend.yaml" in err


def test_a_malformed_line_is_named_by_its_line_in_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = json.dumps(_conversation())
    code, err = _replay(tmp_path, [good, "", '{"id": "x", oops}'], capsys)
    assert code == 1
    (line,) = _errors(err)
    assert line.startswith(f"error: {tmp_path / 'w.jsonl'}:3: not JSON: ")


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (lambda c: c.pop("episodes"), "1: episodes: missing"),
        (lambda c: c["turns"][0].pop("content"), "1: turns[0].content: must be text"),
        (lambda c: c["turns"][0].update(needs=["nope"]), "1: turns[0].needs: 'nope' names no fact"),
        (
            lambda c: c["facts"].append(
                {"id": "z", "type": "name", "value": "Ana", "stated_at": 999}
            ),
            "1: facts[{n}].stated_at: must be the index of one of its turns",
        ),
        (
            lambda c: c["facts"].append(
                {"id": "z", "type": "name", "value": "Ana", "stated_at": 0, "episode": "e9"}
            ),
            "1: facts[{n}].episode: 'e9' names no episode",
        ),
    ],
)
def test_a_conversation_missing_what_replay_reads_is_named_with_its_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: Any, says: str
) -> None:
    conv = _conversation()
    n = len(conv["facts"])
    change(conv)
    code, err = _replay(tmp_path, [json.dumps(conv)], capsys)
    assert code == 1
    assert any(
        line.startswith(f"error: {tmp_path / 'w.jsonl'}:{says.format(n=n)}")
        for line in _errors(err)
    ), err


def test_a_turn_without_its_time_is_refused_under_the_workload_clock(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    conv = _conversation()
    conv["turns"][0].pop("at")
    code, err = _replay(tmp_path, [json.dumps(conv)], capsys, "--clock", "workload")
    assert code == 1
    assert f"error: {tmp_path / 'w.jsonl'}:1: turns[0].at: must be an ISO 8601 time" in err


def test_a_line_that_is_not_an_object_and_a_repeated_id_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    conv = json.dumps(_conversation())
    code, err = _replay(tmp_path, ["[1, 2]", conv, conv], capsys)
    assert code == 1
    errors = _errors(err)
    assert (
        errors[0]
        == f"error: {tmp_path / 'w.jsonl'}:1: must be a JSON object (a conversation), not list"
    )
    assert errors[1].startswith(f"error: {tmp_path / 'w.jsonl'}:3: id ")
    assert errors[1].endswith("is used on line 2 too")


def test_an_empty_workload_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _replay(tmp_path, ["", "  "], capsys)
    assert code == 1
    assert _errors(err) == [f"error: {tmp_path / 'w.jsonl'}: no conversations (an empty workload)"]
