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


class _OnceLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a key given twice in one mapping: PyYAML keeps the
    last silently, so `acme: {monthly_usd: 10}` then `acme: {monthly_usd: 100000}` ran
    on the second. A merge (`<<: *defaults`) may still be overridden by a key."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                if key in seen:
                    raise _Duplicate(str(key), seen[key], line)
                seen[key] = line
            except TypeError:  # a key YAML allows but a dict does not: the base refuses it
                continue
        return super().construct_mapping(node, deep=deep)


class _Duplicate(yaml.YAMLError):
    def __init__(self, key: str, first: int, again: int) -> None:
        super().__init__(f"given twice (lines {first} and {again}): keep one")
        self.key = key


def read_yaml(path: Path) -> Any:
    try:
        with path.open("rb") as fh:
            return yaml.load(fh, Loader=_OnceLoader)  # a SafeLoader
    except FileNotFoundError as exc:
        raise ConfigError([(str(path), "-", "file not found")]) from exc
    except IsADirectoryError as exc:
        raise ConfigError([(str(path), "-", "is a directory, not a file")]) from exc
    except OSError as exc:
        raise ConfigError([(str(path), "-", f"cannot be read: {exc.strerror}")]) from exc
    except _Duplicate as exc:
        raise ConfigError([(str(path), exc.key, str(exc))]) from exc
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
