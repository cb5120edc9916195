"""docs/tutorial.md runs as written.

The tutorial's steps, in order: every ``$ schedlab ...`` line of its
```console and ```sh blocks is a command, every ```toml block whose first
line is ``# file: NAME`` is a file to write first, and every ```python block
is a script. They run in one empty directory with the CLI entry point of
``.venv`` (``python -m schedlab`` without one); a step that fails (a
non-zero exit status) fails the test with its output. A faster check, without
the native module, parses every command with the real argument parser.
"""

from __future__ import annotations

import contextlib
import io
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

import pytest

from conftest import PYTHON_DIR, REPO

TUTORIAL = REPO / "docs" / "tutorial.md"
FILE_MARK = "# file: "


class Step(NamedTuple):
    kind: str  # "file", "command" or "python"
    text: str  # the file's or script's text, or the command line
    line: int  # where it is in the tutorial (1-based)
    name: str = ""  # the file's name


def steps(text: str) -> list[Step]:
    """The tutorial's steps in document order."""
    out: list[Step] = []
    lang: str | None = None
    body: list[str] = []
    start = 0
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            if lang is None:
                lang, body, start = line[3:].strip().split(" ")[0], [], n
                continue
            out += _block(lang, body, start)
            lang = None
            continue
        if lang is not None:
            body.append(line)
    assert lang is None, f"{TUTORIAL}:{start}: a code block is not closed"
    return out


def _block(lang: str, body: list[str], start: int) -> list[Step]:
    if lang == "toml" and body and body[0].startswith(FILE_MARK):
        return [Step("file", "\n".join(body[1:]) + "\n", start, body[0][len(FILE_MARK) :].strip())]
    if lang == "python":
        return [Step("python", "\n".join(body) + "\n", start)]
    if lang not in ("console", "sh"):
        return []
    out: list[Step] = []
    pending: list[str] = []
    for i, line in enumerate(body):
        if pending or line.startswith("$ "):
            pending.append(line[2:] if not pending else line)
            if line.endswith("\\"):
                pending[-1] = pending[-1][:-1]
                continue
            cmd = " ".join(p.strip() for p in pending)
            pending = []
            if cmd.startswith("schedlab "):
                out.append(Step("command", cmd, start + 1 + i))
    return out


def _argv(cmd: str) -> list[str]:
    words = shlex.split(cmd)
    assert not {"|", ">", "<", "&&", ";"} & set(words), f"{cmd}: a tutorial command runs without a shell"
    return words


def _schedlab() -> list[str]:
    exe = REPO / ".venv" / "bin" / "schedlab"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "schedlab"]


def _python() -> str:
    exe = REPO / ".venv" / "bin" / "python"
    return str(exe) if exe.exists() else sys.executable


def test_the_tutorial_has_steps() -> None:
    found = steps(TUTORIAL.read_text(encoding="utf-8"))
    kinds = {s.kind for s in found}
    assert kinds == {"file", "command", "python"}, kinds
    assert sum(s.kind == "command" for s in found) >= 10


def test_every_command_parses() -> None:
    """Each command line is one the parser accepts (no native module needed)."""
    from schedlab.cli import build_parser
    from schedlab.errors import UsageError

    for s in steps(TUTORIAL.read_text(encoding="utf-8")):
        if s.kind == "command":
            argv = _argv(s.text)[1:]
            try:
                with contextlib.redirect_stderr(io.StringIO()):  # argparse prints the usage first
                    build_parser(argv[0]).parse_args(argv)
            except (UsageError, SystemExit) as e:
                pytest.fail(f"{TUTORIAL.name}:{s.line}: {s.text}: {e}")


@pytest.mark.native
def test_the_tutorial_runs(tmp_path: Path) -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PYTHON_DIR), env.get("PYTHONPATH", "")) if p)
    env["MPLBACKEND"] = "Agg"
    env.pop("SCHEDLAB_SCENARIOS", None)
    timings: list[tuple[float, str]] = []
    for s in steps(TUTORIAL.read_text(encoding="utf-8")):
        where = f"{TUTORIAL.name}:{s.line}"
        if s.kind == "file":
            (tmp_path / s.name).write_text(s.text, encoding="utf-8")
            continue
        if s.kind == "command":
            argv, label = _schedlab() + _argv(s.text)[1:], s.text
        else:
            argv, label = [_python(), "-c", s.text], "python block"
        t0 = time.monotonic()
        r = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False)
        timings.append((time.monotonic() - t0, f"{where}: {label}"))
        if r.returncode != 0:
            pytest.fail(
                f"{where}: {label}\nexit status {r.returncode}\n"
                f"--- stdout (end)\n{r.stdout[-3000:]}\n--- stderr (end)\n{r.stderr[-3000:]}"
            )
    total = sum(t for t, _ in timings)
    slowest = ", ".join(f"{t:.1f} s {what}" for t, what in sorted(timings, reverse=True)[:3])
    print(f"tutorial: {len(timings)} steps in {total:.1f} s; slowest: {slowest}")
