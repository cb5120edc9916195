"""The hostile-input corpus (tests/hostile/corpus.toml): every case names
the test that keeps it fixed, and that test must exist; a case with a
command line is also run here, as a user would type it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from _toml import tomllib
from conftest import REPO, TINY, cli_env

CORPUS = REPO / "tests" / "hostile" / "corpus.toml"
CASES: list[dict[str, Any]] = tomllib.loads(CORPUS.read_text(encoding="utf-8"))["case"]
CLASSES = {"error", "bounded", "exact", "intact"}


def _tests_in(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")}


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_every_case_has_a_class_and_a_test_that_exists(case: dict[str, Any]) -> None:
    assert case["class"] in CLASSES
    file, _, name = case["test"].partition("::")
    assert name in _tests_in(REPO / file), f"{case['test']} does not exist"


RUNNABLE = [c for c in CASES if "argv" in c]


@pytest.mark.native
@pytest.mark.parametrize("case", RUNNABLE, ids=[c["name"] for c in RUNNABLE])
def test_the_command_line_cases(case: dict[str, Any], tmp_path: Path) -> None:
    tiny = tmp_path / "tiny.toml"
    tiny.write_text(TINY, encoding="utf-8")
    argv = [a.replace("@TINY", str(tiny)).replace("@TMP", str(tmp_path)) for a in case["argv"]]
    stdin: bytes | None = None
    if "stdin_hex" in case:
        stdin = bytes.fromhex(case["stdin_hex"])
    elif case.get("stdin") == "@TINY_TEXT":
        stdin = TINY.encode()
    out = subprocess.run(
        [sys.executable, "-m", "schedlab", *argv],
        input=stdin if stdin is not None else b"",
        capture_output=True,
        env=cli_env(),
        timeout=300,
        check=False,
    )
    err = out.stderr.decode("utf-8", "replace")
    assert out.returncode == case["exit"], err
    assert case["stderr"] in err
    assert "Traceback" not in err
