"""The deployment artifacts: Dockerfile, requirements.lock, deploy/compose.yaml, the
Kubernetes manifests (deploy/k8s), Prometheus and Grafana provisioning. No Docker engine
or cluster runs here, so each file is read for what matters (user, volume, probes, what
compose mounts), linted offline (hadolint, yamllint, kubernetes-validate's bundled
schemas, promtool), and the example config and the probe routes are run for real: the
gateway started in process from deploy/config with the environment compose gives it,
after `gateway migrate`, on Redis and a PostgreSQL ledger."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import openai
import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from starlette.testclient import TestClient

from gateway.config import load_settings
from gateway.errors import ConfigError
from gateway.ops.cli import cli_logic
from gateway.ops.migrate import migrate
from gateway.proxy.app import create_app
from tests.ledger_db import create_database, drop_database

REPO = Path(__file__).resolve().parents[1]
DEPLOY = REPO / "deploy"
K8S = DEPLOY / "k8s"
MANIFESTS = ["configmap.yaml", "deployment.yaml", "service.yaml", "pdb.yaml", "migrate-job.yaml"]
GATEWAY_SERVICES = ["gateway-1", "gateway-2", "gateway-3"]
# The oldest Kubernetes the manifests are written for (preStop `sleep` needs 1.30).
K8S_VERSION = "1.30"
YAMLLINT_CONFIG = (
    "{extends: default, rules: {line-length: {max: 100}, document-start: disable,"
    " colons: {max-spaces-after: -1}, comments-indentation: disable}}"
)
# What a shell would have exported before `docker compose up` (deploy/compose.yaml).
COMPOSE_ENV = {
    "GATEWAY_UPSTREAM_URL": "https://api.openai.com/v1",
    "OPENAI_API_KEY": "sk-test",
    "GATEWAY_ADMIN_KEY": "admin-test-key",
}


# --- reading the files -------------------------------------------------------------


@dataclass(frozen=True)
class Instruction:
    name: str
    args: str


def final_stage() -> list[Instruction]:
    """The Dockerfile's last stage (the image that runs), line continuations joined."""
    text = (REPO / "Dockerfile").read_text().replace("\\\n", " ")
    lines = [
        ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")
    ]
    instructions = [Instruction(*[*ln.split(None, 1), ""][:2]) for ln in lines]
    froms = [i for i, ins in enumerate(instructions) if ins.name.upper() == "FROM"]
    return [Instruction(i.name.upper(), i.args) for i in instructions[froms[-1] :]]


def one(stage: list[Instruction], name: str) -> tuple[int, Instruction]:
    found = [(i, ins) for i, ins in enumerate(stage) if ins.name == name]
    assert len(found) == 1, f"the final stage needs exactly one {name}, has {len(found)}"
    return found[0]


def exec_form(args: str) -> list[str]:
    parsed: list[str] = json.loads(args)
    return parsed


def image_uid() -> int:
    _, user = one(final_stage(), "USER")
    uid = user.args.split(":")[0]
    assert uid.isdigit(), f"USER {user.args}: numeric, so runAsNonRoot can verify it"
    return int(uid)


def image_config_path() -> str:
    _, cmd = one(final_stage(), "CMD")
    argv = exec_form(cmd.args)
    return argv[argv.index("--config") + 1]


def compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    return data


_VAR = re.compile(r"\$\{(\w+)(?:(:?[-?])([^}]*))?\}")


def interpolate(value: str, env: Mapping[str, str]) -> str:
    """Compose's `${VAR}`, `${VAR:-default}` and `${VAR:?error}`."""

    def one_var(match: re.Match[str]) -> str:
        name, op, arg = match.group(1), match.group(2), match.group(3)
        if env.get(name):
            return env[name]
        if op and op.endswith("?"):
            raise LookupError(f"compose would refuse to start: {name}: {arg}")
        return arg if op else ""

    return _VAR.sub(one_var, value)


def service_env(service: str, env: Mapping[str, str]) -> dict[str, str]:
    raw = compose()["services"][service].get("environment", {})
    return {k: interpolate(str(v), env) for k, v in raw.items()}


