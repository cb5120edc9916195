"""Durations as the scenario format writes them: ``"20ms"``, ``"1.5s"``,
``"250us"``, ``"100ns"``. The parser is the core's (``schedlab.native``);
Python keeps only the formatting it needs (the ``[[experiment.derive]]``
bracket)."""

from __future__ import annotations

from schedlab import native

__all__ = ["format_duration_ms", "parse_duration_ns"]


def parse_duration_ns(text: str) -> int:
    """``"1.5s"`` -> 1_500_000_000, by the core's parser. Raises ``ValueError``
    saying what is wrong and naming the accepted units."""
    return native.parse_duration_ns(text)


def format_duration_ms(ms: int) -> str:
    """An integer number of milliseconds as a scenario duration string."""
    return f"{ms}ms"
