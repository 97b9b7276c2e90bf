"""Every `gateway` command on a bad day (red-team read 22): run as the operator runs it,
a subprocess, each ends in a line that names what is wrong and the README's exit code
(0 ok, 1 failure, 2 usage), never a Python traceback, never a file left half-written."""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

GATEWAY = [sys.executable, "-m", "gateway"]
CONFIG = "upstream:\n  base_url: simulator\nstore: sqlite:///gw.db\npolicies: policies\n"


def _gateway(
    *args: str, cwd: Path, timeout: float = 120, **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    """The command run from `cwd`, on this checkout's gateway package."""
    streams = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **kwargs}
    return subprocess.run(  # noqa: PLW1510 - the exit code is asserted
        [*GATEWAY, *args],
        cwd=cwd,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
        **streams,
    )


def _deployment(folder: Path, config: str = CONFIG) -> Path:
    (folder / "policies").mkdir(parents=True, exist_ok=True)
    (folder / "config.yaml").write_text(config)
    return folder / "config.yaml"


def _one_line_error(run: subprocess.CompletedProcess[str], code: int, says: str) -> None:
    assert "Traceback" not in run.stderr, run.stderr
    assert run.returncode == code, (run.returncode, run.stderr)
    assert says in run.stderr, run.stderr


# --- main: a closed pipe, Ctrl-C, a folder it may not read ---------------------------


def test_output_to_a_reader_gone_is_a_line_not_a_traceback(tmp_path: Path) -> None:
    """`gateway check-config | head -0`: a BrokenPipeError traceback before."""
    _deployment(tmp_path)
    read, write = os.pipe()
    os.close(read)  # the reader has gone before the command writes
    try:
        run = _gateway("check-config", cwd=tmp_path, stdout=write)
    finally:
        os.close(write)
    _one_line_error(run, 1, "stdout closed")
    assert "Exception ignored" not in run.stderr


