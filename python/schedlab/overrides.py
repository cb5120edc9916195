"""Overrides: ``--set key=value`` on the command line, ``set = {...}`` in a
``[[variant]]``, ``quick_set`` and derived values, all become the list of
``(dotted key, TOML literal)`` pairs that ``schedlab._native.run`` applies.

Key syntax is TOML's dotted-key syntax: bare segments (``task.0.nice``) or
quoted ones, where a quoted segment is one key even if it contains dots
(``kernel.sysctl."kernel.sched_migration_cost_ns"``). Array elements are
addressed by index or by their ``name`` key (``task.ktask.count``).

As a convenience, everything after ``kernel.sysctl.`` is one sysctl name, so
``kernel.sysctl.kernel.sched_migration_cost_ns`` is quoted for the user.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Union

from schedlab._compat import tomllib
from schedlab.errors import UsageError

__all__ = [
    "Override",
    "OverridesLike",
    "cli_value_literal",
    "flatten_set_table",
    "format_key",
    "normalize_key",
    "normalize_overrides",
    "parse_set_arg",
    "split_key",
    "toml_literal",
]

#: One override as the native module takes it: (dotted key, TOML literal text).
Override = tuple[str, str]

#: What the Python API accepts: a mapping or pairs of key -> Python value.
OverridesLike = Union[Mapping[str, object], Sequence[tuple[str, object]]]

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")

# Top-level scenario sections. In a `set = { ... }` table a bare section name
# whose value is a table was written with TOML dotted keys
# (`{ kernel.ktask.helper_nice = 19 }` parses as nested tables), so it is
# flattened back into one path per leaf. Replacing a whole section through an
# override is never what is meant.
_SECTIONS = frozenset({"machine", "kernel", "measure", "task"})


def split_key(key: str) -> list[str]:
    """``'kernel.sysctl."a.b"'`` -> ``["kernel", "sysctl", "a.b"]``.

    Raises ``ValueError`` with a message saying what is accepted.
    """
    segments: list[str] = []
    i, n = 0, len(key)
    while True:
        while i < n and key[i] in " \t":
            i += 1
        if i >= n:
            raise ValueError(f"key {key!r} has an empty segment; {_KEY_ACCEPTED}")
        c = key[i]
        if c in "\"'":
            seg, i = _quoted_segment(key, i)
        else:
            j = i
            while j < n and key[j] not in ". \t":
                j += 1
            seg = key[i:j]
            if not _BARE.match(seg):
                raise ValueError(f"key {key!r} has a bad segment {seg!r}; {_KEY_ACCEPTED}")
            i = j
        segments.append(seg)
        while i < n and key[i] in " \t":
            i += 1
        if i >= n:
            return segments
        if key[i] != ".":
            raise ValueError(f"key {key!r}: unexpected {key[i]!r}; {_KEY_ACCEPTED}")
        i += 1


_KEY_ACCEPTED = (
    "accepted: dot-separated segments of letters, digits, '_' and '-', or quoted "
    'segments (task.0.nice, task.ktask.count, kernel.sysctl."kernel.sched_migration_cost_ns")'
)

_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}


def _quoted_segment(key: str, i: int) -> tuple[str, int]:
    quote = key[i]
    i += 1
    out: list[str] = []
    while i < len(key):
        c = key[i]
        if c == quote:
            return "".join(out), i + 1
        if c == "\\" and quote == '"':
            if i + 1 >= len(key) or key[i + 1] not in _ESCAPES:
                raise ValueError(f"key {key!r}: bad escape in a quoted segment; {_KEY_ACCEPTED}")
            out.append(_ESCAPES[key[i + 1]])
            i += 2
            continue
        out.append(c)
        i += 1
    raise ValueError(f"key {key!r}: unterminated quote; {_KEY_ACCEPTED}")


def _quote(text: str) -> str:
    """A TOML basic string."""
    out = ['"']
    for c in text:
        if c == '"':
            out.append('\\"')
        elif c == "\\":
            out.append("\\\\")
        elif c == "\n":
            out.append("\\n")
        elif c == "\t":
            out.append("\\t")
        elif c == "\r":
            out.append("\\r")
        elif ord(c) < 0x20 or ord(c) == 0x7F:
            out.append(f"\\u{ord(c):04X}")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def format_key(segments: Iterable[str]) -> str:
    """``["kernel", "sysctl", "a.b"]`` -> ``'kernel.sysctl."a.b"'``."""
    return ".".join(s if _BARE.match(s) else _quote(s) for s in segments)


def normalize_key(key: str) -> str:
    """Canonical form of an override key (see the module doc for the sysctl rule)."""
    return format_key(_sysctl_merge(split_key(key)))


def _sysctl_merge(segments: list[str]) -> list[str]:
    if len(segments) > 3 and segments[0] == "kernel" and segments[1] == "sysctl":
        return [*segments[:2], ".".join(segments[2:])]
    return segments


def toml_literal(value: object) -> str:
    """A Python value as TOML literal text: ``19`` -> ``19``, ``"1s"`` -> ``'"1s"'``,
    ``[1, 2]`` -> ``[1, 2]``, ``{"exp": "1ms"}`` -> ``{ exp = "1ms" }``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, Mapping):
        items = ", ".join(f"{format_key([str(k)])} = {toml_literal(v)}" for k, v in value.items())
        return "{ " + items + " }" if items else "{}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_literal(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} {value!r} as a TOML value")


