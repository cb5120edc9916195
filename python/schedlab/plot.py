"""``schedlab plot INPUT... --out DIR [--format png|svg]``: pictures of a
run, a trace or an experiment (matplotlib, the ``plot`` extra).

What each input gives (the kind is read from the file):

* a run report (``schedlab run --json``; ``--samples`` for the heat map):
  ``<name>-cpu-heatmap`` — per-CPU busy % in every mpstat interval, CPUs
  down, time across (an idle CPU beside busy ones, the sched-idle
  pathology, is a pale stripe); ``<name>-wakeup-cdf`` — the wakeup-latency
  CDF of each task group, from the tasks' log2 histograms;
* several run reports at once: one wakeup-latency CDF with a line per report
  (per variant: ``plot a.json b.json``);
* an ftrace text trace (``--trace``): ``<name>-timeline`` — which task runs
  on each CPU as coloured bars over ``--window`` (default the first 50 ms),
  migrations as arrows between the CPUs;
* an experiment (``schedlab reproduce --json``): ``<name>-<table>-<metric>``
  — each swept metric against the parameter that varies, one line per
  variant, the seed's published figures as markers;
* a ``schedlab sweep`` results directory: ``<dir>-<metric>`` — each metric
  (the mean over seeds) against the first axis, one line per combination
  of the other axes.
"""

from __future__ import annotations

import argparse
import os
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from schedlab.args import cut
from schedlab.errors import UsageError
from schedlab.frames import _List, _Obj, finite

__all__ = ["cmd_plot", "plot_files"]

FORMATS = ("png", "svg")

#: A picture's file name: the characters kept as they are, the length cut.
_UNSAFE = re.compile(r"[\x00-\x1f\x7f/\\]")
_STEM_MAX = 150


def _stem(stem: str) -> str:
    """A file name from names in the input (an experiment's, a metric's): no
    directory separator, NUL or control character, at most 150 characters."""
    safe = _UNSAFE.sub("_", stem)[:_STEM_MAX]
    return "_" + safe[1:] if safe.startswith(".") else safe or "_"


def _txt(text: object) -> str:
    """Text for a title or a label as it is: a ``$`` is not mathtext."""
    return str(text).replace("$", r"\$")


def _plt() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise UsageError("SL001", "schedlab plot needs matplotlib; accepted: pip install 'schedlab[plot]'") from None
    matplotlib.use("Agg")
    # SVG element ids from a fixed salt: the same input draws the same bytes.
    matplotlib.rcParams["svg.hashsalt"] = "schedlab"
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, out: Path, stem: str, fmt: str) -> Path:
    """The picture, written whole or not at all (schedlab.outputs)."""
    from schedlab.outputs import atomic_open

    p = out / f"{_stem(stem)}.{fmt}"
    # A fixed date and no software tag keep the bytes of an SVG/PNG the same run to run.
    meta = {"Date": None} if fmt == "svg" else {"Software": None}
    with atomic_open(p, "wb", flag="--out") as f:
        fig.savefig(f, format=fmt, metadata=meta, bbox_inches="tight", dpi=100)
    return p