def bind_mounts(service: str) -> list[tuple[Path, str]]:
    """(source in the repo, target in the container) of a service's bind mounts."""
    mounts = []
    for volume in compose()["services"][service].get("volumes", []):
        source, target = volume.split(":")[:2]
        if source.startswith("."):
            mounts.append(((DEPLOY / source).resolve(), target))
    return mounts


def k8s(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((K8S / name).read_text()) if d]


def pod_spec(name: str) -> dict[str, Any]:
    spec: dict[str, Any] = k8s(name)[0]["spec"]["template"]["spec"]
    return spec


def probe_paths() -> set[str]:
    """Every HTTP path a health check names: the Dockerfile's and the manifests'."""
    _, check = one(final_stage(), "HEALTHCHECK")
    paths = set(re.findall(r"http://127\.0\.0\.1:8080(/[\w/-]*)", check.args))
    assert paths, f"HEALTHCHECK asks no local URL: {check.args}"
    for container in pod_spec("deployment.yaml")["containers"]:
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            paths.add(container[probe]["httpGet"]["path"])
    return paths


def run_tool(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)


def tool(name: str) -> str:
    """A linter installed with the test extra beside this interpreter."""
    path = Path(sys.executable).parent / name
    found = str(path) if path.exists() else shutil.which(name)
    if found is None:
        pytest.fail(f"{name} not installed: pip install '.[test]'")
    return found


# --- the image ---------------------------------------------------------------------


def test_image_runs_as_a_numeric_non_root_user_owning_its_volume() -> None:
    stage = final_stage()
    uid = image_uid()
    assert uid != 0
    user_at, _ = one(stage, "USER")
    volume_at, volume = one(stage, "VOLUME")
    volume_dirs = exec_form(volume.args) if volume.args.startswith("[") else volume.args.split()
    assert volume_dirs == ["/data"]
    chowns = [
        i
        for i, ins in enumerate(stage)
        if ins.name == "RUN" and re.search(rf"chown (-R )?{uid}(:\d+)? /data\b", ins.args)
    ]
    assert chowns and chowns[0] < volume_at, "/data must be chowned before VOLUME"
    assert user_at > chowns[0]
    # Nothing touches /data after VOLUME (Docker would discard it).
    for ins in stage[volume_at + 1 :]:
        assert not (ins.name in {"RUN", "COPY", "ADD"} and "/data" in ins.args), ins
    # The gateway writes its spill file beside its config: the config is in the volume.
    assert Path(image_config_path()).parent == Path("/data")


def test_image_has_a_healthcheck_on_a_real_route_without_curl() -> None:
    _, check = one(final_stage(), "HEALTHCHECK")
    assert "CMD" in check.args and "curl" not in check.args
    assert "urllib.request" in check.args
    assert "/livez" in check.args  # liveness: a down store must not restart it


def test_image_installs_from_the_lock_and_copies_the_example_config() -> None:
    stage = final_stage()
    runs = [ins.args for ins in stage if ins.name == "RUN" and "pip install" in ins.args]
    assert any("--requirement /tmp/requirements.lock" in r for r in runs)
    assert all("--requirement" in r or "--no-deps" in r for r in runs), runs
    copies = {ins.args for ins in stage if ins.name == "COPY"}
    assert "deploy/config/config.yaml /data/config.yaml" in copies
    assert "deploy/config/policies /data/policies" in copies
    ignored = (REPO / ".dockerignore").read_text().split()
    for needed in ("!requirements.lock", "!gateway", "!deploy/config"):
        assert needed in ignored


def test_hadolint_passes() -> None:
    result = run_tool(tool("hadolint"), str(REPO / "Dockerfile"))
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_image_config_refuses_to_start_without_an_upstream(tmp_path: Path) -> None:
    config = copy_example_config(tmp_path)
    with pytest.raises(ConfigError) as refused:
        load_settings(config, {})
    assert any(key == "upstream.base_url" for _, key, _ in refused.value.problems)
    alone = load_settings(config, {"GATEWAY_UPSTREAM_URL": "https://api.openai.com/v1"})
    assert alone.config.upstream.base_url == "https://api.openai.com/v1"
    assert alone.store_url == f"sqlite:///{tmp_path / 'gateway.db'}"  # in the volume


# --- the lock ----------------------------------------------------------------------


