"""schedlab sweep: the cross product of axes and seeds streamed to Parquet,
resumed without redoing rows, failures recorded, and the same rows on a
real local Dask cluster (workers as processes, one killed mid-sweep).

Issue 35's sweep cases: axes of mixed types keep every row, finished rows
survive a kill, a truncated part is set aside and redone, a missing
pyarrow and an --out that cannot be a directory are refused before any
work, the sweep's size is checked by arithmetic before anything is
expanded, and Hypothesis throws random specs at the parser (a clean
SchedlabError or a spec whose rows fit its schema, nothing else). The
SIGKILL chaos test is tests/python/test_sweep_chaos.py."""

from __future__ import annotations

import itertools
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
import tracemalloc
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import schedlab
from conftest import tiny_loop
from schedlab import cli, native, sweep
from schedlab.errors import InternalError, ScenarioError, SchedlabError, UsageError
from schedlab.sweep import _local_backend, load_spec, pending, plan, run_many, run_sweep

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


# ------------------------------------------------------------------ issue 35

#: A 4-CPU scenario whose runs take a millisecond or two.
TINY = tiny_loop("5ms")

#: Two axes of mixed types (issue 35's), an integer one and a float one: 16 runs.
MIXED = """\
[sweep]
scenario = "tiny.toml"
seeds = 2
{extra}
[[sweep.axis]]
key = "kernel.vm.kswapd_threads"
values = [1, "auto"]

[[sweep.axis]]
key = "task.0.cpus"
values = ["0-1", [0, 1, 2]]

[[sweep.axis]]
key = "task.0.count"
values = [2, 4]
"""


def _tiny_spec(tmp: Path, body: str = MIXED, extra: str = "") -> Path:
    (tmp / "tiny.toml").write_text(TINY)
    p = tmp / "m.toml"
    p.write_text(body.format(extra=extra))
    return p


def _main(*args: str) -> int:
    """schedlab in this process (threads: no worker processes to start)."""
    return cli.main(["sweep", *args])


def _part_ids(out: Path) -> list[str]:
    """Every run_id in OUT's parts, read raw (no de-duplication)."""
    import pyarrow.parquet as pq

    ids: list[str] = []
    for p in sorted(out.glob("part-*.parquet")):
        ids += pq.read_table(p, columns=["run_id"]).column("run_id").to_pylist()
    return ids


def test_axes_of_mixed_types_keep_every_row_and_say_their_column(tmp_path: Path) -> None:
    # Before: every run finished, then ArrowTypeError, and only sweep.json was left.
    p = _tiny_spec(tmp_path)
    spec = load_spec(p)  # the columns are chosen here, before any run
    assert [(a.key, a.kind, a.types) for a in spec.axes] == [
        ("kernel.vm.kswapd_threads", "toml", ("integer", "string")),
        ("task.0.cpus", "toml", ("string", "array")),
        ("task.0.count", "int", ("integer",)),
    ]
    assert _main(str(p), "-q", "--backend", "threads", "-j", "2") == 0
    out = tmp_path / "m.sweep"
    rows = _rows(out)
    assert len(rows) == 16 and all(x["error"] is None and x["events"] > 0 for x in rows)
    # The TOML literal each run was given.
    assert {x["kernel.vm.kswapd_threads"] for x in rows} == {"1", '"auto"'}
    assert {x["task.0.cpus"] for x in rows} == {'"0-1"', "[0, 1, 2]"}
    assert {x["task.0.count"] for x in rows} == {2, 4}
    df = schedlab.load_sweep(out)
    assert str(df["task.0.count"].dtype) == "int64"
    meta = json.loads((out / "sweep.json").read_text())
    assert [(a["key"], a["column"], a["types"]) for a in meta["axes"]] == [
        ("kernel.vm.kswapd_threads", "toml", ["integer", "string"]),
        ("task.0.cpus", "toml", ["string", "array"]),
        ("task.0.count", "int", ["integer"]),
    ]

    # Integers and floats together are numbers; integers too large for a float64 are text.
    def kind(values: str) -> str:
        doc = native.sweep_spec(f'[sweep]\nscenario = "x"\n[[sweep.axis]]\nkey = "k"\nvalues = {values}\n', "s")
        return str(doc["axes"][0]["kind"])

    assert [kind(v) for v in ("[1, 2.5]", f"[1.5, {2**60}]", "[true]")] == ["float", "toml", "bool"]