def test_check_config_says_when_the_sqlite_store_is_a_new_file(tmp_path: Path) -> None:
    """A store path typed wrong (`sqlite:///gw.db` for `gateway.db`) made a new, empty
    store and check-config said ok: the deployment's tenants, keys and spend seemed
    gone. It says so, and says nothing once the file is there."""
    _deployment(tmp_path)
    first = _gateway("check-config", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert f"note: the store's file {tmp_path / 'gw.db'} does not exist" in first.stderr
    sqlite3.connect(tmp_path / "gw.db").close()
    again = _gateway("check-config", cwd=tmp_path)
    assert again.returncode == 0 and "does not exist" not in again.stderr, again.stderr


def test_ctrl_c_is_one_line_and_exit_130_and_writes_no_workload(tmp_path: Path) -> None:
    """A KeyboardInterrupt traceback and death by SIGINT before."""
    proc = subprocess.Popen(
        [*GATEWAY, "workload", "generate", "--conversations", "50000", "-o", "w.jsonl"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    time.sleep(3)  # past the imports, well inside the generation
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert "Traceback" not in err, err
    assert proc.returncode == 130 and "interrupted" in err, (proc.returncode, err)
    assert out == "" and sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_policies_folder_it_may_not_read_is_one_line(tmp_path: Path) -> None:
    """A PermissionError traceback from the stray-file scan before (gateway/config.py).
    The tests run as root, whom no mode bit stops: the folder's listing is refused in the
    real `gateway` process as a `chmod 0` refuses it to anyone else."""
    _deployment(tmp_path)
    denied = (
        "import pathlib, sys\n"
        "def iterdir(self):\n"
        "    raise PermissionError(13, 'Permission denied', str(self))\n"
        "pathlib.Path.iterdir = iterdir\n"
        "from gateway.ops.cli import main; sys.argv[0] = 'gateway'; main()"
    )
    run = subprocess.run(  # noqa: PLW1510 - the exit code is asserted
        [sys.executable, "-c", denied, "check-config"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    _one_line_error(run, 1, f"error: {tmp_path / 'policies'}: Permission denied")
    assert run.stderr.count("\n") == 1 and run.stdout == ""


# --- a store that answers but refuses -------------------------------------------------


@pytest.mark.parametrize("command", [["check-config"], ["report"], ["migrate"], ["serve"]])
def test_a_redis_database_past_the_servers_is_one_line(
    tmp_path: Path, redis_server: str, command: list[str]
) -> None:
    """`store: redis://host:6379/99` on a server of 16 databases: a StoreRejected
    traceback (check-config, report, migrate; serve after its whole start-up, exit 3)."""
    url = urlsplit(redis_server)._replace(path="/100000").geturl()
    _deployment(tmp_path, CONFIG.replace("sqlite:///gw.db", url))
    run = (
        _gateway(*command, "--port", "0", cwd=tmp_path, timeout=60)
        if command == ["serve"]
        else _gateway(*command, cwd=tmp_path, timeout=60)
    )
    _one_line_error(run, 1, "refused the command")


def test_tenants_on_a_refusing_store_is_a_failure_not_a_refusal(
    tmp_path: Path, redis_server: str
) -> None:
    """Exit 2 (usage, as for an unknown plan) before: the store's trouble is 1."""
    url = urlsplit(redis_server)._replace(path="/100000").geturl()
    _deployment(tmp_path, CONFIG.replace("sqlite:///gw.db", url))
    _one_line_error(_gateway("tenants", "list", cwd=tmp_path), 1, "refused the command")


# --- serve and simulate-upstream: ports, workers, a port in use -----------------------


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["serve", "--port", "99999"], "--port: must be a port"),
        (["simulate-upstream", "--port", "70000"], "--port: must be a port"),
        (["simulate-upstream", "--port", "-1"], "--port: must be a port"),
        (["serve", "--workers", "0"], "--workers: must be at least 1"),
        (["serve", "--port", "http"], "--port: must be a whole number"),
    ],
)
def test_a_port_or_worker_count_out_of_range_is_a_usage_error(
    tmp_path: Path, args: list[str], says: str
) -> None:
    """uvicorn bound --port 99999 as 34463 and logged `running on ...:99999`; --workers 0
    served on one; --port -1 failed late with exit 3."""
    _deployment(tmp_path)
    try:
        run = _gateway(*args, cwd=tmp_path, timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail(f"gateway {' '.join(args)} started serving")
    _one_line_error(run, 2, says)


def test_a_port_in_use_exits_1(tmp_path: Path) -> None:
    """uvicorn's sys.exit(3): not an exit code the README knows."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = str(held.getsockname()[1])
        run = _gateway("simulate-upstream", "--port", port, cwd=tmp_path, timeout=30)
    _one_line_error(run, 1, "address already in use")


# --- workload generate ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (["--conversations", "0", "-o", "w.jsonl"], 2, "--conversations: must be at least 1"),
        (["--conversations", "-3", "-o", "w.jsonl"], 2, "--conversations: must be at least 1"),
        (["--conversations", "2", "-o", "nowhere/w.jsonl"], 1, "cannot write nowhere/w.jsonl"),
        (["--conversations", "2", "-o", "."], 1, "cannot write .: Is a directory"),
    ],
)
def test_workload_generate_on_bad_arguments(
    tmp_path: Path, args: list[str], code: int, says: str
) -> None:
    """An IndexError traceback (0 or fewer conversations, an empty file left behind) or a
    FileNotFoundError / IsADirectoryError one before."""
    run = _gateway("workload", "generate", "--lang", "pt", *args, cwd=tmp_path)
    _one_line_error(run, code, says)
    assert not (tmp_path / "w.jsonl").exists() and list(tmp_path.iterdir()) == []


def test_a_workload_write_cut_short_leaves_the_previous_file_whole(tmp_path: Path) -> None:
    """The file was truncated, then written in place: a full disk (here a file-size
    limit) or a Ctrl-C while writing left a shorter workload, and replay plays it."""
    previous = '{"id": "the previous workload"}\n'
    (tmp_path / "w.jsonl").write_text(previous)

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))

    run = _gateway(
        "workload",
        "generate",
        "--conversations",
        "60",
        "--lang",
        "pt",
        "-o",
        "w.jsonl",
        cwd=tmp_path,
        preexec_fn=small_files,
    )
    _one_line_error(run, 1, "cannot write w.jsonl: File too large")
    assert (tmp_path / "w.jsonl").read_text() == previous
    assert [p.name for p in tmp_path.iterdir()] == ["w.jsonl"]  # no temporary file left


def test_a_workload_to_stdout_is_the_file_it_would_write(tmp_path: Path) -> None:
    """`-o -` wrote a file named "-" in the working folder and nothing to stdout."""
    args = ["workload", "generate", "--conversations", "4", "--seed", "3", "--lang", "pt,en"]
    piped = _gateway(*args, "-o", "-", cwd=tmp_path)
    assert piped.returncode == 0, piped.stderr
    assert list(tmp_path.iterdir()) == []
    assert "4 conversations" in piped.stderr
    written = _gateway(*args, "-o", "w.jsonl", cwd=tmp_path)
    assert written.returncode == 0, written.stderr
    assert piped.stdout == (tmp_path / "w.jsonl").read_text(encoding="utf-8")
    assert [json.loads(line)["id"] for line in piped.stdout.splitlines()]  # 4 rows of JSON


def test_check_config_names_the_store_and_upstream_without_their_passwords(
    tmp_path: Path,
) -> None:
    """`serve` prints check-config's lines into every replica's log: the Redis URL's
    password (deploy/README puts it in the store URL) and an upstream URL's credentials
    were printed whole (red-team read 23)."""
    redis = "redis://:REDISPASSCANARY@127.0.0.1:6379/15?password=QUERYPASSCANARY"
    upstream = "https://proxyuser:UPSTREAMPASSCANARY@llm-proxy.internal:8443/v1"
    config = f"upstream:\n  base_url: {upstream}\nstore: {redis}\npolicies: policies\n"
    _deployment(tmp_path, config)
    run = _gateway("check-config", "--config", "config.yaml", cwd=tmp_path)
    said = run.stdout + run.stderr
    assert run.returncode == 0, said
    assert "store redis://:***@127.0.0.1:6379/15?password=***" in run.stdout
    assert "https://proxyuser:***@llm-proxy.internal:8443/v1" in run.stderr
    assert "CANARY" not in said
    typo = _deployment(tmp_path / "typo", CONFIG.replace("sqlite:///gw.db", "reddis://:PW1@h/0"))
    run = _gateway("check-config", "--config", str(typo), cwd=tmp_path)
    assert run.returncode == 1 and "store: " in run.stderr, run.stderr
    assert "PW1" not in run.stdout + run.stderr


# --- demo -------------------------------------------------------------------------------


@pytest.mark.parametrize("tenant", ["acme", "umbrella"])
def test_demo_never_writes_over_a_folder_holding_a_config(tmp_path: Path, tenant: str) -> None:
    """`gateway demo --dir .` in a deployment's folder replaced its config.yaml with the
    demo's, added the demo's tenants acme and globex (and their keys) to its tenants.yaml
    and made demo.db there, exit 0 (tenant umbrella); a folder whose tenants.yaml has an
    `acme`, as after an earlier demo, ended in a ValueError traceback: a second
    `demo --dir D` always failed so."""
    operators = "# the deployment's own\n" + CONFIG
    _deployment(tmp_path, operators)
    tenants = f"tenants:\n  {tenant}:\n    plan: pro\n    key_sha256: '{'ab' * 32}'\n"
    (tmp_path / "policies" / "tenants.yaml").write_text(tenants)
    run = _gateway("demo", "--dir", ".", cwd=tmp_path)
    _one_line_error(run, 2, "give it a new or empty folder")
    assert (tmp_path / "config.yaml").read_text() == operators
    assert (tmp_path / "policies" / "tenants.yaml").read_text() == tenants
    assert run.stdout == "" and not (tmp_path / "demo.db").exists()


def test_demo_in_a_folder_it_cannot_make_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    run = _gateway("demo", "--dir", "file/demo", cwd=tmp_path)
    _one_line_error(run, 1, "error: --dir file/demo: Not a directory")


# --- replay -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def workload(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("workload")
    made = _gateway(
        "workload",
        "generate",
        "--conversations",
        "1",
        "--lang",
        "pt",
        "-o",
        "w.jsonl",
        cwd=folder,
    )
    assert made.returncode == 0, made.stderr
    return folder / "w.jsonl"


def test_replay_of_an_unknown_plan_names_the_option(workload: Path) -> None:
    """Exit 1 naming `/tmp/gateway-replay-.../policies/tenants.yaml: tenants.replay.plan`,
    a file the user never saw, for what is a wrong option (exit 2)."""
    run = _gateway("replay", str(workload), "--plan", "platinum", cwd=workload.parent)
    _one_line_error(run, 2, "error: --plan 'platinum': unknown plan 'platinum'")
    assert "gateway-replay-" not in run.stderr and run.stdout == ""


def test_replay_of_a_model_with_no_price_is_refused(workload: Path) -> None:
    """`replay --model my-local-llama` compared $0 against $0 and exited 0: a replay is
    a comparison of what the policy and the baseline cost."""
    run = _gateway("replay", str(workload), "--model", "my-local-llama", cwd=workload.parent)
    assert run.returncode == 2, run.stderr
    assert "error: --model 'my-local-llama' has no price" in run.stderr
    assert run.stdout == ""


def test_replay_logs_no_line_per_request(workload: Path) -> None:
    """Two log lines a turn (the simulator's uvicorn access line and the gateway's own):
    thousands a replay on stderr, its progress lines buried among them."""
    run = _gateway("replay", str(workload), "--format", "json", cwd=workload.parent)
    assert run.returncode == 0, run.stderr
    assert "uvicorn.access" not in run.stderr and "gateway.access" not in run.stderr
    assert run.stdout.lstrip().startswith("{")


# --- keys -------------------------------------------------------------------------------


@pytest.mark.parametrize("grace", ["inf", "1e300", "-1"])
def test_a_rotation_grace_past_the_year_9999_is_refused(tmp_path: Path, grace: str) -> None:
    """`keys rotate K --grace-s inf` (or 1e300) exited 0 and left the replaced key live for
    good: its expiry inf was stored as JSON null, no expiry, and listed so; -1 revoked it
    at once. The admin API refuses all three (400), as the CLI does now (exit 2)."""
    _deployment(tmp_path)
    shutil.copy(Path(__file__).parents[1] / "policies" / "spend.yaml", tmp_path / "policies")
    added = _gateway("tenants", "add", "acme", "--plan", "pro", cwd=tmp_path)
    assert added.returncode == 0, added.stderr
    old = json.loads(added.stdout)["key_id"]
    run = _gateway("keys", "rotate", old, "--grace-s", grace, cwd=tmp_path)
    _one_line_error(run, 2, "--grace-s must be a number of seconds, 0 to")
    listed = json.loads(_gateway("keys", "list", "acme", cwd=tmp_path).stdout)
    assert [(k["id"], k["expires"], k["revoked"]) for k in listed] == [(old, None, None)]
