"""Context policies (the packaged gateway/data/context.yaml, with the policy folder's
`context.yaml` layered on it: mappings merge by key, lists replace): per-class budgets,
per-plan overrides, classification rules, fact-extraction patterns and the summarizer.

A class's numbers are the packaged file's `defaults` (the one home of every default),
then the file's `defaults`, the plan's defaults, the class, and the plan's override for
that class (defaults < plan defaults < class < plan x class); the result is a complete
`WindowPolicy` and `LoopSettings`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from fnmatch import fnmatchcase
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

from pydantic import Field, PositiveInt, field_validator, model_validator

from gateway.context.linear_regex import compile_linear
from gateway.context.types import WindowPolicy
from gateway.errors import ConfigError
from gateway.loops.detector import LoopSettings
from gateway.yamlfile import Strict, read_yaml, validate

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

POLICY_FILE = "context.yaml"
Resolved = TypeVar("Resolved", bound="DataclassInstance")


def _check_regex(pattern: str) -> str:
    """Patterns meet client text: RE2 (linear time), so one the gateway cannot run in
    linear time is a config error naming its key, not a stall at request time."""
    compile_linear(pattern)
    return pattern


class FactsBudget(Strict):
    floor: int | None = Field(default=None, ge=0)
    ceiling: int | None = Field(default=None, ge=0)


class LoopLayer(Strict):
    """A layer's `loop` block, validated into gateway.loops.detector.LoopSettings (kept
    in context.yaml so policies stay one file). A layer states only what it changes."""

    user_similarity: float | None = Field(default=None, gt=0, le=1)
    reply_similarity: float | None = Field(default=None, gt=0, le=1)
    consecutive: int | None = Field(default=None, ge=1, le=16)  # the loop turns kept
    window_user_similarity: float | None = Field(default=None, gt=0, le=1)
    window_reply_similarity: float | None = Field(default=None, gt=0, le=1)
    within: int | None = Field(default=None, ge=1, le=16)
    pushback_reply_similarity: float | None = Field(default=None, gt=0, le=1)


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
    cache_idle_s: int | None = Field(default=None, ge=0)
    output_reserve: int | None = Field(default=None, gt=0)
    turn_ceiling: int | None = Field(default=None, gt=0)
    progress_window: int | None = Field(default=None, ge=1)
    escalation_action: Literal["signal", "instruct", "handoff"] | None = None
    handoff_message: str | None = Field(default=None, min_length=1, max_length=2000)
    loop: LoopLayer | None = None


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
    # Model name glob -> the least output reserve for a model it matches (reasoning models
    # spend hidden reasoning tokens out of it). Layered over the packaged file's map.
    output_reserves_by_model: dict[str, PositiveInt] = {}
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


def _complete(kind: type[Resolved], values: dict[str, Any], path: Path, where: str) -> Resolved:
    """`kind` built from the layers' values: a name it lacks, or a value no layer gave,
    is an error (never dropped, never defaulted here)."""
    names = {f.name for f in fields(kind)}
    problems = [(str(path), where, f"{name}: not a setting") for name in values.keys() - names]
    problems += [(str(path), where, f"{name}: no layer sets it") for name in names - values.keys()]
    if problems:
        raise ConfigError(sorted(problems))
    return kind(**values)


RESOLVED_KEPT = 4096  # (plan, class, model) policies remembered per policy generation


@dataclass(frozen=True)
class Policies:
    file: PolicyFile
    path: Path
    # The packaged file's `defaults`: the bottom layer under every policy file.
    shipped: ClassSettings
    # The packaged file's `output_reserves_by_model`, under the file's own.
    shipped_reserves: dict[str, int] = field(default_factory=dict)
    # Resolved policies by (plan, class, model): the layers are merged once, not per
    # request. Bounded: model names come from clients.
    _resolved: dict[tuple[str, ...], Any] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def _layers(self, plan: str, conversation_class: str) -> list[ClassSettings]:
        """defaults < plan defaults < class < plan x class: what a class sets beats a
        plan's blanket default; only the plan's own entry for the class beats the class."""
        layers = [self.shipped, self.file.defaults]
        plan_settings = self.file.plans.get(plan)
        if plan_settings is not None:
            layers.append(plan_settings.defaults)
        layers.append(self.file.classes[conversation_class])
        if plan_settings is not None and conversation_class in plan_settings.classes:
            layers.append(plan_settings.classes[conversation_class])
        return layers

    def _remembered(self, key: tuple[str, ...], make: Any) -> Any:
        found = self._resolved.get(key)
        if found is None:
            found = make()
            if len(self._resolved) >= RESOLVED_KEPT:
                self._resolved.clear()
            self._resolved[key] = found
        return found

    def resolve(self, plan: str, conversation_class: str, model: str) -> WindowPolicy:
        return cast(
            WindowPolicy,
            self._remembered(
                ("window", plan, conversation_class, model),
                lambda: self._resolve(plan, conversation_class, model),
            ),
        )

    def _resolve(self, plan: str, conversation_class: str, model: str) -> WindowPolicy:
        values: dict[str, Any] = {}
        for layer in self._layers(plan, conversation_class):
            values.update(_flatten(layer))
        values["context_window"] = self.context_window(model)
        reserve = self.model_reserve(model)
        if reserve is not None and "output_reserve" in values:
            values["output_reserve"] = max(values["output_reserve"], reserve)
        return _complete(WindowPolicy, values, self.path, f"classes.{conversation_class}")

    def hands_off(self, plan: str) -> bool:
        """Whether a conversation of some class may be handed to a person under `plan`
        (`escalation_action: handoff`): such a turn is answered, at no cost, whatever
        the spend guard would say (gateway.proxy.chat refuses a spent budget early only
        where none can be)."""
        return cast(
            bool,
            self._remembered(
                ("handoff", plan),
                lambda: any(self._action(plan, name) == "handoff" for name in self.file.classes),
            ),
        )

    def _action(self, plan: str, conversation_class: str) -> str | None:
        action = None
        for layer in self._layers(plan, conversation_class):
            action = layer.escalation_action or action
        return action

    def model_reserve(self, model: str) -> int | None:
        """The least output reserve of `model`: its first matching pattern's (the file's
        patterns before the packaged file's), else None (the class's reserve stands)."""
        for table in (self.file.output_reserves_by_model, self.shipped_reserves):
            for pattern, reserve in table.items():
                if fnmatchcase(model, pattern):
                    return reserve
        return None

    def context_window(self, model: str) -> int:
        windows = self.file.context_windows
        return windows.get(model, windows["default"])

    def loop(self, plan: str, conversation_class: str) -> LoopSettings:
        return cast(
            LoopSettings,
            self._remembered(
                ("loop", plan, conversation_class), lambda: self._loop(plan, conversation_class)
            ),
        )

    def _loop(self, plan: str, conversation_class: str) -> LoopSettings:
        values: dict[str, Any] = {}
        for layer in self._layers(plan, conversation_class):
            if layer.loop is not None:
                values.update(layer.loop.model_dump(exclude_none=True, exclude={"schema_ref"}))
        return _complete(LoopSettings, values, self.path, f"classes.{conversation_class}.loop")

    def summarizer(self, tenant: str) -> SummarizerSettings:
        return self.file.tenant_summarizers.get(tenant, self.file.summarizer)


def _checked_models(policies: Policies) -> list[str]:
    """One model per configured context window and per output-reserve pattern (a pattern
    stands for the models it matches; those not in context_windows get the default)."""
    file = policies.file
    return [*file.context_windows, *file.output_reserves_by_model, *policies.shipped_reserves]


def _check_budgets(policies: Policies) -> list[tuple[str, str, str]]:
    """Every class x plan x model must fit the model's context window and its own floors."""
    problems: set[tuple[str, str, str]] = set()
    for plan in ["-", *policies.file.plans]:
        for name in policies.file.classes:
            policies.loop(plan, name)  # complete too, or a ConfigError now
            where = f"classes.{name}" + ("" if plan == "-" else f" (plan {plan})")
            for model in dict.fromkeys(_checked_models(policies)):
                problems.update(_check_policy(policies, plan, name, model, where))
    return sorted(problems)


