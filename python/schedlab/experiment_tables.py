"""Experiments over a parameter, printed as mmtests compare tables.

The core reads and checks ``[[experiment.table]]`` and expands the cases
(``scenario/experiment_table.rs``); this module prints the results.

An ``[[experiment.table]]`` is one compare table of the seed: a machine (its
``set``) and a parameter (``key``, e.g. ``dbench.clients``) swept over
``values``. Every variant runs at every value: the variant ``baseline`` at
clients 4 of table ``numa48`` is the case ``baseline@numa48/4``, with the
table's overrides, then the parameter, then the variant's own. Bands name a
case's metric as ``VARIANT.METRIC@TABLE/VALUE``, or hold one rule for several
cases (``cases = ["numa48/*"]``).

The tables print as compare-kernels does (docs/FORMATS.md §3.4): one column
per variant, rows ``Amean N`` / ``Stddev N`` per parameter value, the
percentage against the first column with ``*`` where the difference is
significant. A run reports its own mean, sample stdev and count of samples
(dbench's passes); the table pools every seed's samples.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CaseTable", "MmtestsStats", "case_name", "format_tables", "pooled"]


@dataclass(frozen=True)
class MmtestsStats:
    """Which metrics a run reports its samples' mean, stddev and count in
    (and the throughput whose harmonic mean mmtests prints as Hmean)."""

    mean: str
    stddev: str
    count: str
    hmean: str = ""


@dataclass(frozen=True)
class CaseTable:
    """One ``[[experiment.table]]`` as the core checked it."""

    name: str
    title: str
    key: str
    #: ``TABLE/VALUE``, one per value of ``key``.
    cases: list[str]
    #: The compare tables to print: each a list of variants, first = baseline.
    columns: list[list[str]] = field(default_factory=list)
    #: ``print``: the metrics to print as the seed's own table (one row per
    #: value, one column per metric, headed ``key_label``) instead of
    #: mmtests' compare layout.
    print_metrics: list[str] = field(default_factory=list)
    key_label: str = ""


def case_name(variant: str, case: str) -> str:
    """The expanded variant's name: ``baseline@numa48/4``."""
    return f"{variant}@{case}"


# --------------------------------------------------------------------------
# Pooled statistics and the compare tables


def pooled(reps: Sequence[Mapping[str, Any]], st: MmtestsStats) -> tuple[float, float, int] | None:
    """(mean, sample stddev, count) of every seed's samples pooled, from each
    run's own mean, stddev and count; None if a run has none."""
    runs = []
    for r in reps:
        m = r["metrics"]
        mean, sd, n = m.get(st.mean), m.get(st.stddev), m.get(st.count)
        if not all(isinstance(x, (int, float)) for x in (mean, sd, n)) or not n:
            return None
        runs.append((float(mean), float(sd), int(n)))
    if not runs:
        return None
    total = sum(n for _, _, n in runs)
    grand = sum(mean * n for mean, _, n in runs) / total
    ss = sum((n - 1) * sd * sd + n * (mean - grand) ** 2 for mean, sd, n in runs)
    return grand, math.sqrt(ss / (total - 1)) if total > 1 else 0.0, total


def _significant(a: tuple[float, float, int], b: tuple[float, float, int]) -> bool:
    """compare-kernels' rule: the two means' 95 % intervals do not overlap.
    Deviation: the interval is 1.96 standard errors of the mean (sd/sqrt(n));
    the seed's own stars (9.23 % starred at stddevs of 1.00 and 0.72 ms) are
    consistent with it, not with 1.96 sample stddevs."""
    qa = 1.96 * a[1] / math.sqrt(a[2])
    qb = 1.96 * b[1] / math.sqrt(b[2])
    return abs(b[0] - a[0]) > qa + qb


def _pct(base: float, new: float, lower_better: bool) -> float:
    if base == new:
        return 0.0
    if base == 0:
        return -100.0 if lower_better else 100.0
    return 100.0 - new * 100.0 / base if lower_better else new * 100.0 / base - 100.0


def format_tables(result: Mapping[str, Any]) -> list[str]:
    """The compare tables of a result with case tables: simulated, then the
    seed's published numbers in the same layout."""
    by_name = {r["variant"]: r for r in result["results"]}
    lines: list[str] = []
    for t in result["tables"]:
        if t.get("print"):
            lines += _seed_layout(t, by_name)
            continue
        st = MmtestsStats(**result["mmtests"])
        for cols in t["columns"]:
            lines += ["", f"{t['title']} ({', '.join(cols)}; {t['key']})"]
            lines += _table(t, cols, by_name, st, published=False)
            pub = _table(t, cols, by_name, st, published=True)
            if pub:
                lines += ["", f"{t['title']}, published (the seed)", *pub]
    return lines