def test_a_kill_before_the_first_part_loses_no_finished_row(tmp_path: Path) -> None:
    # Before: rows waited in memory for 256 rows or 5 s; a SIGKILL lost them all.
    p = _tiny_spec(tmp_path, extra='set = { "measure.duration" = "50ms" }')
    out = tmp_path / "m.sweep"
    proc = subprocess.Popen(
        [sys.executable, "-m", "schedlab", "sweep", str(p), "-j", "1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    assert proc.stderr is not None
    try:
        for line in proc.stderr:
            if "(5/16)" in line:
                break
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    kept = _rows(out)
    assert len(kept) >= 5 and all(x["error"] is None for x in kept)
    r = _sweep(str(p), "--backend", "threads")
    assert r.returncode == 0, r.stderr
    assert f"{len(kept)} already in" in r.stdout and f"{16 - len(kept)} run now" in r.stdout, r.stdout
    ids = _part_ids(out)
    assert len(ids) == len(set(ids)) == 16
    assert not (out / "journal.jsonl").exists()


def test_a_batch_that_raises_is_recorded_and_a_broken_pool_keeps_the_finished_rows(tmp_path: Path) -> None:
    spec = load_spec(_tiny_spec(tmp_path))
    calls = 0

    def submit(points: list[tuple[dict[str, Any], int]]) -> Future[list[dict[str, Any]]]:
        nonlocal calls
        calls += 1
        if calls == 7:
            raise BrokenProcessPool("a child process terminated abruptly")
        f: Future[list[dict[str, Any]]] = Future()
        if calls == 2:
            f.set_exception(RuntimeError("boom"))
        else:
            f.set_result(run_many(spec.text, str(spec.scenario), spec.fixed, points, spec.metrics))
        return f

    # Before: the RuntimeError ended the sweep with a traceback.
    with pytest.raises(InternalError, match=r"worker process died .* 12 rows finished before"):
        run_sweep(spec, plan(spec), submit, jobs=1, chunk=2)
    rows = _rows(spec.out)
    assert len(rows) == 12
    assert sum("RuntimeError: boom" in str(x["error"]) for x in rows) == 2
    assert len(plan(spec)) == 4
    assert len(plan(spec, retry_failed=True)) == 6


def test_a_truncated_part_is_set_aside_with_a_warning_and_its_runs_redone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: ArrowInvalid traceback, and no way forward.
    p = _tiny_spec(tmp_path)
    spec = load_spec(p)
    submit, close = _local_backend(spec, 2)
    try:
        run_sweep(spec, plan(spec)[:5], submit, jobs=2)  # part-00000: 5 rows
    finally:
        close()
    assert _main(str(p), "-q", "--backend", "threads") == 0  # part-00001: the other 11
    out = tmp_path / "m.sweep"
    whole = _rows(out)
    part0 = out / "part-00000.parquet"
    with part0.open("r+b") as f:
        f.truncate(100)
    with pytest.raises(UsageError, match=r"part-00000\.parquet: unreadable"):
        schedlab.load_sweep(out)
    capsys.readouterr()
    assert _main(str(p), "--backend", "threads") == 0
    cap = capsys.readouterr()
    assert "warning" in cap.err and "part-00000.parquet: unreadable" in cap.err, cap.err
    assert "set aside as part-00000.parquet.corrupt" in cap.err
    assert "16 runs, 11 already in" in cap.out and "5 run now" in cap.out, cap.out
    assert (out / "part-00000.parquet.corrupt").stat().st_size == 100
    assert _rows(out) == whole
    ids = _part_ids(out)
    assert len(ids) == len(set(ids)) == 16


def test_a_damaged_journal_keeps_its_whole_rows_and_redoes_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import pyarrow.parquet as pq

    p = _tiny_spec(tmp_path)
    assert _main(str(p), "-q", "--backend", "threads") == 0
    out = tmp_path / "m.sweep"
    whole = _rows(out)
    rows = pq.read_table(out / "part-00000.parquet").to_pylist()
    (out / "part-00000.parquet").unlink()
    # A killed sweep's journal, damaged: its header's schema, a garbage line,
    # a row of the wrong types and a torn last line.
    header = {"journal": 1, "part": 0, "schema": "not base64!"}
    lines = [
        json.dumps(header),
        *(json.dumps(r) for r in rows[:10]),
        "{not json",
        json.dumps({**rows[10], "seed": "x"}),
    ]
    (out / "journal.jsonl").write_text("\n".join(lines) + "\n" + json.dumps(rows[11])[:30])
    assert len(_rows(out)) == 10  # load_sweep reads a journal's whole rows
    capsys.readouterr()
    assert _main(str(p), "--backend", "threads") == 0
    cap = capsys.readouterr()
    assert "2 torn line(s)" in cap.err and "1 row(s) that do not fit" in cap.err, cap.err
    assert "16 runs, 10 already in" in cap.out and "6 run now" in cap.out, cap.out
    assert _rows(out) == whole
    ids = _part_ids(out)
    assert len(ids) == len(set(ids)) == 16


def test_without_pyarrow_the_sweep_says_how_to_install_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before: ModuleNotFoundError: pyarrow (after the spec was read and OUT made).
    p = _tiny_spec(tmp_path)
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    assert _main(str(p)) == 2
    err = capsys.readouterr().err
    assert "[SL001]" in err and "pyarrow" in err and "pip install 'schedlab[sweep]'" in err, err
    assert not (tmp_path / "m.sweep").exists()
    with pytest.raises(UsageError, match=r"pip install 'schedlab\[sweep\]'"):
        schedlab.load_sweep(tmp_path)


@pytest.mark.parametrize("out", ["/dev/null", "/proc/x", "FILE/sub", ""])
def test_an_out_that_cannot_be_a_directory_is_refused_before_the_spec(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, out: str
) -> None:
    # Before: FileExistsError / FileNotFoundError / NotADirectoryError tracebacks, after the expansion.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "FILE").write_text("x")
    p = tmp_path / "big.toml"  # a sweep too large to expand: --out is refused first
    p.write_text('[sweep]\nscenario = "sched-idle"\nseeds = 5000000000\n')
    assert _main(str(p), "--out", out) == 2
    err = capsys.readouterr().err
    assert f"[SL001] --out {out or repr(out)}: " in err and "accepted: a directory" in err, err
    assert "max_runs" not in err and "Traceback" not in err


def test_the_sweep_size_is_refused_by_arithmetic_before_anything_is_expanded(tmp_path: Path) -> None:
    # Before: seeds = 5000000000 was a MemoryError; 1,000 x 1,000 values x 1,000 seeds ran for minutes.
    p = tmp_path / "s.toml"
    p.write_text('[sweep]\nscenario = "sched-idle"\nseeds = 5000000000\n')
    with pytest.raises(UsageError, match=r"sweep\.max_runs: the sweep is 5,000,000,000 runs .*max_runs = 5000000000"):
        load_spec(p)
    values = ", ".join(str(i) for i in range(1, 1001))
    axes = "".join(f"[[sweep.axis]]\nkey = {k!r}\nvalues = [{values}]\n" for k in ("task.0.count", "task.1.count"))
    p.write_text(f'[sweep]\nscenario = "sched-idle"\nseeds = 1000\n{axes}')
    t0 = time.monotonic()
    with pytest.raises(
        UsageError, match=r"1,000,000,000 runs \(1000 task\.0\.count x 1000 task\.1\.count x 1000 seeds"
    ):
        load_spec(p)
    assert time.monotonic() - t0 < 2.0


def test_a_large_allowed_sweep_starts_at_once(tmp_path: Path) -> None:
    # Before: 100 x 100 x 1,000 took 52 s and 2.66 GB before the first run.
    durations = ", ".join(f'"{i}ms"' for i in range(1, 101))
    counts = ", ".join(str(i) for i in range(1, 101))
    (tmp_path / "tiny.toml").write_text(TINY)
    p = tmp_path / "s.toml"
    p.write_text(
        f'[sweep]\nscenario = "tiny.toml"\nseeds = 1000\nmax_runs = 10000000\n'
        f'[[sweep.axis]]\nkey = "measure.duration"\nvalues = [{durations}]\n'
        f'[[sweep.axis]]\nkey = "task.0.count"\nvalues = [{counts}]\n'
    )
    t0 = time.monotonic()
    spec = load_spec(p)  # the axes' 200 values checked, nothing expanded
    tracemalloc.start()
    try:
        first = list(itertools.islice(pending(spec, set()), 3))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.monotonic() - t0 < 5.0
    assert peak < 2**20, peak
    assert spec.size == 10_000_000 and len(spec.seeds) == 1000
    assert first == [({"measure.duration": "1ms", "task.0.count": 1}, s) for s in (1, 2, 3)]


@pytest.mark.parametrize(
    ("line", "path"),
    [
        ("seeds = true", "sweep.seeds"), ("seeds = 0", "sweep.seeds"), ("seeds = -1", "sweep.seeds"),
        ("seeds = 1.5", "sweep.seeds"), ('seeds = "5"', "sweep.seeds"), ("seeds = []", "sweep.seeds"),
        ("seeds = [1, 1]", "sweep.seeds"), ("seeds = [true]", "sweep.seeds"), ("seeds = [-1]", "sweep.seeds"),
        ("seeds = [[1]]", "sweep.seeds"),
        ("max_runs = 0", "sweep.max_runs"), ("max_runs = true", "sweep.max_runs"),
        ('max_runs = "1e9"', "sweep.max_runs"), ("axis = 5", "sweep.axis"),
        ('axis = [{ key = "task.0.count", values = [1, 1] }]', r"sweep.axis\[0\].values"),
        ('axis = [{ key = "seed", values = [1] }]', r"sweep.axis\[0\].key"),
        ('axis = [{ key = 7, values = [1] }]', r"sweep.axis\[0\].key"),
        ("out = 5", "sweep.out"),
    ],
)  # fmt: skip
def test_bad_seeds_limits_and_axes_are_clear_errors(tmp_path: Path, line: str, path: str) -> None:
    p = tmp_path / "s.toml"
    p.write_text(f'[sweep]\nscenario = "sched-idle"\n{line}\n')
    with pytest.raises(ScenarioError, match=rf"s\.toml: {path}: .*; accepted: "):
        load_spec(p)


@pytest.mark.parametrize("line", [f"seeds = {2**63}", f"seeds = [{2**64}]"])
def test_integers_beyond_64_bits_are_toml_syntax_errors(tmp_path: Path, line: str) -> None:
    # The core reads TOML's integers as 64-bit, as TOML 1.0 lets it.
    p = tmp_path / "s.toml"
    p.write_text(f'[sweep]\nscenario = "sched-idle"\n{line}\n')
    with pytest.raises(ScenarioError, match=r"s\.toml: syntax error: .*line 3") as e:
        load_spec(p)
    assert e.value.code == "SL100"


def test_bad_jobs_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = _tiny_spec(tmp_path)
    for jobs in ("-1", "0", "100000"):
        assert _main(str(p), "--jobs", jobs) == 2
        assert "--jobs" in capsys.readouterr().err
    assert not (tmp_path / "m.sweep").exists()


def test_a_second_sweep_into_the_same_out_is_refused(tmp_path: Path) -> None:
    spec = load_spec(_tiny_spec(tmp_path))
    first = sweep._Store(spec)
    try:
        with pytest.raises(UsageError, match="another `schedlab sweep` is writing there"):
            sweep._Store(spec)
    finally:
        first.close()
    sweep._Store(spec).close()


# ------------------------------------------------------------ spec property

EXAMPLES = int(os.environ.get("SCHEDLAB_SWEEP_SPEC_EXAMPLES", "150"))

_scalars = st.one_of(
    st.integers(-5, 10), st.integers(-(2**70), 2**70), st.floats(), st.booleans(), st.text(max_size=6),
    st.sampled_from(["6.1", "2.6.35", "4x4", "uma8", "0-1", "auto", "1ms", "", "9.9", "2048"]),
)  # fmt: skip
#: Any TOML value: scalars, huge numbers, nested arrays and tables.
_values = st.recursive(
    _scalars, lambda ch: st.one_of(st.lists(ch, max_size=3), st.dictionaries(st.text(max_size=4), ch, max_size=2)),
    max_leaves=6,
)  # fmt: skip


def _mostly(good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any] = _values) -> st.SearchStrategy[Any]:
    """``good`` five times in six, else anything: specs that get past the first key."""
    return st.integers(0, 5).flatmap(lambda i: bad if i == 5 else good)


#: Keys the tiny scenario has, with values it takes (and some it does not), and keys it does not.
_GOOD = {
    "task.0.count": st.integers(0, 9),
    "task.0.cpus": st.sampled_from(["0-1", "0", [0, 1, 2], [3], "1-3", "0-7"]),
    "kernel.version": st.sampled_from(["6.1", "5.5", "2.6.35", "4.19", "9.9"]),
    "measure.duration": st.sampled_from(["1ms", "2ms", "3ms", "-1ms"]),
    "kernel.vm.kswapd_threads": st.sampled_from([1, 2, "auto", 4, {"auto": 2, "max": 4}, 0]),
    "machine.preset": st.sampled_from(["4cpu", "uma8", "4x4", "nope"]),
}
_OTHER_KEYS = ["seed", "run_id", "error", "events", "", "task.9.nice", "a..b", 'kernel.sysctl."x.y"', "task"]
_axis = _mostly(
    st.sampled_from(sorted(_GOOD)).flatmap(
        lambda k: st.fixed_dictionaries(
            {"key": st.just(k), "values": st.lists(_mostly(_GOOD[k]), min_size=1, max_size=4, unique_by=repr)}
        )
    ),
    st.one_of(
        st.fixed_dictionaries(
            {"key": st.one_of(st.sampled_from(_OTHER_KEYS), _values), "values": st.lists(_values, max_size=3)}
        ),
        _values,
    ),
)
_sweep_table = st.fixed_dictionaries(
    {
        "scenario": _mostly(st.just("tiny.toml"), st.sampled_from(["sched-idle", "nope", "", "/dev/null", 7])),
        "seeds": _mostly(st.integers(1, 3), st.one_of(
            st.integers(-3, 6), st.integers(-(2**70), 2**70), st.lists(st.integers(-2, 2**64), max_size=4), _values,
        )),
        "axis": _mostly(st.lists(_axis, max_size=3)),
    },
    optional={
        "max_runs": _mostly(st.integers(1, 100)),
        "out": _mostly(st.just("o"), st.sampled_from(["/dev/null", "FILE/sub", "", "/proc/x", "FILE"])),
        "set": _mostly(st.dictionaries(st.sampled_from(sorted(_GOOD)), _values, max_size=2)),
        "metrics": _mostly(st.dictionaries(
            st.sampled_from(["idle", "seed", "events", "", "x.y"]),
            _mostly(st.just({"mpstat": "average", "cpu": "all", "field": "idle"})), max_size=2,
        )),
    },
)  # fmt: skip


def _toml(v: Any) -> str:
    """Inline TOML for a generated value (json strings are TOML basic strings)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
    if isinstance(v, str):
        return _toml_str(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml(x) for x in v) + "]"
    return "{ " + ", ".join(f"{_toml_str(k)} = {_toml(x)}" for k, x in v.items()) + " }"


def _toml_str(s: str) -> str:
    """A TOML basic string (JSON's escapes, and DEL, which TOML wants escaped too)."""
    return json.dumps(s, ensure_ascii=False).replace("\x7f", "\\u007f")


@settings(
    max_examples=EXAMPLES, deadline=None, derandomize=os.environ.get("SCHEDLAB_PROPERTY_RANDOM", "") != "1",
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)  # fmt: skip
@given(
    table=_sweep_table,
    unknown=_mostly(st.none()),
    raw=_mostly(st.none(), st.text(max_size=40)),
)
def test_random_specs_are_a_clean_error_or_a_spec_whose_rows_fit(
    table: dict[str, Any], unknown: Any, raw: str | None
) -> None:
    """Wrong types, huge numbers, empty and nested axes, random text: a
    SchedlabError (exit 2) or a spec whose axis values fit its columns."""
    import pyarrow as pa

    if unknown is not None:
        table = {**table, "frob": unknown}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        (tmp / "tiny.toml").write_text(TINY)
        (tmp / "FILE").write_text("x")
        p = tmp / "s.toml"
        text = (
            raw
            if raw is not None
            else "[sweep]\n" + "".join(f"{_toml_str(k)} = {_toml(v)}\n" for k, v in table.items())
        )
        p.write_text(text)
        try:
            spec = load_spec(p)
        except SchedlabError as e:
            assert e.code.startswith("SL") and e.message
            event(f"refused: {e.code} {e.message.split(': ')[1][:20]}")
            return
        event(f"accepted: {len(spec.axes)} axes")
        assert spec.size <= spec.max_runs
        schema = sweep._schema(spec)
        for values, seed in itertools.islice(spec.points(), 8):
            row = sweep._cells(spec, {"run_id": "x", **values, "seed": seed, "error": None})
            pa.Table.from_pylist([{c: row.get(c) for c in schema.names}], schema=schema)