def _check_policy(
    policies: Policies, plan: str, name: str, model: str, where: str
) -> list[tuple[str, str, str]]:
    p = policies.resolve(plan, name, model)
    path = str(policies.path)
    problems = []
    if p.system_budget + p.quota_tokens + p.output_reserve > p.context_window:
        problems.append(
            (
                path,
                where,
                f"system_budget + quota_tokens + output_reserve ({p.output_reserve} for "
                f"model {model}) exceed its context window ({p.context_window})",
            )
        )
    if p.facts_floor > p.facts_ceiling:
        problems.append((path, where, "facts.floor is above facts.ceiling"))
    if p.operational_state_max + p.facts_floor + p.transcript_floor > p.quota_tokens:
        problems.append(
            (
                path,
                where,
                "operational_state_max + facts.floor + transcript_floor exceed quota_tokens",
            )
        )
    return problems


DEFAULT_POLICY = Path(__file__).parents[1] / "data" / POLICY_FILE


@cache
def _shipped_yaml() -> Any:
    return read_yaml(DEFAULT_POLICY)


@cache
def shipped_policy() -> PolicyFile:
    """The packaged file (read once: the package does not change)."""
    return validate(PolicyFile, _shipped_yaml(), DEFAULT_POLICY)


def layered(under: Any, over: Any) -> Any:
    """`over` layered on `under`: mappings merge key by key at every depth (a class's
    settings over the packaged class's, a plan, a context window, an extraction pattern's
    fields), and a key set to null removes what lies under it (a packaged class's value,
    so the layers below apply; a packaged extraction pattern); anything else `over`
    gives, a list (`rules`, keywords, tags) or a value, replaces what lies under it."""
    if not isinstance(over, dict) or not isinstance(under, dict | None):
        return over
    merged = dict(under or {})
    for key, value in over.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = layered(merged.get(key), value)
    return merged


