"""Shared fixtures. The pure-Python tests need only ``python/`` on the path;
tests marked ``native`` need the extension built by ``make build``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

REPO = Path(__file__).resolve().parents[1]
PYTHON_DIR = REPO / "python"

# Run from a checkout without `make build`: import the package from the tree.
if str(PYTHON_DIR) not in sys.path:
    sys.path.insert(0, str(PYTHON_DIR))

#: The smallest valid scenario; bad-input tests break one thing in it.
TINY = """\
name = "tiny"
[machine]
preset = "4cpu"
[kernel]
version = "6.1"
[measure]
duration = "100ms"
[[task]]
name = "hog"
count = 2
program = [ { run = "10ms" } ]
"""


def tiny_loop(duration: str) -> str:
    """A 4-CPU scenario of six tasks that run 300 us and sleep 200 us, for
    `duration`: runs of a millisecond or two, for sweeps of many points."""
    return f"""\
name = "tiny"
[machine]
preset = "4cpu"
[kernel]
version = "6.1"
[measure]
warmup = "0ms"
duration = "{duration}"
[[task]]
name = "w"
count = 6
program = [{{ loop = {{ count = 0, body = [{{ run = "300us" }}, {{ sleep = "200us" }}] }} }}]
"""


class TraceEvent(NamedTuple):
    """One ftrace text line: timestamp (s), CPU, the pid of the task it ran
    in, the event name and its key=value fields."""

    t: float
    cpu: int
    who: int
    name: str
    fields: dict[str, str]


_TRACE_LINE = re.compile(r"^\s*\S+-(\d+)\s+\[(\d+)\][^:]*?\s(\d+\.\d+): (\w+): (.*)$")


def trace_events(text: str, names: tuple[str, ...] = ()) -> Iterator[TraceEvent]:
    """The events of an ftrace text trace (only `names` if given), in order."""
    for line in text.splitlines():
        m = _TRACE_LINE.match(line)
        if not m or (names and m.group(4) not in names):
            continue
        fields = dict(x.split("=", 1) for x in m.group(5).replace(" ==> ", " ").split() if "=" in x)
        yield TraceEvent(float(m.group(3)), int(m.group(2)), int(m.group(1)), m.group(4), fields)


@pytest.fixture
def tiny() -> str:
    return TINY


@pytest.fixture
def write_scenario(tmp_path: Path) -> Callable[..., Path]:
    """write_scenario(text, name="scenario.toml") -> path of a file in tmp_path."""

    def write(text: str, name: str = "scenario.toml") -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return write


def cli_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PYTHON_DIR), env.get("PYTHONPATH", "")) if p)
    env.setdefault("SCHEDLAB_SCENARIOS", str(REPO / "scenarios"))
    if extra:
        env.update(extra)
    return env


#: The type of the run_cli fixture.
RunCli = Callable[..., "subprocess.CompletedProcess[str]"]


@pytest.fixture
def run_cli() -> RunCli:
    """run_cli(*args, env=None) runs `python -m schedlab ARGS` in a subprocess."""

    def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "schedlab", *args],
            capture_output=True,
            text=True,
            env=cli_env(env),
            timeout=600,
            check=False,
        )

    return run
