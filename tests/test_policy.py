"""Policies and classification: strict files, layered numbers, classes that only move up."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import subprocess
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
import yaml

from gateway.context.classify import Classifier
from gateway.context.linear_regex import compile_linear
from gateway.context.policy import (
    DEFAULT_POLICY,
    POLICY_FILE,
    ClassSettings,
    LoopLayer,
    Policies,
    load_policies,
    policy_schema,
)
from gateway.context.types import WindowPolicy
from gateway.errors import ConfigError, InvalidRequest
from gateway.loops.detector import LoopSettings
from gateway.ops.cli import cli_logic
from tests.servers import REPO, edit_policy, write_config


@pytest.fixture(scope="module")
def classifier() -> Classifier:
    return Classifier.from_policy(load_policies(REPO / "policies").file)


@pytest.mark.parametrize(
    ("header", "channel", "text", "previous", "expected"),
    [
        ("technical", None, "my order is late", None, "technical"),  # the header wins
        (None, None, "My order ORD-1 is late", None, "support"),
        (None, None, "I want to open a chargeback", None, "dispute"),
        (None, "catalog", "hello", None, "catalog"),
        (None, None, "hello there", None, "default"),
        (None, None, "I will file a dispute for this", "support", "dispute"),  # moves up
        (None, None, "do you sell blue hats?", "support", "support"),  # never down
        (None, None, "thanks", "dispute", "dispute"),
        (None, None, "We get error code 502 from the webhook", None, "technical"),
    ],
)
def test_classification(
    classifier: Classifier,
    header: str | None,
    channel: str | None,
    text: str,
    previous: str | None,
    expected: str,
) -> None:
    got = classifier.classify(
        header=header, channel=channel, model="gpt-4o-mini", user_texts=[text], previous=previous
    )
    assert got == expected


def test_a_remembered_scan_answers_as_a_fresh_one() -> None:
    """The classifier remembers each text's first matching rule (a repeated request is
    scanned once): the same text on another channel or model, or with another class
    before it, is answered as a classifier that never saw it answers."""
    policy = load_policies(REPO / "policies").file
    seen = Classifier.from_policy(policy)
    texts = ["hello", "I want to open a chargeback", "My order ORD-1 is late", "thanks"]
    calls = [
        (text, channel, model, previous)
        for text in texts
        for channel in (None, "catalog", "phone")
        for model in ("gpt-4o-mini", "local-llama")
        for previous in (None, "support", "catalog")
    ]
    for text, channel, model, previous in [*calls, *reversed(calls)]:
        asked = {
            "header": None,
            "channel": channel,
            "model": model,
            "user_texts": [text],
            "previous": previous,
        }
        fresh = Classifier.from_policy(policy).classify(**asked)  # type: ignore[arg-type]
        assert seen.classify(**asked) == fresh, asked  # type: ignore[arg-type]


def test_an_unknown_class_header_is_a_clear_400(classifier: Classifier) -> None:
    with pytest.raises(InvalidRequest) as info:
        classifier.classify(header="vip", channel=None, model="m", user_texts=[], previous=None)
    assert "X-Conversation-Class" in info.value.message and info.value.status == 400


def test_layers_plan_over_class_over_defaults() -> None:
    policies = load_policies(REPO / "policies")
    assert policies.resolve("pro", "technical", "gpt-4o-mini").quota_tokens == 4000
    assert policies.resolve("basic", "support", "gpt-4o-mini").quota_tokens == 2000
    assert policies.resolve("basic", "catalog", "x").quota_tokens == 1800
    dispute = policies.resolve("enterprise", "dispute", "local-llama")
    assert (dispute.quota_tokens, dispute.turn_ceiling, dispute.context_window) == (3500, 6, 32000)


def _policy_dir(tmp_path: Path, change: dict[str, Any]) -> Path:
    write_config(tmp_path, "simulator", "sqlite:///a.db")
    edit_policy(tmp_path, change)
    return tmp_path / "policies"


@pytest.mark.parametrize(
    ("change", "key"),
    [
        ({"defaults.quota_tokenz": 5}, "defaults.quota_tokenz"),
        ({"classes.support.low_water": 1.5}, "classes.support.low_water"),
        ({"default_class": "nope"}, "-"),
        ({"classes.dispute.quota_tokens": 200000}, "classes.dispute"),
        ({"extraction.order_number.regex": "(unclosed"}, "extraction.order_number.regex"),
    ],
)
def test_policy_errors_name_file_and_key(tmp_path: Path, change: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_policies(_policy_dir(tmp_path, change))
    assert any(
        f.endswith("context.yaml") and k.startswith(key) for f, k, _ in info.value.problems
    ), info.value.lines()


def test_check_config_reports_policy_errors(tmp_path: Path) -> None:
    _policy_dir(tmp_path, {"classes.support.colour": "blue"})
    run = subprocess.run(  # noqa: PLW1510 - the exit code is asserted
        [
            sys.executable,
            "-m",
            "gateway",
            "check-config",
            "--config",
            str(tmp_path / "config.yaml"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 1
    assert "context.yaml: classes.support.colour: unknown key" in run.stderr


def test_the_packaged_policy_is_the_only_copy() -> None:
    """Defaults live once: a policy folder without context.yaml runs on the packaged file."""
    assert not (REPO / "policies" / POLICY_FILE).exists()
    assert load_policies(REPO / "policies").path == DEFAULT_POLICY


def test_every_setting_of_a_layer_is_a_window_or_loop_setting() -> None:
    """Resolving never drops a name: each layer's key is a field, and each field a key."""
    layer = set(ClassSettings.model_fields) - {"schema_ref", "facts", "loop"}
    window = {f.name for f in fields(WindowPolicy)} - {"context_window"}
    assert layer | {"facts_floor", "facts_ceiling"} == window
    assert set(LoopLayer.model_fields) - {"schema_ref"} == {f.name for f in fields(LoopSettings)}


