"""Config and tenants: strict loading, env overrides."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
import yaml

from gateway.config import TenantsFile, load_settings
from gateway.errors import ConfigError
from gateway.proxy.app import create_app_from_env
from tests.servers import write_config

REPO = Path(__file__).resolve().parents[1]


def test_env_overrides(tmp_path: Path) -> None:
    config = write_config(tmp_path, "http://127.0.0.1:1/v1", "sqlite:///a.db")
    settings = load_settings(
        config,
        {
            "GATEWAY_UPSTREAM_URL": "http://10.0.0.1:8000/v1",
            "GATEWAY_STORE_URL": "redis://h:1/2",
            "GATEWAY_ADMIN_KEY": "adm",
            "TEST_PROVIDER_KEY": "sk-x",
        },
    )
    assert settings.config.upstream.base_url == "http://10.0.0.1:8000/v1"
    assert settings.store_url == "redis://h:1/2"
    assert (settings.admin_key, settings.provider_key) == ("adm", "sk-x")


def test_sqlite_path_is_relative_to_the_config_file(tmp_path: Path) -> None:
    config = write_config(tmp_path, "simulator", "sqlite:///data/g.db")
    assert load_settings(config, {}).store_url == f"sqlite:///{tmp_path.resolve()}/data/g.db"


@pytest.mark.parametrize(
    ("change", "key"),
    [
        ({"upstream": {"base_url": "ftp://x"}}, "upstream.base_url"),
        ({"store": "postgres://x"}, "store"),
        ({"limits": {"max_body_bytes": 0}}, "limits.max_body_bytes"),
        ({"limits": {"max_customer_facts": 0}}, "limits.max_customer_facts"),
        ({"limits": {"max_customer_facts_bytes": -1}}, "limits.max_customer_facts_bytes"),
        ({"prices": {"m": {"input_per_mtok": 1}}}, "prices.m.output_per_mtok"),
        (
            {"prices": {"m": {"input_per_mtok": 1, "output_per_mtok": 1, "cache": 2}}},
            "prices.m.cache",
        ),
    ],
)
def test_each_error_names_file_and_key(tmp_path: Path, change: dict[str, Any], key: str) -> None:
    config = write_config(tmp_path, "simulator", "sqlite:///a.db", **change)
    with pytest.raises(ConfigError) as info:
        load_settings(config, {})
    assert any(f == str(config) and k == key for f, k, _ in info.value.problems), info.value.lines()


def test_shipped_config_is_valid_and_schema_is_current() -> None:
    run = subprocess.run(  # noqa: PLW1510 - the exit code is asserted
        [sys.executable, "-m", "gateway", "check-config", "--config", str(REPO / "config.yaml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    schema = json.loads((REPO / "policies" / "schema" / "tenants.schema.json").read_text())
    assert schema == TenantsFile.model_json_schema(by_alias=True)
    assert yaml.safe_load((REPO / "policies" / "tenants.yaml").read_text())["$schema"]


def test_the_command_says_what_it_is_and_its_version() -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(  # noqa: PLW1510 - the exit code is asserted
            [sys.executable, "-m", "gateway", *args], capture_output=True, text=True, timeout=60
        )

    version = run("--version")
    assert version.returncode == 0
    assert version.stdout.strip() == f"gateway {metadata.version('context-quota-gateway')}"
    usage = run("--help")
    assert usage.returncode == 0 and "gateway demo" in usage.stdout
    assert "cli_logic" not in usage.stdout  # a user's description, not a developer's note


DUPLICATED = {
    "config.yaml": "store_failure: fail_closed\nstore: sqlite:///g.db\nstore_failure: fail_open\n",
    "policies/spend.yaml": "tenants:\n  acme: {monthly_usd: 10}\n  acme: {monthly_usd: 100000}\n",
}


@pytest.mark.parametrize("name", list(DUPLICATED))
def test_a_key_given_twice_is_a_config_error(tmp_path: Path, name: str) -> None:
    """PyYAML keeps the last of two equal keys: `check-config` said ok and the gateway
    ran on the second value (a ceiling 10,000 times higher, fail_open)."""
    config = write_config(tmp_path, "http://127.0.0.1:9/v1", f"sqlite:///{tmp_path / 'g.db'}")
    path = tmp_path / name
    path.write_text(DUPLICATED[name])
    with pytest.raises(ConfigError) as info:
        load_settings(config)
    [line] = info.value.lines()
    assert str(path) in line and "given twice (lines" in line
    checked = subprocess.run(
        [str(Path(sys.executable).parent / "gateway"), "check-config", "--config", str(config)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 1 and "given twice" in checked.stderr


@pytest.mark.parametrize("name", ["SPEND.YAML", "x.YML", "Context.Yaml"])
def test_a_policy_file_with_an_uppercase_extension_is_an_error(tmp_path: Path, name: str) -> None:
    """`SPEND.YAML` in the policies folder was ignored without a word (the gateway ran
    without the ceilings it held): only `.yaml`/`.yml` in lowercase were looked at."""
    config = write_config(tmp_path, "http://127.0.0.1:9/v1", f"sqlite:///{tmp_path / 'g.db'}")
    path = tmp_path / "policies" / name
    path.write_text("plans: {basic: {monthly_usd: '1'}}\n")
    with pytest.raises(ConfigError) as info:
        load_settings(config)
    [line] = info.value.lines()
    assert line.startswith(f"{path}: -: not a policy file (the policy files are context.yaml")


def test_a_config_that_cannot_be_read_is_listed_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A config path that is a folder ended `check-config` and `serve` in a traceback
    (IsADirectoryError); a worker restarted on a broken file logged a traceback too."""
    folder = tmp_path / "conf"
    folder.mkdir()
    with pytest.raises(ConfigError) as info:
        load_settings(folder)
    assert f"{folder}: -: is a directory, not a file" in info.value.lines()
    monkeypatch.setenv("GATEWAY_CONFIG", str(folder))
    with pytest.raises(SystemExit) as ended:
        create_app_from_env()
    assert ended.value.code == 1
    assert f"config: {folder}: -: is a directory, not a file" in caplog.text
    assert "Traceback" not in caplog.text


@pytest.mark.parametrize("given", ["0", "-5", "soon"])
def test_a_worker_start_timeout_under_a_second_is_refused(
    given: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--worker-start-timeout 0` started: uvicorn's supervisor then found every worker
    "died" at each liveness check and gave up every reload."""
    from gateway.ops.cli import cli_logic

    with pytest.raises(SystemExit) as ended:
        cli_logic(["serve", "--worker-start-timeout", given])
    assert ended.value.code == 2
    assert "--worker-start-timeout" in capsys.readouterr().err
