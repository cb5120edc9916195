"""The only door to ``schedlab._native``, the Rust core built by maturin.

The import is lazy so that ``schedlab --help`` and the pure Python parts work
before the extension is built (``schedlab list`` asks the core for each
file's title); a missing extension is an
``InternalError`` that says how to build it. Every call is wrapped so that
nothing but a ``SchedlabError`` leaves it (a Rust panic that the binding failed
to catch surfaces as ``pyo3_runtime.PanicException``, a ``BaseException``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar, cast

from schedlab.errors import InternalError, SchedlabError

if TYPE_CHECKING:  # the typed report costs 7 ms to import; the CLI does not need it
    from schedlab.overrides import Override
    from schedlab.report_types import Report

__all__ = [
    "ExperimentDoc",
    "SweepSpecDoc",
    "check",
    "experiment",
    "heading",
    "kernel_version",
    "load",
    "metrics",
    "parse_cpulist",
    "parse_duration_ns",
    "rtapp_import",
    "rtapp_loads",
    "run",
    "scenario_toml",
    "scenario_tree",
    "suite",
    "sweep_spec",
    "tolerance",
    "version",
]

_T = TypeVar("_T")

_BUILD_HINT = (
    "the native module schedlab._native is not built or not importable ({why}); "
    "run `make build` in the schedlab checkout (it creates .venv and runs "
    "`maturin develop --release`), then use .venv/bin/schedlab"
)


def load() -> ModuleType:
    """Import ``schedlab._native`` or raise ``InternalError`` (SL900) with a build hint."""
    try:
        from schedlab import _native
    except ImportError as e:
        raise InternalError("SL900", _BUILD_HINT.format(why=e)) from None
    return _native


def _guarded(call: Callable[[], _T]) -> _T:
    try:
        return call()
    except SchedlabError:
        raise
    except (KeyboardInterrupt, SystemExit, GeneratorExit):
        raise
    except BaseException as e:
        raise InternalError(
            "SL900", f"internal error (please report): native call failed: {type(e).__name__}: {e}"
        ) from e


def _parsed(call: Callable[[], _T]) -> _T:
    """A core parser's answer: its ``ValueError`` (what is wrong, what is
    accepted) passes through for the caller to word as its own error."""
    try:
        return _guarded(call)
    except InternalError as e:
        if isinstance(e.__cause__, ValueError):
            raise ValueError(str(e.__cause__)) from None
        raise


def _decode_any(text: str, what: str) -> Any:
    """The core's JSON answer as Python objects (the core's output, not a
    user's file: the core has already read and checked what the user wrote)."""
    try:
        return json.loads(text)
    except (TypeError, ValueError) as e:
        raise InternalError("SL900", f"internal error (please report): {what} is not JSON: {e}") from e


def _decode(text: str, what: str) -> dict[str, Any]:
    doc = _decode_any(text, what)
    if not isinstance(doc, dict):
        raise InternalError("SL900", f"internal error (please report): {what} is not a JSON object")
    return cast("dict[str, Any]", doc)


def run(
    text: str,
    source: str,
    seed: int,
    overrides: Sequence[Override],
    check: bool,
    trace: str | None = None,
    perfetto: str | None = None,
    *,
    strict: bool = False,
    progress: Any = None,
    rtapp: bool = False,
) -> Report:
    """Parse, validate and simulate; the report (docs/report.md, typed as
    ``schedlab.report_types.Report``).

    ``trace`` is a path: the run's sched tracepoints are written there as
    ftrace text (the kernel's ``trace`` file layout). ``perfetto`` is a path
    for the same tracepoints as a Perfetto protobuf trace (``.pftrace``).
    ``strict`` turns the report's first warning into an ``InvariantError``.
    ``progress``: a ``schedlab._native.Progress`` that another thread polls
    while this one simulates (``schedlab.progress``).
    ``rtapp``: ``text`` is an rt-app JSON workload (its machine, and kernel,
    given as the overrides ``machine.preset`` and ``kernel.version``).
    The run stops with ``ResourceError`` (SL210) at its heap budget
    (``schedlab.heap``), the report's Python objects counted in it.
    The report is made as Python objects by the binding (the objects
    ``json.loads`` makes of the report's JSON text, without the text)."""
    from schedlab.heap import heap_budget

    mod = load()
    pairs = [(k, v) for k, v in overrides]
    budget = heap_budget()
    out = _guarded(lambda: mod.run(text, source, seed, pairs, check, trace, perfetto, strict, budget, progress, rtapp))
    if not isinstance(out, dict):
        raise InternalError("SL900", "internal error (please report): the native report is not a dict")
    return cast("Report", out)