def test_a_value_no_layer_sets_is_an_error_naming_it() -> None:
    shipped = load_policies(DEFAULT_POLICY.parent)
    bare = Policies(
        shipped.file.model_copy(update={"defaults": ClassSettings()}), shipped.path, ClassSettings()
    )
    with pytest.raises(ConfigError) as info:
        bare.resolve("-", "default", "m")
    assert (str(DEFAULT_POLICY), "classes.default", "quota_tokens: no layer sets it") in (
        info.value.problems
    )
    with pytest.raises(ConfigError, match="consecutive: no layer sets it"):
        bare.loop("-", "default")


def test_a_policy_file_states_only_what_it_changes(tmp_path: Path) -> None:
    """An operator's context.yaml sits on the packaged defaults, loop settings included."""
    (tmp_path / POLICY_FILE).write_text(
        "defaults: {quota_tokens: 7000}\n"
        "classes:\n  default: {}\n  vip: {loop: {consecutive: 3}}\n"
        "default_class: default\n"
    )
    policies = load_policies(tmp_path)
    shipped = load_policies(DEFAULT_POLICY.parent)
    vip = policies.resolve("-", "vip", "m")
    assert vip == dataclasses.replace(shipped.resolve("-", "default", "m"), quota_tokens=7000)
    assert policies.loop("-", "vip") == dataclasses.replace(
        shipped.loop("-", "default"), consecutive=3
    )


def test_an_operators_context_yaml_is_layered_on_the_packaged_one(tmp_path: Path) -> None:
    """It states only what it changes: mappings merge by key (a class's settings over the
    packaged class's, plans, context windows, extraction patterns), null removes a
    packaged entry, a list (`rules`) replaces the packaged one."""
    write_config(tmp_path, "simulator", "sqlite:///a.db")
    policy = tmp_path / "policies" / POLICY_FILE
    policy.write_text("defaults: {quota_tokens: 3000}\n")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert cli_logic(["check-config", "--config", str(tmp_path / "config.yaml")]) == 0
    shipped = load_policies(DEFAULT_POLICY.parent)
    policies = load_policies(policy.parent)
    assert policies.resolve("-", "support", "m").quota_tokens == 3000  # support sets none
    assert policies.resolve("-", "dispute", "m") == shipped.resolve("-", "dispute", "m")
    assert policies.resolve("pro", "technical", "m").quota_tokens == 4000  # the packaged plan
    assert policies.context_window("local-llama") == 32000
    assert (policies.file.rules, policies.file.extraction) == (
        shipped.file.rules,
        shipped.file.extraction,
    )

    policy.write_text(
        "classes: {dispute: {turn_ceiling: 8}, vip: {priority: 60}}\n"
        "plans: {pro: {classes: {support: {quota_tokens: 2600}}}}\n"
        "default_class: support\n"
        "context_windows: {my-model: 16000}\n"
        "extraction: {sku: null, ticket: {regex: '\\bTKT-\\d+\\b'}}\n"
        "rules: [{class: vip, keywords: [vip]}]\n"
    )
    policies = load_policies(policy.parent)
    dispute = policies.resolve("-", "dispute", "m")
    assert (dispute.turn_ceiling, dispute.quota_tokens, dispute.escalation_action) == (
        8,
        3500,
        "instruct",
    )
    assert policies.resolve("pro", "support", "m").quota_tokens == 2600
    assert policies.resolve("pro", "technical", "m").quota_tokens == 4000
    assert policies.file.default_class == "support" and "vip" in policies.file.classes
    assert (policies.context_window("my-model"), policies.context_window("gpt-4o")) == (
        16000,
        128000,
    )
    assert set(policies.file.extraction) == set(shipped.file.extraction) - {"sku"} | {"ticket"}
    assert [rule.to_class for rule in policies.file.rules] == ["vip"]


