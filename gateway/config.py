"""Configuration: `config.yaml` plus the policy folder, validated strictly.

`check-config` and `serve` use the same `load_settings`, so whatever one accepts the
other runs. Unknown keys are errors that name the file and the key.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import Field, field_validator, model_validator

from gateway.context.facts_limit import FactsLimit
from gateway.context.policy import Policies, load_policies
from gateway.context.retention import Retention, load_retention
from gateway.errors import ConfigError
from gateway.spend.ceilings import SPEND_FILE, SpendRules, load_spend, spend_problems
from gateway.spend.pricing import PriceEntry, Pricer
from gateway.spend.rate_limits import RateLimitsFile, RateRules
from gateway.spend.rate_policy import limits_problems, load_limits
from gateway.store.options import PostgresConfig, RedisConfig, SQLiteConfig
from gateway.yamlfile import Strict, read_yaml, validate

SIMULATOR = "simulator"
_T = TypeVar("_T")
_SHA256_HEX = re.compile(r"^[0-9a-f]{64}$")


class UpstreamConfig(Strict):
    base_url: str
    api_key_env: str = "OPENAI_API_KEY"
    # genai-prices provider id (e.g. "openai"); by default guessed from the URL, then the model.
    provider: str | None = None
    # "lean": the gateway's own HTTP/1.1 pool (gateway/proxy/transport.py); "httpx": httpx's.
    transport: Literal["lean", "httpx"] = "lean"
    connect_timeout_s: float = Field(default=5.0, gt=0)
    timeout_s: float = Field(default=300.0, gt=0)
    # The service tier the provider account serves a call that names none (or "auto")
    # at: such calls are held at its rates (a project set to priority bills them so).
    default_service_tier: str = Field(default="default", min_length=1, max_length=32)
    # "per_tenant": each tenant's prompts open with a salt of its own, so tenants never
    # share the provider's prompt cache (gateway/proxy/cache_scope.py); "shared": sent
    # as written (one tenant, or one provider project per tenant).
    prompt_cache: Literal["per_tenant", "shared"] = "per_tenant"

    @field_validator("base_url")
    @classmethod
    def _url_or_simulator(cls, value: str) -> str:
        if value != SIMULATOR and not re.match(r"^https?://[^\s/]+", value):
            raise ValueError("must be an http(s) URL or 'simulator'")
        return value.rstrip("/")


class AdminConfig(Strict):
    key_env: str = "GATEWAY_ADMIN_KEY"


class LimitsConfig(Strict):
    max_body_bytes: int = Field(default=10 * 1024 * 1024, gt=0)
    # Arrays and objects a JSON body may hold, counted before it is parsed (its `[` and
    # `{` bytes outside strings: request_body.check_containers): parsing builds each
    # one with the event loop held (orjson keeps the GIL), and the gateway's checks walk
    # them. A chat call of 150,000 short messages holds ~150,000.
    max_body_containers: int = Field(default=200_000, gt=0)
    # The longest a client may take to send its whole body (408 past it), and the body
    # bytes one tenant may have buffered at once in a process while its bodies arrive
    # (429 past it): an unfinished body is held in memory until then.
    body_timeout_s: float = Field(default=60.0, gt=0)
    max_tenant_body_bytes: int = Field(default=64 * 1024 * 1024, gt=0)
    # A non-stream upstream reply is held whole in memory: larger ones answer 502.
    max_reply_bytes: int = Field(default=16 * 1024 * 1024, gt=0)
    # Bookings held in memory while the store is down; more go to the spill file.
    max_pending_bookings: int = Field(default=100_000, gt=0)
    # What the app may put in a customer's facts document (PUT .../facts), and what a
    # turn reads of one stored past it (gateway.context.facts_limit).
    max_customer_facts: int = Field(default=FactsLimit.facts, gt=0)
    max_customer_facts_bytes: int = Field(default=FactsLimit.bytes, gt=0)

    def facts_limit(self) -> FactsLimit:
        return FactsLimit(self.max_customer_facts, self.max_customer_facts_bytes)

    @model_validator(mode="after")
    def _one_body_fits(self) -> LimitsConfig:
        if self.max_tenant_body_bytes < self.max_body_bytes:
            raise ValueError(
                "max_tenant_body_bytes: must be at least max_body_bytes (one body must fit)"
            )
        return self


class LoggingConfig(Strict):
    # One line per request on the `gateway.access` logger: JSON, key=value, or none.
    access_log: Literal["json", "plain", "off"] = "json"
    # OpenTelemetry traces (the `otel` extra); also on when OTEL_EXPORTER_OTLP_ENDPOINT is set.
    traces: bool = False


class Config(Strict):
    upstream: UpstreamConfig
    store: str = "sqlite:///gateway.db"
    admin: AdminConfig = AdminConfig()
    policies: str = "policies"
    limits: LimitsConfig = LimitsConfig()
    redis: RedisConfig = RedisConfig()
    sqlite: SQLiteConfig = SQLiteConfig()
    # The durable ledger for several replicas: postgresql://... (with a Redis store)
    ledger: str | None = None
    postgres: PostgresConfig = PostgresConfig()
    store_failure: Literal["fail_open", "fail_closed"] = "fail_open"
    prices: dict[str, PriceEntry] = {}
    logging: LoggingConfig = LoggingConfig()

    @field_validator("store")
    @classmethod
    def _known_store(cls, value: str) -> str:
        if not value.startswith(("sqlite:///", "redis://", "rediss://", "redis-cluster://")):
            raise ValueError("must start with sqlite:///, redis://, rediss:// or redis-cluster://")
        return value

    @field_validator("ledger")
    @classmethod
    def _known_ledger(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("postgresql://", "postgres://")):
            raise ValueError("must start with postgresql://")
        return value

    @model_validator(mode="after")
    def _ledger_beside_redis(self) -> Config:
        if self.ledger is not None and self.store.startswith("sqlite:///"):
            raise ValueError(
                "ledger: a PostgreSQL ledger goes with a Redis store (store: redis://...); "
                "the embedded SQLite store keeps its own ledger"
            )
        return self


class TenantEntry(Strict):
    plan: str = Field(min_length=1)
    key_sha256: str

    @field_validator("key_sha256")
    @classmethod
    def _hex_digest(cls, value: str) -> str:
        if not _SHA256_HEX.match(value):
            raise ValueError("must be 64 lowercase hex characters (sha256 of the key)")
        return value


class TenantsFile(Strict):
    tenants: dict[str, TenantEntry] = {}


@dataclass(frozen=True)
class Tenant:
    """Who a key authenticates: the tenant, its plan, and the key itself (its id, and
    the per-key rate limits set on it; None means the plan's)."""

    name: str
    plan: str
    key_id: str = ""
    rpm_limit: int | None = None
    tpm_limit: int | None = None


@dataclass(frozen=True)
class Settings:
    """Everything the running gateway needs, resolved once at start-up."""

    config: Config
    config_path: Path
    policies_dir: Path
    tenants_by_hash: Mapping[str, Tenant]
    policies: Policies
    spend: SpendRules
    admin_key: str | None
    provider_key: str | None
    retention: Retention = field(default_factory=Retention)
    rate_limits: RateRules = field(default_factory=lambda: RateRules(RateLimitsFile()))
    sha: str = ""  # of the files read (config_sha): which config a replica runs
    config_digest: str = ""  # of config.yaml as loaded (file_digest)
    # The environment it was loaded with (a reload reads the files again with it).
    env: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)

    @property
    def store_url(self) -> str:
        return self.config.store

    @property
    def known_plans(self) -> frozenset[str]:
        return known_plans(self.policies, self.spend)


