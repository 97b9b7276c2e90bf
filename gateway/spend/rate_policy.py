"""`policies/limits.yaml`: read, validated strictly, and checked against the plans the
policies define (gateway.spend.rate_limits holds the model and the arithmetic)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from gateway.spend.rate_limits import RateLimitsFile, RateRules
from gateway.yamlfile import read_yaml, validate

LIMITS_FILE = "limits.yaml"


def load_limits(policies_dir: Path) -> RateRules:
    """The rate limits; without the file, none (every call passes)."""
    path = policies_dir / LIMITS_FILE
    if not path.exists():
        return RateRules(RateLimitsFile())
    return RateRules(validate(RateLimitsFile, read_yaml(path), path))


def limits_problems(
    rules: RateRules, known_plans: Iterable[str], policies_dir: Path
) -> list[tuple[str, str, str]]:
    """(file, key, reason) per plan limits.yaml names that no policy defines: a typo
    there would silently leave a plan unlimited."""
    known = frozenset(known_plans)
    path = str(policies_dir / LIMITS_FILE)
    return [
        (path, f"plans.{plan}", "unknown plan (not in spend.yaml or context.yaml `plans`)")
        for plan in rules.file.plans
        if plan not in known
    ]
