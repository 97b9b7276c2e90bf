"""Strict YAML files: the base model every config and policy file is read with
(unknown keys are errors), and the reader that turns any problem into a `ConfigError`
naming the file, the key and the reason."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gateway.errors import ConfigError


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    schema_ref: str | None = Field(default=None, alias="$schema")


def read_yaml(path: Path) -> Any:
    try:
        with path.open("rb") as fh:
            return yaml.safe_load(fh)
    except FileNotFoundError as exc:
        raise ConfigError([(str(path), "-", "file not found")]) from exc
    except yaml.YAMLError as exc:
        raise ConfigError([(str(path), "-", f"not valid YAML: {exc}")]) from exc


M = TypeVar("M", bound=BaseModel)


def validate(model: type[M], data: Any, path: Path) -> M:
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError([(str(path), "-", "must be a mapping at the top level")])
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = [
            (str(path), ".".join(str(p) for p in err["loc"]) or "-", reason(err))
            for err in exc.errors()
        ]
        raise ConfigError(problems) from exc


def reason(err: Mapping[str, Any]) -> str:
    if err["type"] == "extra_forbidden":
        return "unknown key"
    return str(err["msg"])