def _apply_env(raw: dict[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
    raw = dict(raw)
    if "GATEWAY_UPSTREAM_URL" in env:
        raw["upstream"] = {**(raw.get("upstream") or {}), "base_url": env["GATEWAY_UPSTREAM_URL"]}
    if "GATEWAY_STORE_URL" in env:
        raw["store"] = env["GATEWAY_STORE_URL"]
    if "GATEWAY_LEDGER_URL" in env:
        raw["ledger"] = env["GATEWAY_LEDGER_URL"] or None
    if "GATEWAY_POLICIES" in env:
        raw["policies"] = env["GATEWAY_POLICIES"]
    return raw


def load_config(path: Path, env: Mapping[str, str]) -> Config:
    raw = read_yaml(path)
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError([(str(path), "-", "must be a mapping at the top level")])
    return validate(Config, _apply_env(raw, env), path)


def resolve_relative(base: Path, value: str) -> Path:
    p = Path(value)
    return p if p.is_absolute() else (base / p)


def tenants_path(policies_dir: Path) -> Path:
    return policies_dir / "tenants.yaml"


def load_tenants(policies_dir: Path) -> dict[str, Tenant]:
    """tenants.yaml's tenants by key hash. The file is optional (tenants are store data;
    it stays for declarative setups): without it, no tenant is declared."""
    path = tenants_path(policies_dir)
    if not path.exists():
        return {}
    parsed = validate(TenantsFile, read_yaml(path), path)
    by_hash: dict[str, Tenant] = {}
    problems = []
    for name, entry in parsed.tenants.items():
        if entry.key_sha256 in by_hash:
            problems.append((str(path), f"tenants.{name}.key_sha256", "same key as another tenant"))
        by_hash[entry.key_sha256] = Tenant(name=name, plan=entry.plan, key_id=f"file:{name}")
    if problems:
        raise ConfigError(problems)
    return by_hash


def _absolute_store(config: Config, base: Path) -> Config:
    if config.store.startswith("sqlite:///"):
        db = resolve_relative(base, config.store.removeprefix("sqlite:///"))
        return config.model_copy(update={"store": f"sqlite:///{db}"})
    return config


def pricer_for(config: Config) -> Pricer:
    """The `Pricer` the gateway prices with (config table, then genai-prices)."""
    return Pricer(config.prices, config.upstream.provider, config.upstream.base_url)


POLICY_FILES = ("context.yaml", "spend.yaml", "tenants.yaml", "retention.yaml", "limits.yaml")


def known_plans(policies: Policies, spend: SpendRules) -> frozenset[str]:
    """The plans a tenant may be on: those spend.yaml or context.yaml define."""
    return frozenset(spend.file.plans) | frozenset(policies.file.plans)


def _stray_files(policies_dir: Path) -> list[tuple[str, str, str]]:
    """A policy file under another name (`context.yml`, `Spend.yaml`, `SPEND.YAML`) would
    be ignored by the loaders: say so rather than run without it."""
    if not policies_dir.is_dir():
        return [(str(policies_dir), "-", "the policies folder does not exist")]
    return [
        (str(p), "-", f"not a policy file (the policy files are {', '.join(POLICY_FILES)})")
        for p in sorted(policies_dir.iterdir())
        if p.suffix.lower() in (".yaml", ".yml") and p.name not in POLICY_FILES and p.name[0] != "."
    ]


def _cross_problems(
    config: Config | None,
    tenants: Mapping[str, Tenant] | None,
    policies: Policies | None,
    spend: SpendRules | None,
    policies_dir: Path,
) -> list[tuple[str, str, str]]:
    """What the files say about each other: every tenant's plan is defined, every
    `price_as` model has a price. A `tenants.<name>` override in spend.yaml or
    limits.yaml may name any tenant: tenants are store data, and one made after the load
    (`gateway tenants add`, the admin API) gets its override on its first call."""
    problems: list[tuple[str, str, str]] = []
    spend_path = str(policies_dir / SPEND_FILE)
    if tenants is not None and policies is not None and spend is not None:
        plans = known_plans(policies, spend)
        listed = ", ".join(sorted(plans)) or "(none defined)"
        path = str(tenants_path(policies_dir))
        for t in sorted({t.name: t for t in tenants.values()}.values(), key=lambda t: t.name):
            if t.plan not in plans:
                problems.append(
                    (path, f"tenants.{t.name}.plan", f"unknown plan {t.plan!r} (plans: {listed})")
                )
    if config is not None and spend is not None:
        priced = pricer_for(config).knows
        problems += [(spend_path, key, reason) for key, reason in spend_problems(spend, priced)]
    return problems


def file_digest(path: Path) -> str:
    """sha256 of a file's bytes ("" when it cannot be read)."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""


def config_sha(config_digest: str, policies_dir: Path) -> str:
    """A short digest of config.yaml (its `file_digest` as loaded) and the policy files:
    equal on two replicas when they run the same files."""
    digest = hashlib.sha256(config_digest.encode() + b"\0")
    for name in POLICY_FILES:
        digest.update(name.encode() + b"\0")
        with contextlib.suppress(OSError):
            digest.update((policies_dir / name).read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()[:12]


def _attempt(
    load: Callable[[Path], _T], policies_dir: Path, problems: list[tuple[str, str, str]]
) -> _T | None:
    """One file's loader; its problems join the list (so one run lists them all)."""
    try:
        return load(policies_dir)
    except ConfigError as exc:
        problems += exc.problems
        return None


def load_settings(path: Path, env: Mapping[str, str] | None = None) -> Settings:
    """Load and validate config and policies; raise ConfigError listing every problem."""
    env = os.environ if env is None else env
    base = path.resolve().parent
    problems: list[tuple[str, str, str]] = []
    config: Config | None = None
    config_digest = file_digest(path)
    try:
        config = _absolute_store(load_config(path, env), base)
    except ConfigError as exc:
        problems += exc.problems
    # Check the policies too when config.yaml is broken, so one run lists every problem.
    policies_dir = resolve_relative(
        base, config.policies if config else env.get("GATEWAY_POLICIES", "policies")
    )
    return _with_policies(config, path, policies_dir, config_digest, env, problems)


def reload_settings(running: Settings) -> tuple[Settings, list[str]]:
    """The policy files read again, checked against the config.yaml the gateway runs (as
    it was loaded at start-up, from the policies folder it named then); and the fields
    of config.yaml as it is now on disk that differ from it, which only a restart
    applies. Raises ConfigError listing every problem, config.yaml's on disk too."""
    problems: list[tuple[str, str, str]] = []
    on_disk: Config | None = None
    try:
        base = running.config_path.resolve().parent
        on_disk = _absolute_store(load_config(running.config_path, running.env), base)
    except ConfigError as exc:
        problems += exc.problems
    settings = _with_policies(
        running.config,
        running.config_path,
        running.policies_dir,
        running.config_digest,
        running.env,
        problems,
    )
    old = running.config.model_dump()
    new = on_disk.model_dump() if on_disk is not None else old
    return settings, sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))