def _busy_heatmap(report: Mapping[str, Any], name: str, out: Path, fmt: str) -> list[Path]:
    samples = (report.get("mpstat") or {}).get("samples") or []
    if not samples:
        return []
    # The shape is checked (frames.check_report): cpu "all" or a number,
    # idle, end_ns and start_ns finite numbers.
    cpus = sorted({r["cpu"] for s in samples for r in s["rows"] if r["cpu"] != "all"})
    if not cpus:
        return []
    plt = _plt()
    grid = [[0.0] * len(samples) for _ in cpus]
    row_of = {c: i for i, c in enumerate(cpus)}
    for j, s in enumerate(samples):
        for r in s["rows"]:
            if r["cpu"] != "all":
                grid[row_of[r["cpu"]]][j] = 100.0 - (finite(r.get("idle")) or 0.0)
    ends = [float(s["end_ns"]) / 1e9 for s in samples]
    start = (finite((report.get("measure") or {}).get("start_ns")) or 0.0) / 1e9
    if not start < ends[-1]:
        start = ends[-1] - 1e-3  # a window that does not end after it starts: a sliver, not an error
    fig, ax = plt.subplots(figsize=(8, max(2.5, min(12, 0.12 * len(cpus) + 1.5))))
    im = ax.imshow(
        grid, aspect="auto", interpolation="nearest", cmap="viridis", vmin=0, vmax=100,
        extent=(start, ends[-1], len(cpus) - 0.5, -0.5),
    )  # fmt: skip
    ax.set_xlabel("time (s)")
    ax.set_ylabel("CPU")
    ax.set_title(f"{_txt(name)}: busy % per CPU per interval")
    fig.colorbar(im, ax=ax, label="busy %")
    p = _save(fig, out, f"{name}-cpu-heatmap", fmt)
    plt.close(fig)
    return [p]


def _cdf_points(hist: Sequence[int]) -> tuple[list[float], list[float]]:
    """The CDF of a log2 histogram (bucket i: delays below 2^i us; bucket 0: under 1 us)."""
    total = sum(hist)
    xs: list[float] = []
    ys: list[float] = []
    acc = 0
    for i, n in enumerate(hist):
        acc += n
        xs.append(float(2**i))
        ys.append(acc / total if total else 0.0)
    return xs, ys


def _group_hists(report: Mapping[str, Any]) -> dict[str, list[int]]:
    by_group: dict[str, list[int]] = {}
    for t in report.get("tasks") or []:
        h = t.get("wakeup_latency_hist_us") or []
        if not any(h):
            continue
        acc = by_group.setdefault(str(t.get("group")), [])
        acc.extend([0] * (len(h) - len(acc)))  # histograms of different lengths add up
        for i, n in enumerate(h):
            acc[i] += n
    return by_group


def _wakeup_cdf(lines: Mapping[str, Sequence[int]], title: str, stem: str, out: Path, fmt: str) -> list[Path]:
    if not lines:
        return []
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4))
    for label, hist in lines.items():
        xs, ys = _cdf_points(hist)
        ax.step(xs, ys, where="post", label=_txt(label))
    ax.set_xscale("log", base=2)
    ax.set_xlabel("wakeup latency, upper bound of the log2 bucket (us)")
    ax.set_ylabel("fraction of wakeups")
    ax.set_ylim(0, 1.02)
    ax.set_title(_txt(title))
    ax.legend(fontsize="small")
    ax.grid(True, alpha=0.3)
    p = _save(fig, out, stem, fmt)
    plt.close(fig)
    return [p]