def lock_pins() -> dict[str, str]:
    pins: dict[str, str] = {}
    for raw in (REPO / "requirements.lock").read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            name, sep, version = line.partition("==")
            assert sep and version and ";" not in line, f"not pinned with ==: {line}"
            pins[canonicalize_name(name)] = version
    return pins


def runtime_closure() -> dict[str, list[Requirement]]:
    """Every package the runtime dependencies of pyproject.toml pull in on this Python,
    read from the installed metadata, with the requirements naming it."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    todo = [Requirement(r) for r in project["dependencies"]]
    seen: dict[str, list[Requirement]] = {}
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        first = name not in seen
        seen.setdefault(name, []).append(req)
        for extra in [*sorted(req.extras), ""] if first else sorted(req.extras):
            for dep in metadata.requires(req.name) or []:
                sub = Requirement(dep)
                if sub.marker is None or sub.marker.evaluate({"extra": extra}):
                    todo.append(sub)
    return seen


def test_the_lock_pins_every_runtime_dependency_with_a_version_pyproject_allows() -> None:
    pins = lock_pins()
    closure = runtime_closure()
    missing = sorted(set(closure) - set(pins))
    assert not missing, f"requirements.lock lacks {missing}: regenerate it (its header)"
    for name, requirements in closure.items():
        for req in requirements:
            assert req.specifier.contains(pins[name], prereleases=True), (name, req)
    assert "context-quota-gateway" not in pins  # the gateway itself goes in --no-deps
    header = (REPO / "requirements.lock").read_text()
    assert "uv pip compile pyproject.toml" in header  # how to regenerate it
    # Compiled for the Python the image runs.
    python = re.search(r"--python-version (\S+)", header)
    assert python is not None
    froms = [ln for ln in (REPO / "Dockerfile").read_text().splitlines() if ln.startswith("FROM")]
    assert froms and all(f"python:{python.group(1)}-" in ln for ln in froms)


# --- compose -----------------------------------------------------------------------


def test_compose_runs_three_gateways_after_migrate_beside_the_stack() -> None:
    services = compose()["services"]
    for name in ("redis", "postgres", "prometheus", "grafana", "migrate"):
        assert name in services
    gateways = [
        name
        for name, svc in services.items()
        if svc.get("build", {}).get("dockerfile") == "Dockerfile"
        and "command" not in svc
        and "profiles" not in svc
    ]
    assert sorted(gateways) == GATEWAY_SERVICES
    assert services["migrate"]["command"][:2] == ["gateway", "migrate"]
    assert "healthcheck" in services["postgres"] and "healthcheck" in services["redis"]
    assert services["migrate"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    volumes = set()
    for name in gateways:
        svc = services[name]
        assert svc["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
        assert svc["user"].split(":")[0] == str(image_uid())
        env = service_env(name, COMPOSE_ENV)
        assert env["GATEWAY_STORE_URL"].startswith("redis://redis:")
        assert env["GATEWAY_LEDGER_URL"].startswith("postgresql://")
        data = [v for v in svc["volumes"] if v.endswith(":/data")]
        assert len(data) == 1
        volumes.add(data[0])
    assert len(volumes) == 3, "each replica spills to a volume of its own"
    # No simulator unless asked for: it sits behind a profile, and the upstream URL is
    # required (compose refuses to start without it).
    assert services["upstream-sim"]["profiles"] == ["simulator"]
    with pytest.raises(LookupError):
        service_env("gateway-1", {})


def test_every_file_compose_mounts_exists_in_the_repo() -> None:
    for name in compose()["services"]:
        for source, target in bind_mounts(name):
            assert source.exists(), f"{name} mounts {source} (at {target}), not in the repo"
    grafana = {t: s for s, t in bind_mounts("grafana")}
    assert (
        grafana["/etc/grafana/dashboards/gateway.json"]
        == DEPLOY / "grafana/dashboards/gateway.json"
    )
    prometheus = {t: s for s, t in bind_mounts("prometheus")}
    assert prometheus["/etc/prometheus/alerts.yml"] == DEPLOY / "prometheus/alerts.yml"


def test_prometheus_scrapes_the_three_replicas_with_the_admin_key_and_loads_the_alerts() -> None:
    config = yaml.safe_load((DEPLOY / "prometheus/prometheus.yml").read_text())
    prometheus = compose()["services"]["prometheus"]
    mounted = {t: s for s, t in bind_mounts("prometheus")}
    for rule_file in config["rule_files"]:
        assert rule_file in mounted
    (job,) = [j for j in config["scrape_configs"] if j["job_name"] == "gateway"]
    assert job["metrics_path"] == "/metrics"
    targets = {t for sc in job["static_configs"] for t in sc["targets"]}
    assert targets == {f"{name}:8080" for name in GATEWAY_SERVICES}
    secret = Path(job["authorization"]["credentials_file"])
    assert secret.parent == Path("/run/secrets") and secret.name in prometheus["secrets"]
    assert compose()["secrets"][secret.name] == {"environment": "GATEWAY_ADMIN_KEY"}


def test_promtool_accepts_the_prometheus_config(tmp_path: Path) -> None:
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool not installed (Debian package prometheus)")
    text = (DEPLOY / "prometheus/prometheus.yml").read_text()
    for source, target in bind_mounts("prometheus"):
        text = text.replace(target, str(source))
    key = tmp_path / "gateway_admin_key"
    key.write_text("admin-test-key")
    text = text.replace("/run/secrets/gateway_admin_key", str(key))
    (tmp_path / "prometheus.yml").write_text(text)
    result = run_tool(promtool, "check", "config", str(tmp_path / "prometheus.yml"))
    assert result.returncode == 0, result.stdout + result.stderr


def test_grafana_is_provisioned_with_prometheus_and_the_dashboard_folder() -> None:
    provisioning = DEPLOY / "grafana/provisioning"
    (source,) = yaml.safe_load((provisioning / "datasources/prometheus.yaml").read_text())[
        "datasources"
    ]
    assert source["type"] == "prometheus" and source["url"] == "http://prometheus:9090"
    (provider,) = yaml.safe_load((provisioning / "dashboards/gateway.yaml").read_text())[
        "providers"
    ]
    mounted = {t: s for s, t in bind_mounts("grafana")}
    assert f"{provider['options']['path']}/gateway.json" in mounted
    assert mounted["/etc/grafana/provisioning/datasources"] == provisioning / "datasources"
    assert mounted["/etc/grafana/provisioning/dashboards"] == provisioning / "dashboards"
    # The dashboard (deploy/grafana/dashboards/gateway.json) finds this datasource: by its
    # uid, or through a datasource variable whose default is that uid.
    dashboard = json.loads((DEPLOY / "grafana/dashboards/gateway.json").read_text())
    variables = {
        f"${{{v['name']}}}": v["current"]["value"]
        for v in dashboard.get("templating", {}).get("list", [])
        if v.get("type") == "datasource"
    }
    uids = set(re.findall(r'"uid":\s*"([^"]+)"', json.dumps(dashboard.get("panels", []))))
    assert uids and {variables.get(uid, uid) for uid in uids} == {source["uid"]}


def test_yamllint_passes_on_every_deploy_file() -> None:
    # deploy/prometheus's alert rules and their tests are checked by promtool elsewhere.
    files = [
        str(p)
        for p in sorted(DEPLOY.rglob("*.y*ml"))
        if p.parent.name != "prometheus" or p.name == "prometheus.yml"
    ]
    result = run_tool(tool("yamllint"), "--strict", "-d", YAMLLINT_CONFIG, *files)
    assert result.returncode == 0, result.stdout + result.stderr


# --- Kubernetes --------------------------------------------------------------------


def test_the_manifests_validate_against_the_kubernetes_schemas() -> None:
    files = [str(K8S / name) for name in MANIFESTS]
    result = run_tool(tool("kubernetes-validate"), "--strict", "-k", K8S_VERSION, *files)
    assert result.returncode == 0, result.stdout + result.stderr
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    assert sorted(kustomization["resources"]) == sorted(MANIFESTS)


def test_the_deployment_runs_three_locked_down_replicas_with_probes() -> None:
    (deployment,) = k8s("deployment.yaml")
    assert deployment["spec"]["replicas"] == 3
    spec = pod_spec("deployment.yaml")
    security = spec["securityContext"]
    assert security["runAsNonRoot"] is True
    assert security["runAsUser"] == image_uid() == security["fsGroup"]
    (container,) = spec["containers"]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["resources"]["requests"] and container["resources"]["limits"]
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        assert container[probe]["httpGet"]["port"] == "http"
    assert container["args"][container["args"].index("--config") + 1] == image_config_path()
    volumes = {v["name"]: v for v in spec["volumes"]}
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    assert "emptyDir" in volumes[mounts["/data"]["name"]]  # writable: the spill file
    assert mounts["/data/config.yaml"]["subPath"] == "config.yaml"
    secrets = {
        e["name"]: e["valueFrom"]["secretKeyRef"]["name"]
        for e in container["env"]
        if "valueFrom" in e
    }
    assert secrets["OPENAI_API_KEY"] == secrets["GATEWAY_ADMIN_KEY"] == "gateway-keys"
    assert {"GATEWAY_STORE_URL", "GATEWAY_LEDGER_URL"} <= set(secrets)
    assert any(e["name"] == "GATEWAY_UPSTREAM_URL" and e.get("value") for e in container["env"])


def test_service_pdb_and_job_select_and_run_what_they_should() -> None:
    labels = k8s("deployment.yaml")[0]["spec"]["template"]["metadata"]["labels"]
    (service,) = k8s("service.yaml")
    assert service["spec"]["selector"].items() <= labels.items()
    assert service["spec"]["ports"][0]["targetPort"] == "http"
    (pdb,) = k8s("pdb.yaml")
    assert pdb["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert pdb["spec"]["minAvailable"] == 2
    job = pod_spec("migrate-job.yaml")
    assert job["securityContext"]["runAsUser"] == image_uid()
    assert job["containers"][0]["args"][:2] == ["gateway", "migrate"]


def test_the_configmaps_hold_the_example_config_and_policies() -> None:
    maps = {m["metadata"]["name"]: m["data"] for m in k8s("configmap.yaml")}
    assert maps["gateway-config"] == {"config.yaml": (DEPLOY / "config/config.yaml").read_text()}
    policies = DEPLOY / "config/policies"
    assert maps["gateway-policies"] == {p.name: p.read_text() for p in policies.glob("*.yaml")}


# --- the example config and the probes, running ------------------------------------


def copy_example_config(root: Path) -> Path:
    """deploy/config as the containers see it at /data (the gateway writes beside it)."""
    shutil.copytree(DEPLOY / "config", root, dirs_exist_ok=True)
    return root / "config.yaml"


@pytest.fixture
def empty_ledger_db() -> Iterator[str]:
    """A new database with no schema: `gateway migrate` (compose's one-shot) makes it."""
    url = create_database("gw_h1deploy", migrated=False)
    try:
        yield url
    finally:
        drop_database(url)


def test_the_compose_stack_starts_answers_its_probes_and_serves_an_added_tenant(
    tmp_path: Path,
    redis_url: str,
    empty_ledger_db: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = copy_example_config(tmp_path)
    env = service_env("gateway-1", COMPOSE_ENV)
    # The compose hosts, replaced by this machine's servers; the upstream by the simulator.
    env |= {
        "GATEWAY_STORE_URL": redis_url,
        "GATEWAY_LEDGER_URL": empty_ledger_db,
        "GATEWAY_UPSTREAM_URL": "simulator",
    }
    settings = load_settings(config, env)
    assert settings.config.ledger == empty_ledger_db
    asyncio.run(migrate(settings.config))  # compose's `migrate` service

    # The documented way to add a tenant (deploy/README.md), then the replica's start.
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert cli_logic(["tenants", "add", "acme", "--plan", "pro", "--config", str(config)]) == 0
    out = capsys.readouterr().out.strip()
    key = json.loads(out)["key"] if out.startswith("{") else out.splitlines()[-1]
    with TestClient(create_app(load_settings(config, env))) as http:
        for path in sorted(probe_paths()):
            assert http.get(path).status_code == 200, path
        client = openai.OpenAI(
            base_url="http://testserver/v1", api_key=key, max_retries=0, http_client=http
        )
        reply = client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "hello"}]
        )
    assert reply.choices[0].message.content