def _seed_layout(t: Mapping[str, Any], by_name: Mapping[str, Any]) -> list[str]:
    """The seed's own table per variant: a row per value, a column per
    metric; the published row under each simulated one (``  seed``)."""
    metrics: list[str] = t["print"]
    widths = [max(len(m), 12) for m in metrics]
    head = f"{t['key_label']:>6}  " + " ".join(m.rjust(w) for m, w in zip(metrics, widths))
    lines: list[str] = []

    def cell(v: object, w: int) -> str:
        if not isinstance(v, (int, float)) or not math.isfinite(v):
            return "-".rjust(w)
        return (f"{v:.2f}" if abs(v) < 1000 else f"{v:.0f}").rjust(w)

    for v in dict.fromkeys(x for col in t["columns"] for x in col):
        lines += ["", f"{t['title']}: {v} (simulated; the seed's row beneath as 'seed')", head]
        for case, label in zip(t["cases"], t["labels"]):
            r = by_name[case_name(v, case)]
            lines.append(f"{label:>6}  " + " ".join(cell(r["metrics"].get(m), w) for m, w in zip(metrics, widths)))
            pub = r.get("published") or {}
            if any(m in pub for m in metrics):
                lines.append(f"{'seed':>6}  " + " ".join(cell(pub.get(m), w) for m, w in zip(metrics, widths)))
    return lines


def _table(
    t: Mapping[str, Any], cols: Sequence[str], by_name: Mapping[str, Any], st: MmtestsStats, *, published: bool
) -> list[str]:
    rows: list[tuple[str, list[tuple[float, float, int] | None]]] = []
    hrows: list[tuple[str, list[float | None]]] = []
    for case, label in zip(t["cases"], t["labels"]):
        if published:
            stats: list[tuple[float, float, int] | None] = []
            hs: list[float | None] = []
            for v in cols:
                r = by_name[case_name(v, case)]
                mean, sd = r["published"].get(st.mean), r["published"].get(st.stddev)
                stats.append((mean, sd if sd is not None else math.nan, 0) if mean is not None else None)
                hs.append(r["published"].get(st.hmean) if st.hmean else None)
            if all(s is None for s in stats) and all(h is None for h in hs):
                continue
        else:
            stats = [pooled(by_name[case_name(v, case)]["repeats"], st) for v in cols]
            hs = [by_name[case_name(v, case)]["metrics"].get(st.hmean) if st.hmean else None for v in cols]
        rows.append((label, stats))
        hrows.append((label, hs))
    if not rows:
        return []
    w = max(len(c) for c in cols) + 2
    head = " " * 18 + "".join(c.rjust(max(w, 12) + 12) for c in cols)
    out = [head]

    def line(stat: str, label: str, cells: list[tuple[float, bool] | None]) -> str:
        base = cells[0]
        parts = []
        for i, cell in enumerate(cells):
            if cell is None:
                parts.append("-".rjust(12) + " " * 12)
                continue
            value, star = cell
            pct = 0.0 if i == 0 or base is None else _pct(base[0], value, stat != "Hmean")
            if not math.isfinite(value):
                parts.append("-".rjust(12) + " " * 12)
            elif star:
                parts.append(f"{value:12.2f} *{pct:7.2f}%*")
            else:
                parts.append(f"{value:12.2f} ({pct:7.2f}%)")
        return f"{stat:<10}{label:>6}  " + "".join(parts)

    for label, stats in rows:
        base = stats[0]
        cells: list[tuple[float, bool] | None] = []
        for i, s in enumerate(stats):
            if s is None:
                cells.append(None)
                continue
            sig = (not published) and i > 0 and base is not None and s[2] > 1 and base[2] > 1 and _significant(base, s)
            cells.append((s[0], sig))
        out.append(line("Amean", label, cells))
    for label, stats in rows:
        out.append(line("Stddev", label, [None if s is None else (s[1], False) for s in stats]))
    if st.hmean and any(h is not None for _, hs in hrows for h in hs):
        for label, hs in hrows:
            out.append(line("Hmean", label, [None if h is None else (float(h), False) for h in hs]))
    return out
