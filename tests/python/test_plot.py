"""schedlab plot: the pictures of a run report, a trace and an experiment,
written as PNG and SVG, the same bytes twice, bad inputs refused."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import schedlab
from schedlab.errors import UsageError

pytest.importorskip("matplotlib")
pytestmark = pytest.mark.native

from schedlab.plot import plot_files  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("plot")
    trace = d / "wakers.txt"
    report = schedlab.run_scenario(
        REPO / "validation" / "smt-numa-wakers.toml", seed=1, overrides={"measure.samples": True}, trace=str(trace)
    )
    (d / "wakers.json").write_text(json.dumps(report))
    exp = d / "kworker.json"
    r = subprocess.run(
        [sys.executable, "-m", "schedlab", "reproduce", "kworker-stack", "--quick", "--json", str(exp), "-q"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert r.returncode in (0, 1), r.stderr
    return {"report": d / "wakers.json", "trace": trace, "experiment": exp}


def test_every_input_kind_draws_its_pictures(inputs: dict[str, Path], tmp_path: Path) -> None:
    out = plot_files(list(inputs.values()), tmp_path / "png")
    names = {p.name for p in out}
    assert {"wakers-cpu-heatmap.png", "wakers-wakeup-cdf.png", "wakers-timeline.png"} <= names
    # kworker-stack's sweeps: clients on uma8 and numa48, a curve per metric.
    assert "kworker-stack-uma8-amean_ms.png" in names and "kworker-stack-numa48-amean_ms.png" in names
    for p in out:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_svg_is_the_same_bytes_twice(inputs: dict[str, Path], tmp_path: Path) -> None:
    a = plot_files([inputs["report"], inputs["trace"]], tmp_path / "a", "svg")
    b = plot_files([inputs["report"], inputs["trace"]], tmp_path / "b", "svg")
    assert [p.name for p in a] == [p.name for p in b]
    for x, y in zip(a, b):
        assert x.read_bytes() == y.read_bytes(), x.name
        assert b"<svg" in x.read_bytes()[:2000]


def test_two_reports_give_one_cdf_with_a_line_each(inputs: dict[str, Path], tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    other.write_text(inputs["report"].read_text())
    out = plot_files([inputs["report"], other], tmp_path / "cmp")
    assert "wakeup-cdf.png" in {p.name for p in out}


def test_bad_inputs_are_refused(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text('{"a": 1}')
    with pytest.raises(UsageError, match="neither a run report nor an experiment"):
        plot_files([tmp_path / "x.json"], tmp_path / "o")
    with pytest.raises(UsageError, match="cannot read"):
        plot_files([tmp_path / "missing.json"], tmp_path / "o")
    (tmp_path / "t.txt").write_text("not a trace\n")
    with pytest.raises(UsageError, match="no sched_switch"):
        plot_files([tmp_path / "t.txt"], tmp_path / "o")
    r = subprocess.run(
        [sys.executable, "-m", "schedlab", "plot", str(tmp_path / "x.json"), "--out", str(tmp_path / "o")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert r.returncode == 2 and "schedlab: error: [SL001]" in r.stderr
