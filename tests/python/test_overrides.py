"""Override keys and values: --set parsing, TOML literal conversion, quoting
(the grammar and the value writer are the core's, called through the
binding)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _toml import tomllib
from schedlab.errors import UsageError
from schedlab.overrides import (
    cli_value_literal,
    format_key,
    normalize_key,
    normalize_overrides,
    parse_set_arg,
    split_key,
    toml_literal,
)

pytestmark = pytest.mark.native


@pytest.mark.parametrize(
    ("key", "segments"),
    [
        ("task.0.nice", ["task", "0", "nice"]),
        ("task.ktask.count", ["task", "ktask", "count"]),
        ('kernel.sysctl."kernel.sched_migration_cost_ns"', ["kernel", "sysctl", "kernel.sched_migration_cost_ns"]),
        ("kernel.sysctl.'vm.kswapd_threads'", ["kernel", "sysctl", "vm.kswapd_threads"]),
        ('a . "b c" . d', ["a", "b c", "d"]),
        ('"with \\"quote\\""', ['with "quote"']),
        ("task.stress-ng.nice", ["task", "stress-ng", "nice"]),
    ],
)
def test_split_key(key: str, segments: list[str]) -> None:
    assert split_key(key) == segments


@pytest.mark.parametrize("key", ["", "a..b", "a.", ".a", 'a."b', "a.b c", "a/b", "a.$"])
def test_split_key_rejects(key: str) -> None:
    with pytest.raises(ValueError, match="accepted"):
        split_key(key)


def test_format_key_quotes_only_what_needs_it() -> None:
    assert format_key(["task", "0", "nice"]) == "task.0.nice"
    assert format_key(["kernel", "sysctl", "kernel.x"]) == 'kernel.sysctl."kernel.x"'
    assert format_key(["a b", 'q"']) == '"a b"."q\\""'


@pytest.mark.parametrize(
    ("key", "canonical"),
    [
        ("task.0.nice", "task.0.nice"),
        # Everything after kernel.sysctl. is one sysctl name.
        ("kernel.sysctl.kernel.sched_migration_cost_ns", 'kernel.sysctl."kernel.sched_migration_cost_ns"'),
        ('kernel.sysctl."kernel.sched_migration_cost_ns"', 'kernel.sysctl."kernel.sched_migration_cost_ns"'),
        ("kernel.sysctl.vm.watermark_scale_factor", 'kernel.sysctl."vm.watermark_scale_factor"'),
        ("kernel.sysctl", "kernel.sysctl"),
        ("kernel.ktask.helper_nice", "kernel.ktask.helper_nice"),
        ('"task".0 . nice', "task.0.nice"),
    ],
)
def test_normalize_key(key: str, canonical: str) -> None:
    assert normalize_key(key) == canonical


@pytest.mark.parametrize(
    ("text", "literal"),
    [
        ("19", "19"),
        ("-20", "-20"),
        ("true", "true"),
        ("1.5", "1.5"),
        ("[0, 1, 2]", "[0, 1, 2]"),
        ('"20ms"', '"20ms"'),
        ('{ exp = "1ms" }', '{ exp = "1ms" }'),
        (" 7 ", "7"),
        # Not TOML literals: become strings.
        ("20ms", '"20ms"'),
        ("0-3,6", '"0-3,6"'),
        ("SCHED_BATCH", '"SCHED_BATCH"'),
        ("NO_START_DEBIT", '"NO_START_DEBIT"'),
        ("", '""'),
        ('say "hi"', '"say \\"hi\\""'),
        ("1\nw = 2", '"1\\nw = 2"'),  # one value only: no injection of a second key
    ],
)
def test_cli_value_literal(text: str, literal: str) -> None:
    assert cli_value_literal(text) == literal
    # Whatever comes out is one valid TOML value.
    assert list(tomllib.loads("v = " + literal)) == ["v"]


def test_parse_set_arg() -> None:
    assert parse_set_arg("task.0.nice=19") == ("task.0.nice", "19")
    assert parse_set_arg("measure.duration=2s") == ("measure.duration", '"2s"')
    assert parse_set_arg("task.0.cpus=0-3") == ("task.0.cpus", '"0-3"')
    assert parse_set_arg("kernel.sysctl.kernel.sched_migration_cost_ns=0") == (
        'kernel.sysctl."kernel.sched_migration_cost_ns"',
        "0",
    )
    assert parse_set_arg('kernel.sysctl."a=b"=1') == ('kernel.sysctl."a=b"', "1")
    assert parse_set_arg("name=a=b") == ("name", '"a=b"')
    # A kernel version is a string as typed, never the float 6.1 (or 6.10 -> 6.1).
    assert parse_set_arg("kernel.version=6.10") == ("kernel.version", '"6.10"')
    assert parse_set_arg("kernel.version=2.6.25") == ("kernel.version", '"2.6.25"')
    assert parse_set_arg('kernel.version="6.1"') == ("kernel.version", '"6.1"')


@pytest.mark.parametrize("arg", ["task.0.nice", "=19", "a..b=1", 'a."b=1'])
def test_parse_set_arg_errors(arg: str) -> None:
    with pytest.raises(UsageError) as e:
        parse_set_arg(arg)
    assert e.value.code == "SL001"
    assert "--set" in str(e.value)


@pytest.mark.parametrize(
    ("value", "literal"),
    [
        (True, "true"),
        (False, "false"),
        (19, "19"),
        (0.5, "0.5"),
        (float("inf"), "inf"),
        ("1s", '"1s"'),
        ([0, 1], "[0, 1]"),
        ({"exp": "1ms"}, '{ exp = "1ms" }'),
        ({"uniform": ["1ms", "3ms"]}, '{ uniform = ["1ms", "3ms"] }'),
        ({"a.b": 1}, '{ "a.b" = 1 }'),
        ({}, "{}"),
    ],
)
def test_toml_literal(value: object, literal: str) -> None:
    assert toml_literal(value) == literal
    assert tomllib.loads("v = " + literal)["v"] == value


def test_toml_literal_rejects_other_types() -> None:
    with pytest.raises(TypeError, match="cannot write object <object"):
        toml_literal(object())
    with pytest.raises(TypeError, match="cannot write NoneType None"):
        toml_literal([1, None])
    with pytest.raises(ValueError, match="beyond 64 bits"):
        toml_literal(2**63)
    deep: list[Any] = []
    for _ in range(200):
        deep = [deep]
    with pytest.raises(ValueError, match="nested deeper"):
        toml_literal(deep)


@settings(max_examples=2000, deadline=None)
@given(st.floats())
def test_the_core_writes_a_float_as_repr_does(x: float) -> None:
    """The core's value writer (doc.rs) is the one toml_literal calls: its
    floats are repr's text, ties included (562949953421312.25 -> ...2)."""
    assert toml_literal(x) == (repr(x) if math.isfinite(x) else str(x))
    assert toml_literal(562949953421312.2) == "562949953421312.2"


def test_toml_literal_writes_dates_and_keeps_order() -> None:
    import datetime

    assert toml_literal(datetime.date(2026, 11, 25)) == "2026-11-25"
    assert toml_literal((1, "a")) == '[1, "a"]'
    assert toml_literal({"z": 1, 2: [True]}) == "{ z = 1, 2 = [true] }"


def test_normalize_overrides() -> None:
    assert normalize_overrides(None) == []
    assert normalize_overrides({"task.0.nice": 19, "measure.duration": "2s"}) == [
        ("task.0.nice", "19"),
        ("measure.duration", '"2s"'),
    ]
    assert normalize_overrides([("kernel.sysctl.kernel.x", 1), ("task.0.cpus", [0, 1])]) == [
        ('kernel.sysctl."kernel.x"', "1"),
        ("task.0.cpus", "[0, 1]"),
    ]
    with pytest.raises(UsageError):
        normalize_overrides({"a..b": 1})
    with pytest.raises(UsageError):
        normalize_overrides({"a": object()})
