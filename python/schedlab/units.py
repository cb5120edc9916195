"""Durations as the scenario format writes them: ``"20ms"``, ``"1.5s"``,
``"250us"``, ``"100ns"``. The core parses durations itself; Python needs them
only where it computes one (the ``[[experiment.derive]]`` bracket)."""

from __future__ import annotations

import re

__all__ = ["NS_PER_UNIT", "format_duration_ms", "parse_duration_ns"]

NS_PER_UNIT: dict[str, int] = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}

_DURATION = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*(ns|us|ms|s)\s*$")


def parse_duration_ns(text: str) -> int:
    """``"1.5s"`` -> 1_500_000_000. Raises ``ValueError`` naming the accepted units."""
    m = _DURATION.match(text)
    if m is None:
        raise ValueError(
            f'{text!r} is not a duration; accepted: a number with a unit ns, us, ms or s (e.g. "20ms", "1.5s")'
        )
    number, unit = m.group(1), m.group(2)
    # Decimal arithmetic on the digits keeps "0.1s" exact (no float rounding).
    whole, _, frac = number.partition(".")
    scale = NS_PER_UNIT[unit]
    ns = int(whole or "0") * scale
    if frac:
        ns += int(frac) * scale // 10 ** len(frac)
    return ns


def format_duration_ms(ms: int) -> str:
    """An integer number of milliseconds as a scenario duration string."""
    return f"{ms}ms"
