"""Context policies (`policies/context.yaml`): per-class budgets, per-plan overrides,
classification rules, fact-extraction patterns and the summarizer.

A class's numbers are `defaults`, then the class, then the plan's defaults, then the
plan's override for that class; the result is a complete `WindowPolicy`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from gateway.context.linear_regex import compile_linear
from gateway.context.types import WindowPolicy
from gateway.errors import ConfigError
from gateway.yamlfile import Strict, read_yaml, validate

POLICY_FILE = "context.yaml"


def _check_regex(pattern: str) -> str:
    """Patterns meet client text: RE2 (linear time), so one the gateway cannot run in
    linear time is a config error naming its key, not a stall at request time."""
    compile_linear(pattern)
    return pattern


class FactsBudget(Strict):
    floor: int | None = Field(default=None, ge=0)
    ceiling: int | None = Field(default=None, ge=0)


class LoopSettings(Strict):
    """Used by loop detection (issue 5); validated here so policies stay one file."""

    user_similarity: float = Field(default=0.8, gt=0, le=1)
    reply_similarity: float = Field(default=0.8, gt=0, le=1)
    consecutive: int = Field(default=2, ge=1)


class ClassSettings(Strict):
    """Every field optional: a layer only states what it changes."""

    priority: int | None = None
    quota_tokens: int | None = Field(default=None, gt=0)
    system_budget: int | None = Field(default=None, ge=0)
    operational_state_max: int | None = Field(default=None, ge=0)
    facts: FactsBudget | None = None
    episodes_ceiling: int | None = Field(default=None, ge=0)
    summary_ceiling: int | None = Field(default=None, gt=0)
    transcript_floor: int | None = Field(default=None, ge=0)
    keep_last_messages: int | None = Field(default=None, ge=1)
    low_water: float | None = Field(default=None, gt=0, le=1)
    output_reserve: int | None = Field(default=None, gt=0)
    turn_ceiling: int | None = Field(default=None, gt=0)
    progress_window: int | None = Field(default=None, ge=1)
    escalation_action: Literal["signal", "instruct", "handoff"] | None = None
    handoff_message: str | None = Field(default=None, min_length=1, max_length=2000)
    loop: LoopSettings | None = None


class PlanSettings(Strict):
    defaults: ClassSettings = ClassSettings()
    classes: dict[str, ClassSettings] = {}


class Rule(Strict):
    """First matching rule wins. Empty lists match anything; keywords and regexes are
    matched case-insensitively against the user's messages of the turn."""

    to_class: str = Field(alias="class")
    channels: list[str] = []
    models: list[str] = []
    keywords: list[str] = []
    regex: list[str] = []

    @field_validator("regex")
    @classmethod
    def _compiles(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            _check_regex(pattern)
        return patterns


class ExtractionPattern(Strict):
    regex: str
    tags: list[str] = []
    scope: str = "basic"

    @field_validator("regex")
    @classmethod
    def _compiles(cls, pattern: str) -> str:
        return _check_regex(pattern)


class SummarizerSettings(Strict):
    model: str | None = None
    timeout_s: float = Field(default=10.0, gt=0)
    max_tokens: int = Field(default=600, gt=0)


class PolicyFile(Strict):
    defaults: ClassSettings
    classes: dict[str, ClassSettings]
    default_class: str
    plans: dict[str, PlanSettings] = {}
    rules: list[Rule] = []
    extraction: dict[str, ExtractionPattern] = {}
    summarizer: SummarizerSettings = SummarizerSettings()
    tenant_summarizers: dict[str, SummarizerSettings] = {}
    context_windows: dict[str, int] = {"default": 128_000}
    webhooks: dict[str, str] = {}  # tenant -> URL receiving escalation events

    @model_validator(mode="after")
    def _references(self) -> PolicyFile:
        known = set(self.classes)
        if self.default_class not in known:
            raise ValueError(f"default_class {self.default_class!r} is not among classes")
        for n, rule in enumerate(self.rules):
            if rule.to_class not in known:
                raise ValueError(f"rules.{n}.class {rule.to_class!r} is not among classes")
        for plan, settings in self.plans.items():
            for name in settings.classes:
                if name not in known:
                    raise ValueError(f"plans.{plan}.classes.{name} is not among classes")
        if "default" not in self.context_windows:
            raise ValueError("context_windows needs a 'default' entry")
        return self


def _flatten(settings: ClassSettings) -> dict[str, Any]:
    out: dict[str, Any] = {}
    data = settings.model_dump(exclude_none=True, exclude={"schema_ref", "loop"})
    facts = data.pop("facts", None) or {}
    if "floor" in facts:
        out["facts_floor"] = facts["floor"]
    if "ceiling" in facts:
        out["facts_ceiling"] = facts["ceiling"]
    out.update(data)
    return out


@dataclass(frozen=True)
class Policies:
    file: PolicyFile
    path: Path

    def resolve(self, plan: str, conversation_class: str, model: str) -> WindowPolicy:
        layers = [self.file.defaults, self.file.classes[conversation_class]]
        plan_settings = self.file.plans.get(plan)
        if plan_settings is not None:
            layers.append(plan_settings.defaults)
            if conversation_class in plan_settings.classes:
                layers.append(plan_settings.classes[conversation_class])
        values: dict[str, Any] = {}
        for layer in layers:
            values.update(_flatten(layer))
        windows = self.file.context_windows
        values["context_window"] = windows.get(model, windows["default"])
        names = {f.name for f in fields(WindowPolicy)}
        return WindowPolicy(**{k: v for k, v in values.items() if k in names})

    def loop(self, plan: str, conversation_class: str) -> LoopSettings:
        found = self.file.defaults.loop or LoopSettings()
        for layer in (
            self.file.classes[conversation_class],
            self.file.plans.get(plan, PlanSettings()).defaults,
            self.file.plans.get(plan, PlanSettings()).classes.get(conversation_class),
        ):
            if layer is not None and layer.loop is not None:
                found = layer.loop
        return found

    def summarizer(self, tenant: str) -> SummarizerSettings:
        return self.file.tenant_summarizers.get(tenant, self.file.summarizer)


def _check_budgets(policies: Policies) -> list[tuple[str, str, str]]:
    """Every class x plan must fit its model's context window and its own floors."""
    problems = []
    plans = ["-", *policies.file.plans]
    for plan in plans:
        for name in policies.file.classes:
            p = policies.resolve(plan, name, "default")
            where = f"classes.{name}" + ("" if plan == "-" else f" (plan {plan})")
            if p.system_budget + p.quota_tokens + p.output_reserve > p.context_window:
                problems.append(
                    (
                        str(policies.path),
                        where,
                        "system_budget + quota_tokens + output_reserve exceed the "
                        f"context window ({p.context_window})",
                    )
                )
            if p.facts_floor > p.facts_ceiling:
                problems.append((str(policies.path), where, "facts.floor is above facts.ceiling"))
            if p.operational_state_max + p.facts_floor + p.transcript_floor > p.quota_tokens:
                problems.append(
                    (
                        str(policies.path),
                        where,
                        "operational_state_max + facts.floor + transcript_floor "
                        "exceed quota_tokens",
                    )
                )
    return problems


DEFAULT_POLICY = Path(__file__).parents[1] / "data" / POLICY_FILE


def load_policies(policies_dir: Path) -> Policies:
    """`context.yaml` from the policy folder; the packaged defaults when there is none."""
    path = policies_dir / POLICY_FILE
    if not path.exists():
        path = DEFAULT_POLICY
    policies = Policies(validate(PolicyFile, read_yaml(path), path), path)
    problems = _check_budgets(policies)
    if problems:
        raise ConfigError(problems)
    return policies
