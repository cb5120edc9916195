"""Overrides: ``--set key=value`` on the command line, ``set = {...}`` in a
``[[variant]]``, ``quick_set`` and derived values, all become the list of
``(dotted key, TOML literal)`` pairs that ``schedlab._native.run`` applies.

The grammar lives once, in the core (``scenario/overrides.rs``), and so
does the writer of a value as TOML text (``scenario/doc.rs``); these
functions call them through the binding.

Key syntax is TOML's dotted-key syntax: bare segments (``task.0.nice``) or
quoted ones, where a quoted segment is one key even if it contains dots
(``kernel.sysctl."kernel.sched_migration_cost_ns"``). Array elements are
addressed by index or by their ``name`` key (``task.ktask.count``).

As a convenience, everything after ``kernel.sysctl.`` is one sysctl name, so
``kernel.sysctl.kernel.sched_migration_cost_ns`` is quoted for the user.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Union

from schedlab import native
from schedlab.errors import UsageError

__all__ = [
    "Override",
    "OverridesLike",
    "cli_value_literal",
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


def _native() -> Any:
    return native.load()


def split_key(key: str) -> list[str]:
    """``'kernel.sysctl."a.b"'`` -> ``["kernel", "sysctl", "a.b"]``.

    Raises ``ValueError`` with a message saying what is accepted."""
    return list(_native().split_key(key))


def format_key(segments: Iterable[str]) -> str:
    """``["kernel", "sysctl", "a.b"]`` -> ``'kernel.sysctl."a.b"'``."""
    return str(_native().format_key(list(segments)))


def normalize_key(key: str) -> str:
    """Canonical form of an override key (see the module doc for the sysctl rule)."""
    return str(_native().normalize_key(key))


def toml_literal(value: object) -> str:
    """A Python value as TOML literal text: ``19`` -> ``19``, ``"1s"`` -> ``'"1s"'``,
    ``[1, 2]`` -> ``[1, 2]``, ``{"exp": "1ms"}`` -> ``{ exp = "1ms" }``, a float
    as ``repr`` writes it, a date or time as ``isoformat``. Written by the
    core's one value writer (the text its own readers hand a run).
    ``TypeError`` for another type; ``ValueError`` for an integer beyond 64
    bits or nesting past what a scenario's TOML holds."""
    return str(_native().toml_literal(value))


def cli_value_literal(text: str) -> str:
    """The value of ``--set key=value``: passed through when it is a TOML literal
    (``19``, ``true``, ``[0, 1]``, ``"x"``, ``{ exp = "1ms" }``), otherwise
    quoted as a string (``20ms`` -> ``"20ms"``, ``0-3`` -> ``"0-3"``)."""
    return str(_native().value_literal(text))


def parse_set_arg(arg: str) -> Override:
    """``"task.0.nice=19"`` -> ``("task.0.nice", "19")``; raises ``UsageError`` (SL001)."""
    key, value = _native().parse_set(arg)
    return str(key), str(value)


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
