"""schedlab sweep: the cross product of axes and seeds streamed to Parquet,
resumed without redoing rows, failures recorded, and the same rows on a
real local Dask cluster (workers as processes, one killed mid-sweep)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import schedlab
from schedlab.errors import ScenarioError
from schedlab.sweep import _local_backend, load_spec, plan, run_sweep

pytest.importorskip("pyarrow")
pytestmark = pytest.mark.native

SPEC = """
[sweep]
scenario = "sched-idle"
seeds = 2
set = {{ "measure.duration" = "1s" }}

[[sweep.axis]]
key = "kernel.version"
values = ["2.6.35", "5.5", "6.6"]

[[sweep.axis]]
key = "machine.preset"
values = ["4x4", "uma8"]
{extra}
"""


def _spec(tmp: Path, extra: str = "") -> Path:
    p = tmp / "s.toml"
    p.write_text(SPEC.format(extra=extra))
    return p


def _sweep(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "schedlab", "sweep", *args], capture_output=True, text=True, check=False, env=env
    )


def _rows(out: Path) -> list[dict[str, Any]]:
    df = schedlab.load_sweep(out).drop(columns=["wall_s"])
    df = df.astype(object).where(df.notna(), None)  # nulls as None, which compare equal
    return df.to_dict("records")  # type: ignore[no-any-return]


def test_every_point_is_a_row_with_its_metrics(tmp_path: Path) -> None:
    p = _spec(tmp_path, '[sweep.metrics]\nidle_cpu0 = { mpstat = "average", cpu = 0, field = "idle" }')
    r = _sweep(str(p), "-q")
    assert r.returncode == 0, r.stderr
    rows = _rows(tmp_path / "s.sweep")
    assert len(rows) == 3 * 2 * 2
    assert {(x["kernel.version"], x["machine.preset"], x["seed"]) for x in rows} == {
        (k, m, s) for k in ("2.6.35", "5.5", "6.6") for m in ("4x4", "uma8") for s in (1, 2)
    }
    assert all(x["error"] is None and x["events"] > 0 and x["idle_cpu0"] is not None for x in rows)
    # The seed's pathology: SCHED_IDLE hogs leave a 4-socket box idle before 5.x.
    old = [float(x["idle_pct"]) for x in rows if x["kernel.version"] == "2.6.35" and x["machine.preset"] == "4x4"]
    assert min(old) > 10.0


def test_an_interrupted_sweep_resumes_without_redoing_rows(tmp_path: Path) -> None:
    p = _spec(tmp_path)
    spec = load_spec(p)
    todo = plan(spec)
    submit, close = _local_backend(spec, 2)
    try:
        run_sweep(spec, todo[:5], submit, jobs=2)  # an interrupted sweep: 5 of 12 rows written
    finally:
        close()
    assert len(plan(spec)) == 7
    r = _sweep(str(p))
    assert r.returncode == 0 and "12 runs, 5 already in" in r.stdout, r.stdout + r.stderr
    rows = _rows(tmp_path / "s.sweep")
    assert len(rows) == 12 and len({x["run_id"] for x in rows}) == 12
    r = _sweep(str(p))
    assert "12 already in" in r.stdout and "0 run now" in r.stdout


def test_a_failed_run_is_recorded_and_retried_on_request(tmp_path: Path) -> None:
    p = _spec(tmp_path)
    env = dict(os.environ, SCHEDLAB_MEMORY_LIMIT="1KiB")  # every run stops at its heap budget (SL210)
    r = _sweep(str(p), "-q", env=env)
    assert r.returncode == 0, r.stderr
    rows = _rows(tmp_path / "s.sweep")
    assert len(rows) == 12 and all("SL210" in str(x["error"]) for x in rows)
    r = _sweep(str(p), "--retry-failed")
    assert "12 run now, 0 failed" in r.stdout, r.stdout + r.stderr
    ok = [x for x in _rows(tmp_path / "s.sweep") if x["error"] is None]
    assert len(ok) == 12


def test_bad_specs_are_refused_before_any_run(tmp_path: Path) -> None:
    p = tmp_path / "s.toml"
    p.write_text('[sweep]\nscenario = "sched-idle"\nfrob = 1\n')
    with pytest.raises(ScenarioError, match=r"sweep\.frob: unknown key"):
        load_spec(p)
    p.write_text('[sweep]\nscenario = "sched-idle"\n[[sweep.axis]]\nkey = "kernel.version"\nvalues = ["6.1", "9.9"]\n')
    r = _sweep(str(p))
    assert r.returncode == 2 and "9.9" in r.stderr and not (tmp_path / "s.sweep").exists()


def test_a_local_dask_cluster_gives_the_same_rows_and_survives_a_killed_worker(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    # Longer runs than the other tests' so that the kill lands while runs are in flight.
    p = tmp_path / "s.toml"
    p.write_text(SPEC.format(extra="").replace('"1s"', '"6s"').replace("seeds = 2", "seeds = 4"))
    assert _sweep(str(p), "--out", str(tmp_path / "local"), "-q").returncode == 0
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cl:
        before = {w.process.process.pid for w in cl.workers.values()}
        victim = sorted(before)[0]
        proc = subprocess.Popen(
            [sys.executable, "-m", "schedlab", "sweep", str(p), "--out", str(tmp_path / "dask"),
             "--backend", "dask", "--scheduler", cl.scheduler_address],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        # Kill a worker once the client has work out (its first progress line), before the sweep ends.
        assert proc.stderr is not None
        first = proc.stderr.readline()
        os.kill(victim, signal.SIGKILL)
        out, err = proc.communicate(timeout=300)
        assert "done" in first and proc.returncode == 0, first + err
        assert "24 run now, 0 failed" in out, out + err
        after = {w.process.process.pid for w in cl.workers.values() if w.process and w.process.process}
        assert victim not in after
    assert _rows(tmp_path / "dask") == _rows(tmp_path / "local")


def test_plot_draws_a_sweeps_curves(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from schedlab.plot import plot_files

    p = _spec(tmp_path)
    assert _sweep(str(p), "-q").returncode == 0
    out = plot_files([tmp_path / "s.sweep"], tmp_path / "pics", "svg")
    names = {q.name for q in out}
    assert "s.sweep-idle_pct.svg" in names and "s.sweep-migrations_per_s.svg" in names
    assert b"machine.preset=4x4" in (tmp_path / "pics" / "s.sweep-idle_pct.svg").read_bytes()