def _timeline(trace: Path, name: str, out: Path, fmt: str, window: tuple[float, float] | None) -> list[Path]:
    from schedlab.frames import parse_ftrace

    with trace.open(encoding="utf-8", errors="replace") as f:
        ev = parse_ftrace(f)
    # Lines a picture cannot place are left out: a time that is not a finite
    # number, a CPU number past any machine's.
    switches = [s for s in ev.get("sched_switch") or [] if _placed(s["Time"], s["__cpu"])]
    if not switches:
        raise UsageError("SL001", f"{trace}: no sched_switch events; accepted: a trace from schedlab run --trace")
    t0 = switches[0]["Time"]
    lo, hi = window if window is not None else (t0, t0 + 0.05)
    plt = _plt()
    running: dict[int, tuple[float, str, int]] = {}
    bars: dict[int, list[tuple[float, float, str]]] = defaultdict(list)
    for s in switches:
        cpu, t = s["__cpu"], s["Time"]
        if cpu in running:
            start, comm, pid = running.pop(cpu)
            if pid != 0 and t > lo and start < hi:
                bars[cpu].append((max(start, lo), min(t, hi) - max(start, lo), comm))
        nxt = s.get("next_pid")
        running[cpu] = (t, _txt(s.get("next_comm")), nxt if isinstance(nxt, int) else 0 if nxt is None else -1)
    for cpu, (start, comm, pid) in running.items():
        if pid != 0 and start < hi:
            bars[cpu].append((max(start, lo), hi - max(start, lo), comm))
    cpus = sorted({s["__cpu"] for s in switches})
    comms = sorted({c for b in bars.values() for _, _, c in b})
    cmap = plt.get_cmap("tab20")
    colour = {c: cmap(i % 20) for i, c in enumerate(comms)}
    fig, ax = plt.subplots(figsize=(10, max(2.5, 0.35 * len(cpus) + 1.2)))
    for cpu in cpus:
        segs = bars.get(cpu) or []
        if segs:
            ax.broken_barh([(a, w) for a, w, _ in segs], (cpu - 0.4, 0.8), facecolors=[colour[c] for _, _, c in segs])
    for m in ev.get("sched_migrate_task") or []:
        if lo <= m["Time"] <= hi and _placed(m["Time"], m.get("dest_cpu")) and _placed(m["Time"], m.get("orig_cpu")):
            ax.annotate(
                "", xy=(m["Time"], m["dest_cpu"]), xytext=(m["Time"], m["orig_cpu"]),
                arrowprops={"arrowstyle": "->", "color": "black", "lw": 0.8},
            )  # fmt: skip
    ax.set_xlim(lo, hi)
    ax.set_ylim(max(cpus) + 0.6, min(cpus) - 0.6)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("CPU")
    ax.set_title(f"{_txt(name)}: who runs where, {1e3 * (hi - lo):.1f} ms (arrows: migrations)")
    if len(comms) <= 24:
        from matplotlib.patches import Patch

        ax.legend(
            handles=[Patch(color=colour[c], label=c) for c in comms], fontsize="x-small",
            loc="upper left", bbox_to_anchor=(1.01, 1.0),
        )  # fmt: skip
    p = _save(fig, out, f"{name}-timeline", fmt)
    plt.close(fig)
    return [p]


def _placed(t: Any, cpu: Any) -> bool:
    """A trace line's time and CPU can go on a picture."""
    return finite(t) is not None and isinstance(cpu, int) and 0 <= cpu < 2**20


def _number(v: Any) -> bool:
    """A finite number a picture can place (not a bool, not NaN, not an
    integer too large for a float)."""
    return finite(v) is not None


def _sweep_param(rows: Sequence[Mapping[str, Any]]) -> str | None:
    """The numeric parameter that varies along every line of a table (a
    line: the rows of one base variant)."""
    per_line: dict[str, dict[str, set[float]]] = defaultdict(lambda: defaultdict(set))
    for r in rows:
        for k, v in (r.get("params") or {}).items():
            x = finite(v)
            if x is not None:
                per_line[str(r.get("base") or r.get("variant"))][k].add(x)
    common: set[str] | None = None
    for keys in per_line.values():
        varying = {k for k, vs in keys.items() if len(vs) > 1}
        common = varying if common is None else common & varying
    return sorted(common)[0] if common and len(common) == 1 else None