def _with_policies(
    config: Config | None,
    path: Path,
    policies_dir: Path,
    config_digest: str,
    env: Mapping[str, str],
    problems: list[tuple[str, str, str]],
) -> Settings:
    """`config` (None: config.yaml did not load, its `problems` listed) with the policy
    files of `policies_dir`, each checked against it."""
    problems += _stray_files(policies_dir)
    tenants = _attempt(load_tenants, policies_dir, problems)
    policies = _attempt(load_policies, policies_dir, problems)
    spend = _attempt(load_spend, policies_dir, problems)
    retention = _attempt(load_retention, policies_dir, problems)
    rate_limits = _attempt(load_limits, policies_dir, problems)
    problems += _cross_problems(config, tenants, policies, spend, policies_dir)
    if rate_limits is not None and policies is not None and spend is not None:
        problems += limits_problems(rate_limits, known_plans(policies, spend), policies_dir)
    if problems or config is None:
        raise ConfigError(problems)
    assert tenants is not None and policies is not None and spend is not None
    assert retention is not None and rate_limits is not None
    return Settings(
        config=config,
        config_path=path,
        policies_dir=policies_dir,
        tenants_by_hash=tenants,
        policies=policies,
        spend=spend,
        admin_key=env.get("GATEWAY_ADMIN_KEY") or env.get(config.admin.key_env) or None,
        provider_key=env.get(config.upstream.api_key_env) or None,
        retention=retention,
        rate_limits=rate_limits,
        sha=config_sha(config_digest, policies_dir),
        config_digest=config_digest,
        env=env,
    )
