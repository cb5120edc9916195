"""schedlab: a deterministic simulator of the Linux CPU scheduler.

The engine is Rust (``schedlab._native``, built by ``make build``); this
package is the front end: the CLI, experiments (variants x seeds, derived
workload sizes, acceptance bands) and text reports.

    >>> import schedlab
    >>> report = schedlab.run_scenario("ktask-nice", seed=1, overrides={"task.ktask.count": 0})
    >>> report = schedlab.run_scenario(text=open("my.toml").read())
    >>> report["groups"][0]["elapsed_s"]
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from schedlab.args import check_flag, check_output_path, check_overrides_shape, check_seed, cut
from schedlab.errors import (
    InternalError,
    InvariantError,
    NotModelledError,
    ResourceError,
    ScenarioError,
    SchedlabError,
    TopologyError,
    UsageError,
)
from schedlab.overrides import OverridesLike

if TYPE_CHECKING:
    from schedlab.report_types import Report

from schedlab._version import __version__

__all__ = [
    "InternalError",
    "InvariantError",
    "NotModelledError",
    "ResourceError",
    "ScenarioError",
    "SchedlabError",
    "TopologyError",
    "UsageError",
    "__version__",
    "check_scenario",
    "load",
    "load_sweep",
    "run_scenario",
]

ScenarioLike = Union[str, "os.PathLike[str]"]


def _scenario_text(scenario: object, text: object) -> tuple[str, str]:
    """(text, source) from exactly one of ``scenario`` (a path or a bundled
    name) and ``text`` (the TOML itself). A path is always a path, whatever
    characters it holds; a multi-line string passed as a path is refused with
    a pointer to ``text=``."""
    from schedlab.scenarios import resolve, scenario_text

    if text is not None:
        if scenario is not None:
            raise UsageError("SL001", "scenario and text: give one of them; accepted: a path or name, or text=TOML")
        if not isinstance(text, str):
            raise UsageError("SL001", f"text={cut(text)}: accepted: the scenario's TOML as a str")
        return text, "<string>"
    if scenario is None:
        raise UsageError("SL001", "no scenario; accepted: a path or a bundled name, or text=TOML")
    if isinstance(scenario, os.PathLike):
        path = Path(os.fspath(scenario))
        return scenario_text(path), str(path)
    if not isinstance(scenario, str):
        raise UsageError(
            "SL001",
            f"scenario={cut(scenario)}: accepted: a path (str or pathlib.Path) or a bundled name, "
            f"not {type(scenario).__name__}",
        )
    if "\n" in scenario:
        raise UsageError(
            "SL001",
            f"scenario={cut(scenario)}: looks like TOML text, not a path; accepted: a path or a bundled name, "
            "or the text as text=...",
        )
    path = resolve(scenario)
    return scenario_text(path), str(path)


def run_scenario(
    scenario: ScenarioLike | None = None,
    seed: int = 1,
    overrides: OverridesLike | None = None,
    check: bool = False,
    trace: ScenarioLike | None = None,
    perfetto: ScenarioLike | None = None,
    *,
    text: str | None = None,
    strict: bool = False,
) -> Report:
    """Simulate one scenario and return its report (the JSON of ``schedlab run --json``;
    every key in docs/report.md, typed as ``schedlab.report_types.Report``).

    ``scenario`` is a path or a bundled name; the TOML itself goes in ``text``.
    ``seed`` is an integer from 0 to 2**64-1. ``overrides`` maps dotted keys to
    Python values (``{"task.0.nice": 19, "measure.duration": "2s"}``) or is a
    list of such pairs, applied in order. ``check`` runs the invariant
    checker. ``trace`` and ``perfetto`` are paths for the sched tracepoints as
    ftrace text and as a Perfetto protobuf trace (checked for writability
    before the run). The report's ``warnings`` list what went wrong without
    stopping the run (a deadlock, measure.limit reached); ``strict`` makes
    the first of them an ``InvariantError``. Raises ``SchedlabError``
    subclasses, ``UsageError`` naming the argument for a wrong argument.
    """
    from schedlab import native
    from schedlab.overrides import normalize_overrides

    seed = check_seed(seed)
    check = check_flag(check, "check")
    strict = check_flag(strict, "strict")
    check_overrides_shape(overrides)
    trace_path = check_output_path(trace, "trace")
    perfetto_path = check_output_path(perfetto, "perfetto")
    source_text, source = _scenario_text(scenario, text)
    pairs = normalize_overrides(overrides)
    return native.run(source_text, source, seed, pairs, check, trace_path, perfetto_path, strict=strict)


def check_scenario(
    scenario: ScenarioLike | None = None,
    overrides: OverridesLike | None = None,
    *,
    text: str | None = None,
) -> dict[str, Any]:
    """Parse and validate only; returns ``{"name", "machine", "kernel", "tasks", "notes"}``.
    ``scenario``, ``text`` and ``overrides`` as for ``run_scenario``."""
    from schedlab import native
    from schedlab.overrides import normalize_overrides

    check_overrides_shape(overrides)
    source_text, source = _scenario_text(scenario, text)
    return native.check(source_text, source, normalize_overrides(overrides))


def load(src: Any, *, backend: str | None = None) -> Any:
    """A report (a ``--json`` file, or what :func:`run_scenario` returns) or an
    ftrace text trace as DataFrames, pandas or polars (``schedlab.frames``)."""
    from schedlab.frames import load as _load

    return _load(src, backend=backend)


def load_sweep(path: Any, *, backend: str | None = None) -> Any:
    """A ``schedlab sweep`` results directory as one DataFrame (``schedlab.sweep``)."""
    from schedlab.sweep import load_sweep as _load_sweep

    return _load_sweep(path, backend=backend)