def _experiment_curves(doc: Mapping[str, Any], out: Path, fmt: str) -> list[Path]:
    name = str(doc.get("experiment") or "experiment")
    tables: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for r in doc.get("results") or []:
        if r.get("table"):
            tables[str(r["table"])].append(r)
    paths: list[Path] = []
    for table, rows in tables.items():
        param = _sweep_param(rows)
        if param is None:
            continue
        plt = _plt()
        metrics = sorted({str(m) for r in rows for m, v in (r.get("metrics") or {}).items() if _number(v)})
        for metric in metrics:
            fig, ax = plt.subplots(figsize=(7, 4))
            lines: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
            for r in rows:
                lines[str(r.get("base") or r.get("variant"))].append(r)
            drawn = False
            for base, rs in lines.items():
                pts = sorted(
                    (
                        (
                            float(r["params"][param]),
                            finite((r.get("metrics") or {}).get(metric)),
                            finite((r.get("published") or {}).get(metric)),
                        )
                        for r in rs
                        if _number((r.get("params") or {}).get(param))
                    ),
                    key=lambda pt: pt[0],
                )
                xs = [x for x, y, _ in pts if y is not None]
                ys = [y for _, y, _ in pts if y is not None]
                if not xs:
                    continue
                (ln,) = ax.plot(xs, ys, marker=".", label=_txt(base))
                pub = [(x, p) for x, _, p in pts if p is not None]
                if pub:
                    ax.plot(
                        [x for x, _ in pub], [p for _, p in pub], linestyle="none", marker="x",
                        color=ln.get_color(), label=f"{_txt(base)} (published)",
                    )  # fmt: skip
                drawn = True
            if not drawn:
                plt.close(fig)
                continue
            ax.set_xlabel(_txt(param))
            ax.set_ylabel(_txt(metric))
            ax.set_title(_txt(f"{name}: {metric} ({table}, {doc.get('mode', 'full')} mode)"))
            ax.legend(fontsize="x-small")
            ax.grid(True, alpha=0.3)
            paths.append(_save(fig, out, f"{name}-{table}-{metric}", fmt))
            plt.close(fig)
    return paths


def _natural(v: Any) -> tuple[Any, ...]:
    """Sort key: version-like strings by their numbers ("6.6" < "6.12")."""
    if isinstance(v, str) and re.fullmatch(r"\d+(\.\d+)*", v):
        return (0, *map(int, v.split(".")))
    return (1, v) if isinstance(v, str) else (0, v)


def _sweep_curves(path: Path, out: Path, fmt: str) -> list[Path]:
    """A sweep's results: each metric (mean over seeds) against the first
    axis, one line per combination of the other axes, errors left out."""
    from schedlab.sweep import load_sweep

    df = load_sweep(path, backend="pandas")
    df = df[df["error"].isna()]
    fixed = {"run_id", "seed", "error", "wall_s", "schedlab", "scenario_hash"}
    cols = list(df.columns)
    axes = cols[1 : cols.index("seed")]
    metrics = [c for c in cols[cols.index("seed") + 1 :] if c not in fixed]
    if not axes or df.empty:
        return []
    x, others = axes[0], axes[1:]
    plt = _plt()
    paths = []
    for m in metrics:
        if df[m].dtype.kind not in "fi":
            continue
        fig, ax = plt.subplots(figsize=(7, 4))
        groups = df.groupby(others, sort=True) if others else [((), df)]
        for key, g in groups:
            mean = g.groupby(x, sort=True)[m].mean()
            mean = mean.reindex(sorted(mean.index, key=_natural))  # 6.6 before 6.12
            label = ", ".join(f"{k}={v}" for k, v in zip(others, key if isinstance(key, tuple) else (key,)))
            ax.plot([str(v) for v in mean.index], mean.to_numpy(), marker="o", label=label or m)
        ax.set_xlabel(x)
        ax.set_ylabel(f"{m} (mean over seeds)")
        ax.set_title(f"{path.name}: {m}")
        if others:
            ax.legend(fontsize="x-small")
        ax.grid(True, alpha=0.3)
        paths.append(_save(fig, out, f"{path.name}-{m}", fmt))
        plt.close(fig)
    return paths


#: The fields of an experiment (reproduce --json) the curves read.
EXPERIMENT = _Obj(
    "an experiment (a JSON object)",
    {
        "results": _List(
            "a list of results (objects)",
            _Obj(
                "a result (an object)",
                {"params": _Obj("an object"), "metrics": _Obj("an object"), "published": _Obj("an object")},
            ),
        )
    },
)


def _kind(path: Path) -> tuple[str, Any]:
    from schedlab.frames import check_report, read_json_or_text

    if path.is_dir() and any(path.glob("part-*.parquet")):
        return "sweep", None
    doc, _ = read_json_or_text(path, "a run report, a --trace file or an experiment (reproduce --json)")
    if doc is not None:
        if "experiment" in doc and "results" in doc:
            check_report(doc, str(path), EXPERIMENT, "an experiment (schedlab reproduce --json)")
            return "experiment", doc
        if "tasks" in doc:
            check_report(doc, str(path))
            return "report", doc
        raise UsageError("SL001", f"{path}: neither a run report nor an experiment (reproduce --json)")
    return "trace", None