def cli_value_literal(text: str) -> str:
    """The value of ``--set key=value``: passed through when it is a TOML literal
    (``19``, ``true``, ``[0, 1]``, ``"x"``, ``{ exp = "1ms" }``), otherwise
    quoted as a string (``20ms`` -> ``"20ms"``, ``0-3`` -> ``"0-3"``)."""
    try:
        doc = tomllib.loads("v = " + text)
    except tomllib.TOMLDecodeError:
        return _quote(text)
    if list(doc) != ["v"]:  # e.g. "1\nw = 2": not one value
        return _quote(text)
    return text.strip()


#: Keys whose value is always a string, taken as written on the command line.
_STRING_KEYS = frozenset({"kernel.version"})


def parse_set_arg(arg: str) -> Override:
    """``"task.0.nice=19"`` -> ``("task.0.nice", "19")``; raises ``UsageError`` (SL001)."""
    eq = _first_unquoted_eq(arg)
    if eq is None:
        raise UsageError(
            "SL001",
            f"--set {arg!r}: expected KEY=VALUE; accepted: e.g. --set task.0.nice=19, "
            "--set measure.duration=2s, --set 'kernel.sysctl.\"kernel.sched_migration_cost_ns\"=0'",
        )
    key, value = arg[:eq].strip(), arg[eq + 1 :]
    try:
        key = normalize_key(key)
        if key in _STRING_KEYS and not value.strip().startswith(('"', "'")):
            # A version reads as a TOML float (6.1), and 6.10 would become 6.1.
            return key, _quote(value.strip())
        return key, cli_value_literal(value)
    except ValueError as e:
        raise UsageError("SL001", f"--set {arg!r}: {e}") from None


def _first_unquoted_eq(text: str) -> int | None:
    quote: str | None = None
    for i, c in enumerate(text):
        if quote is not None:
            if c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c == "=":
            return i
    return None


def flatten_set_table(table: Mapping[str, object]) -> list[tuple[str, object]]:
    """The pairs of a ``set = { ... }`` table, keys in canonical form.

    ``{"task.ktask.count": 0}`` -> ``[("task.ktask.count", 0)]``;
    ``{"kernel": {"ktask": {"helper_nice": 19}}}`` (from TOML dotted keys) ->
    ``[("kernel.ktask.helper_nice", 19)]``. A table value under a quoted full
    path (``"task.0.program.0.run" = { exp = "1ms" }``) stays a table.
    Raises ``ValueError`` for a malformed key.
    """
    out: list[tuple[str, object]] = []
    for key, value in table.items():
        segments = split_key(key)
        if len(segments) == 1 and segments[0] in _SECTIONS and isinstance(value, Mapping):
            _flatten_into(out, segments, value)
        else:
            out.append((format_key(_sysctl_merge(segments)), value))
    return out


def _flatten_into(out: list[tuple[str, object]], prefix: list[str], table: Mapping[str, object]) -> None:
    for k, v in table.items():
        path = [*prefix, str(k)]
        if isinstance(v, Mapping):
            _flatten_into(out, path, v)
        else:
            # kernel.sysctl.kernel.sched_migration_cost_ns (nested by TOML's
            # dotted keys) is one sysctl name: merge it back.
            out.append((format_key(_sysctl_merge(path)), v))


def normalize_overrides(overrides: OverridesLike | None) -> list[Override]:
    """The Python API's overrides (a mapping or pairs, Python values) as native pairs."""
    if overrides is None:
        return []
    pairs: Iterable[tuple[str, object]]
    pairs = overrides.items() if isinstance(overrides, Mapping) else overrides
    out: list[Override] = []
    for key, value in pairs:
        try:
            out.append((normalize_key(key), toml_literal(value)))
        except (ValueError, TypeError) as e:
            raise UsageError("SL001", f"override {key!r}: {e}") from None
    return out