# Sections whose entries an operator's copy may have deleted, expecting them gone.
_ENTRY_SECTIONS = ("extraction", "classes", "plans")


def packaged_entries_back(policies_dir: Path) -> list[str]:
    """The packaged entries (`extraction.email`, `classes.catalog`, ...) an operator's
    context.yaml leaves out of a section it does state: a copy from before the file was
    layered, that deleted an entry to drop it, gets the entry back from the packaged
    file (`null` drops it). A file that does not state the section says nothing."""
    path = policies_dir / POLICY_FILE
    own = read_yaml(path) if path.exists() else None
    if not isinstance(own, dict):
        return []
    back = []
    for section in _ENTRY_SECTIONS:
        stated, packaged = own.get(section), _shipped_yaml().get(section)
        if isinstance(stated, dict) and isinstance(packaged, dict):
            back += [f"{section}.{name}" for name in packaged if name not in stated]
    return back


def policy_schema() -> dict[str, Any]:
    """The JSON schema of an operator's context.yaml (policies/schema/context.schema.json):
    `PolicyFile`'s, with no top-level key required, as the file is a layer."""
    schema = PolicyFile.model_json_schema(by_alias=True)
    schema.pop("required", None)
    return schema


def load_policies(policies_dir: Path) -> Policies:
    """`context.yaml` from the policy folder layered on the packaged file (`layered`:
    it states only what it changes), or the packaged file alone when there is none. Its
    `output_reserves_by_model` stays a map of its own, matched before the packaged one."""
    path = policies_dir / POLICY_FILE
    shipped = shipped_policy()
    if path.exists():
        own = read_yaml(path)
        if own is None or isinstance(own, dict):
            base = {k: v for k, v in _shipped_yaml().items() if k != "output_reserves_by_model"}
            own = layered(base, own or {})
        file = validate(PolicyFile, own, path)
    else:
        path, file = DEFAULT_POLICY, shipped
    policies = Policies(file, path, shipped.defaults, dict(shipped.output_reserves_by_model))
    problems = _check_budgets(policies)
    if problems:
        raise ConfigError(problems)
    return policies