def plot_files(
    inputs: Sequence[Path], out: Path, fmt: str = "png", window: tuple[float, float] | None = None
) -> list[Path]:
    """Draw every picture the inputs give into ``out``; the paths written.
    ``inputs`` are paths (run reports, traces, experiments, sweep
    directories), ``out`` a directory (created), ``fmt`` png or svg,
    ``window`` a trace timeline's (start, end) in seconds."""
    if isinstance(inputs, (str, bytes, os.PathLike)) or not isinstance(inputs, Sequence) or not inputs:
        raise UsageError("SL001", f"inputs={cut(inputs)}: accepted: a non-empty list of paths")
    paths = [_path(p, "inputs") for p in inputs]
    out = _path(out, "out")
    if not isinstance(fmt, str) or fmt not in FORMATS:
        raise UsageError("SL001", f"--format {cut(fmt)}: accepted: {', '.join(FORMATS)}")
    if window is not None:
        ok = isinstance(window, (tuple, list)) and len(window) == 2 and all(finite(x) is not None for x in window)
        if not ok or not 0 <= window[0] < window[1]:
            raise UsageError("SL001", f"window={cut(window)}: accepted: (start, end) in seconds, 0 <= start < end")
        window = (float(window[0]), float(window[1]))
    kinds = [(p, *_kind(p)) for p in paths]
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError("SL001", f"--out {out}: cannot create the directory: {e.strerror or e}") from None
    written: list[Path] = []
    reports = [(p, doc) for p, k, doc in kinds if k == "report"]
    for p, kind, doc in kinds:
        name = p.stem
        if kind == "experiment":
            written += _experiment_curves(doc, out, fmt)
        elif kind == "sweep":
            written += _sweep_curves(p, out, fmt)
        elif kind == "trace":
            written += _timeline(p, name, out, fmt, window)
        elif len(reports) == 1:
            written += _busy_heatmap(doc, name, out, fmt)
            written += _wakeup_cdf(
                _group_hists(doc), f"{name}: wakeup latency per group", f"{name}-wakeup-cdf", out, fmt
            )
    if len(reports) > 1:
        merged = {}
        for p, doc in reports:
            total = [sum(x) for x in zip(*_group_hists(doc).values())]
            if total:
                merged[p.stem] = total
        written += _wakeup_cdf(merged, "wakeup latency, all tasks, per report", "wakeup-cdf", out, fmt)
        for p, doc in reports:
            written += _busy_heatmap(doc, p.stem, out, fmt)
    return written


def _path(v: Any, name: str) -> Path:
    if isinstance(v, (str, os.PathLike)):
        fs = os.fspath(v)
        if isinstance(fs, str) and fs:
            return Path(fs)
    raise UsageError("SL001", f"{name}: {cut(v)}: accepted: a path (str or pathlib.Path), not {type(v).__name__}")


def _window(text: str | None) -> tuple[float, float] | None:
    if text is None:
        return None
    from schedlab.units import parse_duration_ns

    accepted = "accepted: END or START:END with START before END (50ms, 1s:1.05s)"
    a, sep, b = text.partition(":")
    try:
        lo, hi = (parse_duration_ns(a) / 1e9, parse_duration_ns(b) / 1e9) if sep else (0.0, parse_duration_ns(a) / 1e9)
    except ValueError as e:
        raise UsageError("SL001", f"--window {text}: {e}; {accepted}") from None
    if not lo < hi:
        raise UsageError("SL001", f"--window {text}: an empty window; {accepted}")
    return lo, hi


def cmd_plot(args: argparse.Namespace) -> int:
    paths = plot_files([Path(p) for p in args.inputs], Path(args.out), args.format, _window(args.window))
    if not args.quiet:
        for p in paths:
            print(p)
    return 0