def test_schemas_are_current() -> None:
    from gateway.context.retention import RetentionFile, load_retention
    from gateway.spend.ceilings import SpendFile, load_spend

    schema = json.loads((REPO / "policies" / "schema" / "context.schema.json").read_text())
    assert schema == policy_schema()
    schema = json.loads((REPO / "policies" / "schema" / "spend.schema.json").read_text())
    assert schema == SpendFile.model_json_schema(by_alias=True)
    assert load_spend(REPO / "policies").file.plans["pro"].degrade_to == "gpt-4o-mini"
    schema = json.loads((REPO / "policies" / "schema" / "retention.schema.json").read_text())
    assert schema == RetentionFile.model_json_schema(by_alias=True)
    shipped = load_retention(REPO / "policies").of("basic")
    assert (shipped.conversation_s, shipped.facts_s, shipped.episodes) == (30 * 86400, None, 50)


def test_check_config_rejects_patterns_that_cannot_run_in_linear_time(tmp_path: Path) -> None:
    """Operator patterns are RE2 (linear time, issue 8): lookbehind or a backreference is
    an error naming the file and the key, at check-config, not a stall at request time."""
    import yaml

    _policy_dir(tmp_path, {"extraction.email.regex": r"(?<=mail: )\S+"})
    path = tmp_path / "policies" / "context.yaml"
    policy = yaml.safe_load(path.read_text())
    policy["rules"][1]["regex"] = [r"(\w+) \1"]
    path.write_text(yaml.safe_dump(policy))
    run = subprocess.run(  # noqa: PLW1510 - the exit code is asserted
        [
            sys.executable,
            "-m",
            "gateway",
            "check-config",
            "--config",
            str(tmp_path / "config.yaml"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 1
    assert "context.yaml: extraction.email.regex:" in run.stderr
    assert "context.yaml: rules.1.regex:" in run.stderr
    assert run.stderr.count("not a valid RE2 regex") == 2, run.stderr


def test_rule_regexes_match_case_insensitively_with_re2() -> None:
    policy = load_policies(REPO / "policies").file
    classifier = Classifier.from_policy(policy)
    found = classifier.classify(
        header=None,
        channel=None,
        model="m",
        user_texts=["We get ERROR CODE 502 from you"],
        previous=None,
    )
    assert found == "technical"


def test_check_config_says_which_packaged_entries_a_stated_section_gets_back(
    tmp_path: Path,
) -> None:
    """A copy of context.yaml made before the file was layered, that deleted the `email`
    pattern to stop emails being kept, gets it back: check-config names it, and what the
    file drops with null or does not state a section of is not named."""
    write_config(tmp_path, "simulator", "sqlite:///a.db")
    policy = tmp_path / "policies" / POLICY_FILE
    shipped = yaml.safe_load(DEFAULT_POLICY.read_text())
    kept = {k: v for k, v in shipped["extraction"].items() if k not in ("email", "sku")}
    policy.write_text(yaml.safe_dump({"extraction": {**kept, "sku": None}}))
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        assert cli_logic(["check-config", "--config", str(tmp_path / "config.yaml")]) == 0
    notes = [line for line in err.getvalue().splitlines() if "packaged one applies" in line]
    assert len(notes) == 1 and "extraction.email" in notes[0]
    assert "email" in load_policies(policy.parent).file.extraction


@pytest.mark.parametrize(
    ("said", "sums"),
    [
        ("a fatura veio R$ 1.234,56 este mês", ["R$ 1.234,56"]),
        ("Total: R$ 159,90, vence dia 20", ["R$ 159,90"]),
        ("I paid $1,234.56, then US$ 12.00.", ["$1,234.56", "US$ 12.00"]),
        ("son 1.234,56 BRL o € 30,10", ["1.234,56 BRL", "€ 30,10"]),
        ("paguei r$ 50,00 no boleto", ["r$ 50,00"]),  # the review of ea467f5
        ("pagué MX$ 1.234,50 y C$ 45.00", ["MX$ 1.234,50", "C$ 45.00"]),
        ("o total foi R$ 1 234,56, e R$ 50 300 pessoas", ["R$ 1 234,56", "R$ 50"]),
    ],
)
def test_the_packaged_amount_pattern_reads_a_sum_whole(said: str, sums: list[str]) -> None:
    """Its currency, thousands and cents as pt, es and en write them: 'R$ 1.234,56' was
    read '$ 1.23' (and shown to the model so, a dollar sum), 'R$ 159,90,' '$ 159,90,'."""
    regex = load_policies(DEFAULT_POLICY.parent).file.extraction["amount"].regex
    assert [m.group(0) for m in compile_linear(regex).finditer(said)] == sums
