"""``--html DIR`` of ``schedlab run`` and ``schedlab reproduce``: one
self-contained page (``DIR/index.html``: inline CSS, the pictures as data
URIs, no script, nothing fetched from the network) with the tables, the
acceptance bands, the pictures of ``schedlab plot``, the scenario and the
exact command that made it.
"""

from __future__ import annotations

import base64
import html
import shlex
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["command_line", "experiment_page", "run_page"]

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.8em; border-bottom: 1px solid #ccc; }
pre { background: #f6f6f6; padding: 0.8em; overflow-x: auto; font-size: 12px; line-height: 1.3; }
table { border-collapse: collapse; font-size: 13px; }
td, th { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.ok td.verdict { color: #176b21; font-weight: 600; } tr.out td.verdict { color: #b00020; font-weight: 600; }
figure { margin: 1em 0; } figure img { max-width: 100%; } figcaption { font-size: 12px; color: #555; }
.summary { font-size: 1.1em; }
"""


def command_line(argv: Sequence[str] | None = None) -> str:
    """The command as typed (``schedlab`` and its arguments), shell-quoted."""
    args = list(sys.argv[1:] if argv is None else argv)
    return " ".join(shlex.quote(a) for a in ["schedlab", *args])


def _figure(path: Path) -> str:
    mime = "image/svg+xml" if path.suffix == ".svg" else "image/png"
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    name = html.escape(path.stem)
    return f'<figure><img alt="{name}" src="data:{mime};base64,{data}"><figcaption>{name}</figcaption></figure>'


def _page(title: str, command: str, scenario: str | None, body: Sequence[str], figures: Sequence[Path]) -> str:
    from schedlab._version import __version__

    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p>schedlab {html.escape(__version__)}. Rerun it with:</p>",
        f"<pre>{html.escape(command)}</pre>",
        *body,
    ]
    if figures:
        parts.append("<h2>Pictures</h2>")
        parts += [_figure(p) for p in figures]
    if scenario is not None:
        parts += ["<h2>Scenario</h2>", f"<pre>{html.escape(scenario)}</pre>"]
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _write(out: Path, text: str, flag: str = "--html") -> Path:
    """``out/index.html``, written whole or not at all (schedlab.outputs);
    SL001 naming ``flag`` when the directory or the file cannot be made."""
    from schedlab.errors import UsageError
    from schedlab.outputs import write_bytes

    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError("SL001", f"{flag} {out}: cannot create the directory: {e.strerror or e}") from None
    page = out / "index.html"
    # A string from a report given by hand may hold a lone surrogate: escaped, not an error.
    write_bytes(page, text.encode("utf-8", errors="backslashreplace"), flag=flag)
    return page


def _bands_table(bands: Sequence[Mapping[str, Any]]) -> str:
    rows = ["<table><tr><th>band</th><th>value</th><th>accepted</th><th>verdict</th></tr>"]
    for b in bands:
        ok = bool(b.get("ok"))
        value = b.get("value")
        shown = f"{value:.2f}" if isinstance(value, (int, float)) else html.escape(str(value))
        lo, hi = b.get("low"), b.get("high")
        rows.append(
            f'<tr class="{"ok" if ok else "out"}"><td>{html.escape(str(b.get("name") or b.get("title") or ""))}</td>'
            f'<td class="num">{shown}</td><td class="num">[{lo}, {hi}]</td>'
            f'<td class="verdict">{"ok" if ok else "OUT"}</td></tr>'
        )
    rows.append("</table>")
    return "\n".join(rows)


def experiment_page(out: Path, result: Mapping[str, Any], scenario_text: str, command: str) -> Path:
    """The page of ``schedlab reproduce``: the bands, the compare table, the experiment's curves."""
    from schedlab.plot import _experiment_curves
    from schedlab.report import format_experiment

    bands = result.get("bands") or []
    ok = sum(1 for b in bands if b.get("ok"))
    name = str(result.get("experiment"))
    title = f"{name}: {result.get('title') or ''}".rstrip(": ")
    body = [
        f'<p class="summary">{ok} of {len(bands)} bands ok ({html.escape(str(result.get("mode")))} mode, '
        f"{result.get('repeat')} seed(s) per variant).</p>",
        "<h2>Acceptance bands</h2>",
        _bands_table(bands),
        "<h2>Compare table</h2>",
        f"<pre>{html.escape(format_experiment(result))}</pre>",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        figures = _experiment_curves(result, Path(tmp), "svg") if _has_matplotlib() else []
        if not figures:
            body.append("<p>No pictures: the experiment has no swept parameter, or matplotlib is not installed.</p>")
        return _write(out, _page(title, command, scenario_text, body, figures))


def run_page(
    out: Path, report: Mapping[str, Any], text_report: str, scenario_text: str, command: str, trace: str | None
) -> Path:
    """The page of ``schedlab run``: the text report, the CPU heat map, the
    wakeup-latency CDFs and (with ``--trace``) the timeline."""
    from schedlab.plot import _busy_heatmap, _group_hists, _timeline, _wakeup_cdf

    name = str(report.get("scenario") or "run")
    body = ["<h2>Report</h2>", f"<pre>{html.escape(text_report)}</pre>"]
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        figures: list[Path] = []
        if _has_matplotlib():
            figures += _busy_heatmap(report, name, d, "svg")
            figures += _wakeup_cdf(
                _group_hists(report), f"{name}: wakeup latency per group", f"{name}-wakeup-cdf", d, "svg"
            )
            if trace is not None:
                figures += _timeline(Path(trace), name, d, "svg", None)
        else:
            body.append("<p>No pictures: matplotlib is not installed (pip install 'schedlab[plot]').</p>")
        return _write(out, _page(f"schedlab run: {name}", command, scenario_text, body, figures))


def _has_matplotlib() -> bool:
    import importlib.util

    return importlib.util.find_spec("matplotlib") is not None
