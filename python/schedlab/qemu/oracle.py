"""The oracle directory: what ``make oracle-setup`` (scripts/oracle-setup)
unpacked into ``.oracle/`` (QEMU 10, Debian's 6.1, 6.12 and 6.18 kernels,
busybox-static), read from its ``manifest.json``; and which of its kernels
stands for a scenario's ``kernel.version``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from schedlab import native
from schedlab.errors import HostError, UsageError
from schedlab.kernels import ORACLE_KERNELS

__all__ = [
    "KERNELS",
    "Oracle",
    "OracleError",
    "find_oracle",
    "kernel_for_era",
    "kernel_for_summary",
    "kernel_for_version",
]

#: The kernels oracle-setup fetches: label -> what it stands for.
KERNELS = ORACLE_KERNELS
_SETUP_HINT = "run `make oracle-setup` in the schedlab checkout (or set SCHEDLAB_ORACLE to its .oracle directory)"

#: The QEMU oracle is missing, the guest timed out or printed no report: the
#: one SL300 class of schedlab.errors (``OracleError("SL300", message, tail)``).
OracleError = HostError


def kernel_for_era(fair: str) -> str:
    """The oracle kernel standing for a fair-class era: 6.1 for CFS, 6.12
    for EEVDF."""
    return "6.12" if fair == "eevdf" else "6.1"


def kernel_for_summary(summary: Mapping[str, Any]) -> str:
    """The oracle kernel for a scenario, from the core's summary of it
    (``native.check``: the version resolved, ``--set`` applied)."""
    return kernel_for_era(str((summary.get("kernel") or {}).get("fair", "cfs")))


def kernel_for_version(version: str) -> str:
    """The oracle kernel standing for a ``kernel.version``: the core reads the
    version and says its fair-class era (its mechanisms table holds the 6.6
    boundary). ``UsageError`` (SL001) if the core refuses the version."""
    try:
        info = native.kernel_version(str(version))
    except ValueError as e:
        raise UsageError("SL001", f"kernel version {e}") from None
    return kernel_for_era(str(info["fair"]))


@dataclass(frozen=True)
class Oracle:
    """What ``make oracle-setup`` unpacked (from .oracle/manifest.json)."""

    root: Path
    launcher: Path
    busybox: Path
    kernels: dict[str, Path]
    kernel_releases: dict[str, str]
    manifest: dict[str, Any] = field(repr=False)

    def kernel(self, label: str) -> Path:
        if label not in self.kernels:
            raise OracleError(
                "SL300", f"no kernel {label!r} in {self.root}; accepted: {', '.join(sorted(self.kernels))}"
            )
        return self.kernels[label]


def _default_oracle_dir() -> Path:
    env = os.environ.get("SCHEDLAB_ORACLE")
    if env:
        return Path(env)
    from schedlab._paths import checkout

    # `make oracle-setup` unpacks it into the checkout's .oracle/; an
    # installed wheel looks in the working directory.
    repo = checkout()
    return (repo if repo is not None else Path.cwd()) / ".oracle"


def find_oracle(directory: str | Path | None = None) -> Oracle:
    """The oracle in ``directory`` (default: $SCHEDLAB_ORACLE, else .oracle in
    the checkout). Raises ``OracleError`` saying to run make oracle-setup."""
    root = Path(directory) if directory is not None else _default_oracle_dir()
    mf = root / "manifest.json"
    if not mf.is_file():
        raise OracleError("SL300", f"the QEMU oracle is not set up ({mf} missing): {_SETUP_HINT}")
    try:
        doc = json.loads(mf.read_text())
        launcher = root / doc["launcher"]
        busybox = root / doc["busybox"]
        kernels = {k: root / v["vmlinuz"] for k, v in doc["kernels"].items()}
        releases = {k: str(v["release"]) for k, v in doc["kernels"].items()}
    except (ValueError, KeyError, TypeError) as e:
        raise OracleError("SL300", f"{mf} is unreadable ({e}): {_SETUP_HINT}") from None
    for p in [launcher, busybox, *kernels.values()]:
        if not p.is_file():
            raise OracleError("SL300", f"the QEMU oracle is incomplete ({p} missing): {_SETUP_HINT}")
    return Oracle(root, launcher, busybox, kernels, releases, doc)
