"""Progress of long commands (schedlab.progress): a bar on a terminal, a line
per step elsewhere, nothing with --quiet; and the native Progress handle the
core publishes while a run simulates, which must not change the run."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from schedlab import native
from schedlab.progress import Steps, watch_run
from schedlab.scenarios import read_text, resolve

pytestmark = pytest.mark.native


def test_steps_write_a_line_per_step_off_a_terminal() -> None:
    out = io.StringIO()
    with Steps("demo", 3, stream=out) as s:
        s.note("derived x = 1")
        for i in range(3):
            s.done(f"v seed {i + 1}", 2.0)
    assert out.getvalue().splitlines() == [
        "  derived x = 1",
        "  demo: v seed 1 done (1/3)",
        "  demo: v seed 2 done (2/3)",
        "  demo: v seed 3 done (3/3)",
    ]
    assert s.sim_s == 6.0


def test_steps_quiet_write_nothing() -> None:
    out = io.StringIO()
    with Steps("demo", 2, quiet=True, stream=out) as s:
        s.note("x")
        s.done("a")
    assert out.getvalue() == ""


def _scenario() -> tuple[str, str]:
    p = resolve("n-hogs-n-cpus")
    return read_text(p), str(p)


def test_progress_handle_ends_at_the_run_end_and_changes_nothing() -> None:
    text, source = _scenario()
    handle = native.load().Progress()
    assert handle.read() == (0, 0, 0)
    with_progress = native.run(text, source, 1, [], False, progress=handle)
    without = native.run(text, source, 1, [], False)
    assert json.dumps(with_progress, sort_keys=True) == json.dumps(without, sort_keys=True)
    now_ns, end_ns, events = handle.read()
    assert now_ns == end_ns == with_progress["sim"]["end_ns"]
    assert events == with_progress["sim"]["events"]


def test_watch_run_returns_the_report_and_prints_nothing_for_a_short_run() -> None:
    text, source = _scenario()
    out = io.StringIO()
    report = watch_run(lambda p: native.run(text, source, 1, [], False, progress=p), "hogs", stream=out)
    assert report["sim"]["reason"] == "duration reached"
    assert out.getvalue() == ""


def test_watch_run_raises_the_runs_error(tmp_path: Path) -> None:
    def fails(_p: object) -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        watch_run(fails, "x", stream=io.StringIO())
