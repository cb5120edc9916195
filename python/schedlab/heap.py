"""The heap budget of a run (the core's engine/heap.rs).

The native module counts the bytes its Rust heap holds; a run stops with
SL210 (``ResourceError``) when they pass the budget, so an allocation never
fails and Rust never aborts the interpreter. The budget is
``SCHEDLAB_MEMORY_LIMIT`` (bytes, or with a unit: ``512MiB``, ``2GiB``,
``1.5G``) or, by default, 80 % of the memory this process may still take
when the run starts: ``MemAvailable`` in /proc/meminfo, or the cgroup's
``memory.max`` less its ``memory.current`` when that is smaller (a
container). ``SCHEDLAB_MEMORY_LIMIT=off`` turns the budget off.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from schedlab.errors import UsageError

__all__ = ["ENV", "heap_budget", "parse_bytes"]

ENV = "SCHEDLAB_MEMORY_LIMIT"
#: The share of the available memory a run may take by default.
DEFAULT_SHARE = 0.8
_UNITS = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12, "ki": 2**10, "mi": 2**20, "gi": 2**30, "ti": 2**40}


def parse_bytes(text: str) -> int:
    """``"512MiB"`` -> 536870912; a plain number is bytes. ``ValueError`` if malformed."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([kmgt]i?)?b?\s*", text, re.IGNORECASE)
    if not m:
        raise ValueError(text)
    return int(float(m.group(1)) * _UNITS[(m.group(2) or "").lower()])


def _available() -> int | None:
    """Bytes this process may still take, or None where that is unknown."""
    try:
        meminfo = Path("/proc/meminfo").read_text()
    except OSError:
        return None
    m = re.search(r"^MemAvailable:\s+(\d+) kB", meminfo, re.MULTILINE)
    if not m:
        return None
    avail = int(m.group(1)) * 1024
    cg = Path("/sys/fs/cgroup")
    try:
        limit = (cg / "memory.max").read_text().strip()
        if limit != "max":
            avail = min(avail, max(0, int(limit) - int((cg / "memory.current").read_text())))
    except (OSError, ValueError):
        pass
    return avail


def heap_budget() -> int | None:
    """The budget for the next run in bytes, or None for no budget."""
    raw = os.environ.get(ENV)
    if raw is not None and raw.strip():
        if raw.strip().lower() == "off":
            return None
        try:
            n = parse_bytes(raw)
        except ValueError:
            raise UsageError(
                "SL001",
                f"{ENV}={raw[:80]!r}: not a size; accepted: bytes or a size with a unit (512MiB, 2GiB, 1.5G), or off",
            ) from None
        if n <= 0:
            raise UsageError("SL001", f"{ENV}={raw[:80]!r}: must be positive; accepted: a size such as 512MiB, or off")
        return n
    avail = _available()
    return None if avail is None else int(avail * DEFAULT_SHARE)