def check(text: str, source: str, overrides: Sequence[Override], *, rtapp: bool = False) -> dict[str, Any]:
    """Parse and validate only; ``{"name", "machine", "kernel", "tasks", "notes"}`` (notes:
    what runs as something near what was asked, e.g. an unlisted kernel version).

    ``machine`` is the layout the core built: ``name``, ``nr_cpus``,
    ``sockets``, ``cores_per_socket``, ``threads_per_core``, ``nodes``,
    ``distance`` (the SLIT), ``memory_bytes`` and ``cpus`` (per CPU its
    ``package``, ``core``, ``thread``, ``llc`` and ``node``, global ids)."""
    mod = load()
    pairs = [(k, v) for k, v in overrides]
    out = _guarded(lambda: mod.check(text, source, pairs, rtapp))
    return _decode(out, "the native check summary")


def scenario_tree(text: str, source: str, overrides: Sequence[Override], *, rtapp: bool = False) -> dict[str, Any]:
    """A scenario as the core reads it, before validation: its TOML (or
    rt-app workload) parsed, ``rtapp = "FILE.json"`` expanded, the overrides
    applied; the ``experiment`` and ``variant`` tables are not in it."""
    mod = load()
    pairs = [(k, v) for k, v in overrides]
    out = _guarded(lambda: mod.scenario_tree(text, source, pairs, rtapp))
    return _decode(out, "the native scenario tree")


def rtapp_loads(text: str, source: str) -> Any:
    """An rt-app file as rt-app's json-c reads it (``schedlab.rtapp.loads``)."""
    mod = load()
    return _decode_any(_guarded(lambda: mod.rtapp_loads(text, source)), "the native rt-app document")


def rtapp_import(text: str, source: str) -> dict[str, Any]:
    """An rt-app file imported: ``{"task": [groups], "duration": s or -1}``."""
    mod = load()
    return _decode(_guarded(lambda: mod.rtapp_import(text, source)), "the native rt-app import")


class ExperimentDoc(TypedDict):
    """An experiment as the core read and checked it
    (``schedlab_core::scenario::experiment::Experiment``). An override is
    ``[key, value, TOML literal]``; ``metrics`` are ``{"name", "source",
    "selector", "field", "cpu", "stat", "per_s"}`` in file order; with case
    tables ``variants`` are the cases and ``base_variants`` as written."""

    name: str
    title: str
    source: str
    seed_file: str
    repeat: int
    quick_repeat: int
    quick_set: list[list[Any]]
    metrics: list[dict[str, Any]]
    variants: list[dict[str, Any]]
    base_variants: list[dict[str, Any]]
    tables: list[dict[str, Any]]
    mmtests: dict[str, str] | None
    case_of: dict[str, dict[str, str]]
    derives: list[dict[str, Any]]
    bands: list[dict[str, Any]]


def experiment(text: str, source: str, default_name: str) -> ExperimentDoc | None:
    """A file's ``[experiment]`` and ``[[variant]]`` tables, read and checked
    by the core; None for a file without ``[experiment]``. ``default_name``:
    the experiment's name when the file gives none (its stem)."""
    mod = load()
    out = _guarded(lambda: mod.experiment(text, source, default_name))
    return None if out is None else cast("ExperimentDoc", _decode(out, "the native experiment"))


def metrics(text: str, source: str, path: str) -> list[dict[str, Any]]:
    """The metrics table at ``path`` (``sweep.metrics``) of a file, checked by
    the core in an experiment's metric grammar: ``{"name", "source",
    "selector", "field", "cpu", "stat", "per_s"}`` each, in file order."""
    mod = load()
    out = _decode_any(_guarded(lambda: mod.metrics(text, source, path)), "the native metrics")
    return cast("list[dict[str, Any]]", out)


