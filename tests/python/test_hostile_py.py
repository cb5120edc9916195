"""Hostile inputs to the Python front end (issue 35, round two): every one a
clear SL001/SL1xx error naming the flag, the file and the key path, or a
correct run; never a traceback, never a silently changed name.

The Hypothesis tests draw their examples deterministically (derandomize) and
stay small: each runs in a few seconds.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import schedlab
from conftest import TINY
from schedlab import native, rtapp
from schedlab.errors import NotModelledError, ScenarioError, SchedlabError, UsageError
from schedlab.scenarios import read_text

pytestmark = pytest.mark.native

FAST = settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))


def _schedlab(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(
        [sys.executable, "-m", "schedlab", *args], input=stdin, capture_output=True, check=False, timeout=120
    )
    return subprocess.CompletedProcess(r.args, r.returncode, r.stdout.decode(errors="replace"),
                                       r.stderr.decode(errors="replace"))  # fmt: skip


def _refused(r: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith("schedlab: error: [SL"), r.stderr
    for f in fragments:
        assert f in r.stderr, (f, r.stderr)


# ------------------------------------------------------------ export-rtapp


def test_export_to_a_full_disk_is_a_clear_error(tmp_path: Path) -> None:
    r = _schedlab("export-rtapp", "rtapp-fifo-idle", "--target", "head", "-o", "/dev/full")
    _refused(r, "--out /dev/full: cannot write: No space left on device")
    with Path("/dev/full").open("wb") as full:
        p = subprocess.run(
            [sys.executable, "-m", "schedlab", "export-rtapp", "rtapp-fifo-idle", "--target", "head"],
            stdout=full, stderr=subprocess.PIPE, text=True, check=False,
        )  # fmt: skip
    assert p.returncode == 2 and "stdout: cannot write" in p.stderr and "Traceback" not in p.stderr, p.stderr
    # A good file is replaced whole, and only by a whole export.
    out = tmp_path / "w.json"
    r = _schedlab("export-rtapp", "rtapp-fifo-idle", "--target", "head", "-o", str(out), "--calibration", "CPU3")
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["global"]["calibration"] == "CPU3"


@pytest.mark.parametrize("bad", ["banana", "-5", "0", "CPUx", "CPU-1", "cpu0", "1e3", "", "2147483648", "CPU8192"])
def test_calibration_must_be_a_cpu_or_ns_per_loop(bad: str) -> None:
    with pytest.raises(UsageError, match=r"--calibration .*accepted: CPUn.*ns per loop"):
        rtapp.check_calibration(bad)


def test_calibration_is_checked_before_any_work(tmp_path: Path) -> None:
    # The scenario does not exist: the calibration is what is reported.
    r = _schedlab("export-rtapp", "no-such-scenario", "--calibration", "banana", "-o", str(tmp_path / "x.json"))
    _refused(r, "[SL001] --calibration 'banana': accepted: CPUn")
    assert not (tmp_path / "x.json").exists()
    assert rtapp.check_calibration("CPU0") == "CPU0"
    assert rtapp.check_calibration("CPU007") == "CPU7"
    assert rtapp.check_calibration("250") == 250 and rtapp.check_calibration(250) == 250
    for bad in (True, 0, -1, 2.5, None, ["CPU0"]):
        with pytest.raises(UsageError, match="calibration"):
            rtapp.export(Path("x.toml"), TINY, calibration=bad)  # type: ignore[arg-type]


# ------------------------------------------------------------------ abtest


ABTEST = ["abtest", "--a", 'kernel.features=["NO_KTHREAD_STACKING"]', "--b", 'kernel.features=["KTHREAD_STACKING"]']


@pytest.mark.parametrize(
    ("flag", "value", "expected"),
    [
        ("--alpha", "7", "--alpha 7.0: accepted: a false discovery rate strictly between 0 and 1"),
        ("--alpha", "nan", "--alpha nan: accepted"),
        ("--alpha", "inf", "--alpha inf: accepted"),
        ("--alpha", "0", "--alpha 0.0: accepted"),
        ("--alpha", "1", "--alpha 1.0: accepted"),
        ("--scenarios", "0", "--scenarios 0: accepted: an integer from 1 to"),
        ("--scenarios", "100000000", "--scenarios 100000000: accepted"),
        ("--repeats", "1", "--repeats 1: accepted: an integer from 2 to 1000 (a t-test needs two seeds per side)"),
        ("--top", "0", "--top 0: accepted: an integer >= 1"),
        ("--jobs", "0", "--jobs 0: accepted: an integer from 1 to"),
        ("--seed", "-1", "--seed -1: accepted: an integer from 0 to"),
        ("--duration", "banana", "--duration 'banana': accepted: a duration"),
        ("--duration", '1s"\n[x]', "--duration"),
        ("--version", "6.1\"'", "--version"),
    ],
)
def test_abtest_options_are_checked_before_any_work(
    flag: str, value: str, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from schedlab.cli import main

    out = tmp_path / "ab"
    assert main([*ABTEST, "--out", str(out), flag, value]) == 2
    err = capsys.readouterr().err
    assert err.startswith("schedlab: error: [SL001] ") and expected in err, err
    assert not out.exists()  # refused before anything was written


def test_abtest_api_checks_its_arguments() -> None:
    from schedlab.abtest import abtest, generate

    cases = generate(1, 1)
    for kwargs, match in (
        ({"alpha": 7.0}, "alpha 7.0"),
        ({"alpha": math.nan}, "alpha nan"),
        ({"repeats": 1}, "repeats 1"),
        ({"jobs": 0}, "jobs 0"),
        ({"repeats": "5"}, "repeats '5'"),
    ):
        args: dict[str, Any] = {"repeats": 2, "jobs": 1, "alpha": 0.05} | kwargs
        with pytest.raises(UsageError, match=match):
            abtest(cases, [], [], **args)
    with pytest.raises(UsageError, match="cases="):
        abtest("nope", [], [], 2, 1, 0.05)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="scenarios 0"):
        generate(1, 0)
    with pytest.raises(UsageError, match="version"):
        generate(1, 1, version='6.1"\nx = 1')


def test_an_abtest_out_that_is_a_file_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from schedlab.cli import main

    f = tmp_path / "file"
    f.write_text("x")
    assert main([*ABTEST, "--out", str(f), "--scenarios", "1", "--repeats", "2"]) == 2
    assert f"--out {f}/scenarios: cannot create the directory" in capsys.readouterr().err


_values = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True), st.text(max_size=4)
)


@FAST
@given(scenarios=_values, repeats=_values, seed=_values, alpha=_values, jobs=_values, top=_values)
def test_abtest_option_checks_take_exactly_what_is_meaningful(
    scenarios: Any, repeats: Any, seed: Any, alpha: Any, jobs: Any, top: Any
) -> None:
    from schedlab.abtest import MAX_JOBS, MAX_REPEATS, MAX_RUNS, MAX_SCENARIOS, check_options

    def is_int(v: Any, lo: int, hi: float) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi

    good = (
        is_int(scenarios, 1, MAX_SCENARIOS)
        and is_int(repeats, 2, MAX_REPEATS)
        and is_int(seed, 0, 2**64 - 1)
        and isinstance(alpha, (int, float)) and not isinstance(alpha, bool) and math.isfinite(alpha) and 0 < alpha < 1
        and (jobs is None or is_int(jobs, 1, MAX_JOBS))
        and is_int(top, 1, math.inf)
        and 2 * scenarios * repeats <= MAX_RUNS
    )  # fmt: skip
    try:
        check_options(scenarios=scenarios, repeats=repeats, seed=seed, alpha=alpha, jobs=jobs, top=top)
    except UsageError as e:
        assert not good, e
        assert e.message.startswith("--") and "accepted: " in e.message
    else:
        assert good


# ------------------------------------------------------------ load and plot


def _write_json(path: Path, doc: Any) -> Path:
    path.write_text(json.dumps(doc))
    return path


def test_a_report_with_a_wrong_field_type_names_the_field(tmp_path: Path) -> None:
    pytest.importorskip("pandas")
    bad = _write_json(tmp_path / "r.json", {"tasks": [], "mpstat": {"samples": "lol", "average": 5}})
    msg = f"{bad}: mpstat.samples: expected a list of mpstat samples (objects with end_ns and rows), not a string"
    with pytest.raises(UsageError, match=msg.replace("(", r"\(").replace(")", r"\)")):
        schedlab.load(bad)
    with pytest.raises(UsageError, match=r"report: mpstat\.average: expected a list of mpstat rows"):
        schedlab.load({"tasks": [], "mpstat": {"average": 5}})
    doc = {"tasks": [{"comm": "a", "wakeup_latency_hist_us": [1, -2]}]}
    with pytest.raises(
        UsageError, match=r"tasks\[0\]\.wakeup_latency_hist_us\[1\]: expected an integer >= 0, not a number -2"
    ):
        schedlab.load(doc)
    pytest.importorskip("matplotlib")
    from schedlab.plot import plot_files

    with pytest.raises(UsageError, match=r"r\.json: mpstat\.samples: expected a list of mpstat samples"):
        plot_files([bad], tmp_path / "o")
    r = _schedlab("plot", str(bad), "--out", str(tmp_path / "o"))
    _refused(r, "mpstat.samples: expected a list")


def test_load_refuses_deep_cyclic_and_wrong_arguments(tmp_path: Path) -> None:
    pytest.importorskip("pandas")
    deep = tmp_path / "deep.json"
    deep.write_text('{"tasks": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(UsageError, match="nested deeper than 64 levels"):
        schedlab.load(deep)
    task: dict[str, Any] = {"comm": "a"}
    task["window"] = task  # a cycle, from Python
    with pytest.raises(UsageError, match=r"tasks\[0\]\.window\.window.*nested deeper than 64 levels"):
        schedlab.load({"tasks": [task]})
    huge = tmp_path / "huge.json"
    huge.write_text('{"tasks": [], "x": ' + "1" * 5000 + "}")
    with pytest.raises(UsageError, match="more than 4300 digits"):
        schedlab.load(huge)
    for bad in (123, None, b"r.json", 1.5, ["r.json"], ""):
        with pytest.raises(UsageError, match=r"src=.*accepted: a report \(a path to a schedlab run/real --json file"):
            schedlab.load(bad)
    with pytest.raises(UsageError, match="not a regular file"):
        schedlab.load("/dev/zero")
    with pytest.raises(UsageError, match="cannot read"):
        schedlab.load("a\0b")


def test_plot_arguments_are_checked(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from schedlab.plot import plot_files

    r = _write_json(tmp_path / "r.json", {"tasks": []})
    for args, match in (
        (("r.json", tmp_path), "inputs="),
        (([], tmp_path), "inputs="),
        (([5], tmp_path), "inputs: 5"),
        (([r], 7), "out: 7"),
        (([r], tmp_path, "gif"), "--format 'gif'"),
        (([r], tmp_path, "png", (1.0, 0.5)), "window="),
        (([r], tmp_path, "png", (0.0, math.inf)), "window="),
    ):
        with pytest.raises(UsageError, match=match):
            plot_files(*args)
    with pytest.raises(UsageError, match="cannot create the directory"):
        plot_files([r], r / "sub")
    with pytest.raises(UsageError, match="an empty window"):
        _window_of("1s:0.5s")


def _window_of(text: str) -> Any:
    from schedlab.plot import _window

    return _window(text)


def test_plot_names_from_the_input_stay_inside_out(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from schedlab.plot import plot_files

    doc = {"experiment": "../../evil", "results": [
        {"table": "t/x", "variant": "a$\\frac$", "params": {"n": 1}, "metrics": {"m\0$x$": 1.0}},
        {"table": "t/x", "variant": "a$\\frac$", "params": {"n": 2}, "metrics": {"m\0$x$": 2.0}},
    ]}  # fmt: skip
    out = plot_files([_write_json(tmp_path / "e.json", doc)], tmp_path / "o", "svg")
    assert len(out) == 1 and out[0].parent == tmp_path / "o", out
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == [out[0].name]  # no temporary file left


# Report-shaped documents where any field may have the wrong type.
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), st.text(max_size=6))
_json = st.recursive(
    _scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=4), c, max_size=3), max_leaves=8
)


def _maybe(right: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(right, right, right, _json)


_row = st.fixed_dictionaries(
    {"cpu": _maybe(st.sampled_from(["all", 0, 1, 2, 3])), "idle": _maybe(st.floats(0, 100))},
    optional={"usr": _maybe(st.floats(0, 100))},
)
_sample = st.fixed_dictionaries({"end_ns": _maybe(st.integers(0, 10**10)), "rows": _maybe(st.lists(_row, max_size=5))})
_task = st.fixed_dictionaries(
    {
        "comm": _maybe(st.text(max_size=6)),
        "pid": _maybe(st.integers(0, 100)),
        "group": _maybe(st.sampled_from(["a", "b$", "$c$"])),
        "wakeup_latency_hist_us": _maybe(st.lists(st.integers(0, 50), max_size=12)),
    },
    optional={"window": _maybe(st.dictionaries(st.text(max_size=3), _json, max_size=3))},
)
_domain = st.dictionaries(st.sampled_from(["name", "lb_count", "x"]), _json)
_cpu = st.fixed_dictionaries({"cpu": _maybe(st.integers(0, 3)), "domains": _maybe(st.lists(_domain, max_size=2))})
_report = st.fixed_dictionaries(
    {"tasks": _maybe(st.lists(_task, max_size=3))},
    optional={
        "mpstat": _maybe(
            st.fixed_dictionaries({"samples": _maybe(st.lists(_sample, max_size=3)), "average": _maybe(st.lists(_row))})
        ),
        "cpus": _maybe(st.lists(st.dictionaries(st.text(max_size=3), _json, max_size=3), max_size=3)),
        "schedstat": _maybe(st.fixed_dictionaries({"cpus": _maybe(st.lists(_cpu, max_size=2))})),
        "measure": _maybe(st.fixed_dictionaries({"start_ns": _maybe(st.integers(0, 10**9))})),
        "source": _maybe(st.text(max_size=5)),
    },
)


@FAST
@given(doc=st.one_of(_report, _json))
def test_load_gives_tables_or_a_schedlab_error(doc: Any) -> None:
    pytest.importorskip("pandas")
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "r.json"
        path.write_text(json.dumps(doc))
        for src in ([doc] if isinstance(doc, dict) else []) + [path]:
            try:
                t = schedlab.load(src)
            except SchedlabError as e:
                assert isinstance(e, UsageError) and e.message, e
            else:
                assert {"tasks", "mpstat"} <= set(t.names())


_result = st.fixed_dictionaries(
    {
        "table": _maybe(st.sampled_from(["t", "u/$x$"])),
        "variant": _maybe(st.sampled_from(["v", "w$"])),
        "params": _maybe(st.dictionaries(st.sampled_from(["n", "k"]), _maybe(st.integers(0, 4)))),
        "metrics": _maybe(st.dictionaries(st.sampled_from(["m", "$"]), _maybe(st.floats()))),
        "published": _maybe(st.dictionaries(st.sampled_from(["m"]), _maybe(st.floats()))),
    }
)


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(
    doc=st.one_of(
        _report,
        st.fixed_dictionaries(
            {"experiment": _maybe(st.text(max_size=4)), "results": _maybe(st.lists(_result, max_size=4))}
        ),
    )
)
def test_plot_draws_or_gives_a_schedlab_error(doc: Any) -> None:
    pytest.importorskip("matplotlib")
    from schedlab.plot import plot_files

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "r.json"
        path.write_text(json.dumps(doc))
        try:
            written = plot_files([path], Path(d) / "o", "png")
        except SchedlabError as e:
            assert isinstance(e, UsageError) and e.message, e
        else:
            assert all(p.parent == Path(d) / "o" and p.stat().st_size > 0 for p in written)


# ----------------------------------------------------- text: TOML and UTF-8


def test_a_suite_nested_too_deep_is_a_scenario_error(tmp_path: Path) -> None:
    from schedlab.validation import load_suite

    f = tmp_path / "x.toml"
    f.write_text("x = " + "[" * 5000 + "]" * 5000)
    with pytest.raises(ScenarioError, match=r"x\.toml: syntax error: .*recursion limit"):
        load_suite(f)


def _nested_loops(depth: int) -> str:
    body = '{ run = "1ms" }'
    for _ in range(depth):
        body = f"{{ loop = {{ count = 2, body = [{body}] }} }}"
    return TINY.replace('program = [ { run = "10ms" } ]', f"program = [{body}]")


def test_a_syntax_error_on_a_long_line_keeps_its_reason(tmp_path: Path) -> None:
    f = tmp_path / "deep.toml"
    f.write_text(_nested_loops(30))
    with pytest.raises(ScenarioError) as e:
        native.check(f.read_text(), str(f), [])
    assert "recursion" in e.value.message or "nest" in e.value.message, e.value.message


def test_stdin_that_is_not_utf8_is_a_usage_error() -> None:
    junk = bytes(range(256)) * 8
    r = _schedlab("run", "-", stdin=junk)
    _refused(r, "[SL001] <stdin>: not UTF-8 text at byte 128")
    r = _schedlab("check", "-", stdin=TINY.encode() + b"# \xed\xa0\x80 a lone surrogate, encoded\n")
    _refused(r, f"not UTF-8 text at byte {len(TINY) + 2}")
    r = _schedlab("check", "-", stdin=TINY.encode())
    assert r.returncode == 0, r.stderr


def test_files_that_are_not_utf8_or_too_big_or_not_files(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_bytes(TINY.encode() + b'description = "\xed\xb2\x80"\n')
    with pytest.raises(UsageError, match=rf"bad\.toml: not UTF-8 text at byte {len(TINY) + 15}"):
        schedlab.check_scenario(bad)
    big = tmp_path / "big.toml"
    with big.open("wb") as f:
        f.truncate(65 * 2**20)  # sparse: nothing is read
    with pytest.raises(
        UsageError, match=r"big\.toml: 65 MiB, too large; accepted: a UTF-8 text file of at most 64 MiB"
    ):
        read_text(big)
    small = tmp_path / "s.toml"
    small.write_text(TINY)
    with pytest.raises(
        UsageError, match=r"s\.toml: \d+ bytes, too large; accepted: a UTF-8 text file of at most 10 bytes"
    ):
        read_text(small, limit=10)
    for where in ("/dev/zero", "/dev/urandom"):
        scen = tmp_path / "z.toml"
        scen.write_text(f'rtapp = "{where}"\n' + TINY)
        with pytest.raises(UsageError, match=rf'z\.toml: rtapp = "{where}": {where}: not a regular file'):
            schedlab.check_scenario(scen)
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    scen.write_text(f'rtapp = "{fifo}"\n' + TINY)
    with pytest.raises(UsageError, match="not a regular file"):
        schedlab.check_scenario(scen)  # refused before opening: no writer is needed


# ------------------------------------------------------------------ rt-app in


#: A short run of an rt-app workload on 4 CPUs (the core imports the JSON).
_SHORT = [("machine.preset", '"4cpu"'), ("measure.duration", '"2ms"'), ("measure.warmup", '"0ms"')]


def _rtapp_run(tasks: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    doc = {"global": {"duration": 1}, "tasks": tasks}
    f = tmp_path / "w.json"
    f.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return dict(native.run(f.read_text(encoding="utf-8"), str(f), 1, _SHORT, False, rtapp=True))


def test_rtapp_names_are_kept_exactly(tmp_path: Path) -> None:
    for name in ("t😀", "a,]", "a,}", 'q"\\', "x\u0001\u007f", "𝔘ñî"):
        r = _rtapp_run({name: {"run": 10, "sleep": 10}, "b,]": {"run": 1, "sleep": 10}}, tmp_path)
        assert [g["name"] for g in r["groups"]] == [name, "b,]"]
    # Trailing commas go; commas inside strings stay.
    doc = rtapp.loads('{"tasks": {"a,]": {"run": 1, "barrier": ",}",},}, /* c, ] */}', "x.json")
    assert list(doc["tasks"]) == ["a,]"] and doc["tasks"]["a,]"]["barrier"] == ",}"


@pytest.mark.parametrize(
    ("tasks", "cls", "message"),
    [
        ({"t1": {"loop": 1e24, "run": 1}}, ScenarioError,
         "tasks.t1.loop: 1e+24; accepted: an integer from -1 to 9223372036854775807"),
        ({"t1": {"loop": 10**24, "run": 1}}, ScenarioError, "tasks.t1.loop: 1000000000000000000000000; accepted"),
        ({"t1": {"run": 10**23}}, ScenarioError, "tasks.t1.run: 100000000000000000000000; accepted: an integer from 0"),
        ({"t1": {"run": 1, "instance": 10**20}}, ScenarioError, "tasks.t1.instance: 100000000000000000000; accepted"),
        ({"t1": {"run": 1, "cpus": [10**20]}}, ScenarioError, "tasks.t1.cpus[0]: 100000000000000000000; accepted"),
        ({"t1": {"run": 1, "cpus": []}}, ScenarioError, "tasks.t1.cpus: a list of 0 item(s); accepted: a non-empty"),
        ({"t1": {"run": 1, "delay": 10**17}}, ScenarioError, "tasks.t1.delay: 100000000000000000; accepted"),
        ({"t1": {"run": 1, "timer": {"ref": "unique", "period": 10**20}}}, ScenarioError, "tasks.t1.timer.period"),
        ({"t1": {"run": 1, "policy": ["SCHED_FIFO"]}}, ScenarioError, "tasks.t1.policy: a list of 1 item(s)"),
        ({"t1": {"run": [[1] * 10**5]}}, ScenarioError, "tasks.t1.run: a list of 1 item(s); accepted"),
        ({"a b": {"run": 1}}, ScenarioError, "tasks.a b: a task name schedlab cannot take"),
        ({"": {"run": 1}}, ScenarioError, 'tasks."": a task name schedlab cannot take'),
        ({"t\ud800": {"run": 1}}, ScenarioError, 'tasks."t\\ud800": a task name schedlab cannot take'),
        ({"t1": {"run": 1, "lock": "m\udfff"}}, ScenarioError, 'tasks.t1.lock: "m\\udfff"; accepted: a mutex name'),
        ({"t1": {"run": 1, "x\x00": 1}}, ScenarioError, 'tasks.t1."x\\u0000": not an rt-app key'),
        ({"t1": {"run": 1, "memrun": 5}}, NotModelledError, "tasks.t1.memrun"),
    ],
)  # fmt: skip
def test_rtapp_values_are_refused_with_their_rtapp_key_path(
    tasks: dict[str, Any], cls: type[Exception], message: str
) -> None:
    with pytest.raises(cls) as e:
        rtapp.to_scenario({"tasks": tasks}, "w.json")
    assert isinstance(e.value, SchedlabError)
    assert e.value.message.startswith("w.json: tasks.") and message in e.value.message, e.value.message
    # The message can be printed whatever the encoding: no lone surrogate.
    e.value.message.encode("utf-8")


def test_rtapp_json_nested_too_deep_or_with_huge_numbers(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text('{"tasks": ' + "[" * 100_000 + "]" * 100_000 + "}")
    r = _schedlab("run", str(deep), "--machine", "4cpu")
    _refused(r, "[SL100]", "deep.json: syntax error: line 1, column ",
             "not rt-app JSON: arrays and objects nested deeper than 64 levels")  # fmt: skip
    # A 5,000-digit number is read (as written) and refused at its key.
    with pytest.raises(
        ScenarioError, match=r"x\.json: tasks\.t\.run: 9{80}… \(5000 characters\); accepted: an integer"
    ):
        rtapp.import_workload('{"tasks": {"t": {"run": ' + "9" * 5000 + "}}}", "x.json")
    # loop = 1e24, as a user writes it: refused at the rt-app key, with the range.
    big = tmp_path / "big.json"
    big.write_text('{"tasks": {"thread0": {"phases": {"p1": {"loop": 1e24, "run": 10}}}}}')
    r = _schedlab("run", str(big), "--machine", "4cpu")
    _refused(r, "[SL102]", "big.json: tasks.thread0.phases.p1.loop: 1e24; accepted: an integer from -1 to "
             "9223372036854775807 (-1: forever)")  # fmt: skip
    with pytest.raises(ScenarioError, match=r"global\.duration: 100000; accepted: an integer from 1 to 86400"):
        rtapp.to_scenario({"global": {"duration": 100_000}, "tasks": {"t": {"run": 1}}}, "x.json")


_names = st.text(st.characters(codec="utf-8"), min_size=1, max_size=12)
#: Unicode's White_Space characters: the core refuses a task name with one
#: (Rust's char::is_whitespace).
_WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)


@FAST
@given(name=_names, barrier=_names)
def test_rtapp_names_round_trip_through_the_core(name: str, barrier: str) -> None:
    doc = {"tasks": {name: {"run": 10, "barrier": barrier, "sleep": 10}}}
    text = json.dumps(doc, ensure_ascii=bool(len(name) % 2))  # as escapes and as UTF-8
    try:
        r = native.run(text, "w.json", 1, _SHORT, False, rtapp=True)
    except ScenarioError as e:
        assert any(c in _WHITE_SPACE for c in name), e
        return
    assert [g["name"] for g in r["groups"]] == [name]


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=12,
)


@FAST
@given(doc=_json)
def test_the_core_reads_strict_json_as_python_does(doc: Any) -> None:
    for ascii_only in (True, False):
        assert native.rtapp_loads(json.dumps(doc, ensure_ascii=ascii_only), "x.json") == doc


def test_html_pages_are_written_whole_or_refused(tmp_path: Path) -> None:
    from schedlab.html import _page, _write

    page = _write(tmp_path / "h", _page("t", "schedlab run x", "a = 1\n", ["<p>\udc80</p>"], []))
    assert "<p>\\udc80</p>" in page.read_text(encoding="utf-8")  # a lone surrogate from a hand-made report
    assert [p.name for p in (tmp_path / "h").iterdir()] == ["index.html"]  # no temporary file left
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(UsageError, match=f"--html {f}/sub: cannot create the directory"):
        _write(f / "sub", "x")
    (tmp_path / "ro").mkdir()
    (tmp_path / "ro" / "index.html").mkdir()  # index.html is a directory: the rename fails
    with pytest.raises(UsageError, match=r"--html .*index\.html: cannot write"):
        _write(tmp_path / "ro", "x")
    assert [p.name for p in (tmp_path / "ro").iterdir()] == ["index.html"]
