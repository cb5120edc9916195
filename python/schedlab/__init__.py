"""schedlab: a deterministic simulator of the Linux CPU scheduler.

The engine is Rust (``schedlab._native``, built by ``make build``); this
package is the front end: the CLI, experiments (variants x seeds, derived
workload sizes, acceptance bands) and text reports.

    >>> import schedlab
    >>> report = schedlab.run_scenario("ktask-nice", seed=1, overrides={"task.ktask.count": 0})
    >>> report["groups"][0]["elapsed_s"]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Union

from schedlab.errors import (
    InternalError,
    InvariantError,
    NotModelledError,
    ScenarioError,
    SchedlabError,
    TopologyError,
    UsageError,
)
from schedlab.overrides import OverridesLike
from schedlab.report_types import Report

__version__ = "0.1.0"

__all__ = [
    "InternalError",
    "InvariantError",
    "NotModelledError",
    "ScenarioError",
    "SchedlabError",
    "TopologyError",
    "UsageError",
    "__version__",
    "check_scenario",
    "run_scenario",
]

ScenarioLike = Union[str, Path]


def _scenario_text(path_or_text: ScenarioLike) -> tuple[str, str]:
    """(text, source). A ``Path``, or a one-line string without ``=``, is a file
    path or a bundled scenario name; any other string is the TOML text itself."""
    from schedlab.scenarios import read_text, resolve

    if isinstance(path_or_text, Path):
        return read_text(path_or_text), str(path_or_text)
    if "\n" in path_or_text or "=" in path_or_text:
        return path_or_text, "<string>"
    path = resolve(path_or_text)
    return read_text(path), str(path)


def run_scenario(
    path_or_text: ScenarioLike,
    seed: int = 1,
    overrides: OverridesLike | None = None,
    check: bool = False,
    trace: str | None = None,
    perfetto: str | None = None,
) -> Report:
    """Simulate one scenario and return its report (the JSON of ``schedlab run --json``;
    every key in docs/report.md, typed as ``schedlab.report_types.Report``).

    ``overrides`` maps dotted keys to Python values (``{"task.0.nice": 19,
    "measure.duration": "2s"}``) or is a list of such pairs, applied in order.
    ``check`` runs the invariant checker. ``trace`` and ``perfetto`` are paths
    for the sched tracepoints as ftrace text and as a Perfetto protobuf trace.
    Raises ``SchedlabError`` subclasses.
    """
    from schedlab import native
    from schedlab.overrides import normalize_overrides

    text, source = _scenario_text(path_or_text)
    return native.run(text, source, seed, normalize_overrides(overrides), check, trace, perfetto)


def check_scenario(path_or_text: ScenarioLike, overrides: OverridesLike | None = None) -> dict[str, Any]:
    """Parse and validate only; returns ``{"name", "machine", "kernel", "tasks"}``."""
    from schedlab import native
    from schedlab.overrides import normalize_overrides

    text, source = _scenario_text(path_or_text)
    return native.check(text, source, normalize_overrides(overrides))