class SweepSpecDoc(TypedDict):
    """A sweep spec as the core read and checked it
    (``schedlab_core::scenario::sweep::SweepSpec``). ``seeds`` is
    ``{"count": N}`` (seeds 1..N) or ``{"list": [...]}``; ``set`` holds
    ``[key, value, TOML literal]`` overrides in order; an axis is ``{"key"
    (as written), "values", "literals", "kind", "types"}`` (a non-finite
    float value as its literal text); ``metrics`` as :func:`metrics`."""

    scenario: str
    seeds: dict[str, Any]
    out: str | None
    max_runs: int
    set: list[list[Any]]
    axes: list[dict[str, Any]]
    metrics: list[dict[str, Any]]


def sweep_spec(text: str, source: str) -> SweepSpecDoc:
    """A sweep spec's ``[sweep]`` table, read and checked by the core: its
    keys, seeds, axes (values, literals, column kinds), overrides, metrics
    and size against ``max_runs`` (UsageError, SL001)."""
    mod = load()
    return cast("SweepSpecDoc", _decode(_guarded(lambda: mod.sweep_spec(text, source)), "the native sweep spec"))


def suite(text: str, source: str, default_name: str, folder: str) -> dict[str, Any]:
    """A validation suite file, read and checked by the core: ``{"name",
    "seed", "entries"}``, an entry ``{"name", "file" (as written), "why",
    "control", "sim_set" ([key, value, TOML literal] each), "metrics",
    "tool"}``, a metric ``{"metric", "tol", "task", "group", "cpu", "cpus",
    "sets", "thread"}`` and its ``tol`` as :func:`tolerance`. An entry's file
    must be a file under ``folder``."""
    mod = load()
    return _decode(_guarded(lambda: mod.suite(text, source, default_name, folder)), "the native suite")


def tolerance(text: str) -> dict[str, Any]:
    """A validation tolerance read by the core: ``{"text", "bounds": [{"kind",
    "value", "unit"}]}``. ``ValueError`` saying what is wrong and what is
    accepted."""
    if not isinstance(text, str):
        raise ValueError(f'{text!r}: not a tolerance; accepted: a string such as "±3 points"')
    mod = load()
    return _decode(_parsed(lambda: mod.tolerance(text)), "the native tolerance")


def heading(text: str, source: str) -> dict[str, Any]:
    """What ``schedlab list`` shows of a file, unchecked: ``{"name",
    "description", "experiment": None or {"name", "title"}}`` (None where
    absent or not a string); ``ScenarioError`` (SL100) if it is not TOML."""
    mod = load()
    return _decode(_guarded(lambda: mod.heading(text, source)), "the native heading")


def version() -> str:
    mod = load()
    return str(_guarded(mod.version))


def scenario_toml(text: str, source: str, overrides: Sequence[Override], *, rtapp: bool = False) -> str:
    """The scenario as self-contained TOML written by the core (``rtapp``
    expanded, the overrides applied): for a runner that has neither."""
    mod = load()
    pairs = [(k, v) for k, v in overrides]
    return str(_guarded(lambda: mod.scenario_toml(text, source, pairs, rtapp)))


def parse_cpulist(text: str, nr_cpus: int = 8192) -> list[int]:
    """``"0-3,8"`` -> ``[0, 1, 2, 3, 8]``: the core's cpulist parser, the one a
    scenario's ``cpus`` go through. ``ValueError`` saying what is wrong."""
    if not isinstance(text, str):
        raise ValueError(f"{text!r}: not a CPU list; accepted: a string such as 0-3,8")
    mod = load()
    return [int(c) for c in _parsed(lambda: mod.parse_cpulist(text, nr_cpus))]


def parse_duration_ns(text: str) -> int:
    """``"1.5s"`` -> 1500000000: the core's duration parser. ``ValueError``
    saying what is wrong and what is accepted."""
    if not isinstance(text, str):
        raise ValueError(f"{text!r}: not a duration; accepted: a string such as 20ms or 1.5s")
    mod = load()
    return int(_parsed(lambda: mod.parse_duration(text)))


def kernel_version(text: str) -> dict[str, Any]:
    """A ``kernel.version`` as the core reads it: ``{"version", "major",
    "minor", "patch", "fair" ("cfs"/"eevdf"), "balancer", "rt_balance",
    "note"}``, the eras from the core's mechanisms table. ``ValueError``
    saying why not and what is accepted."""
    if not isinstance(text, str):
        raise ValueError(f"{text!r}: not a kernel version; accepted: a string such as 6.1")
    mod = load()
    return _decode(_parsed(lambda: mod.kernel_version(text)), "the native kernel version")
