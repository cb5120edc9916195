"""The core's floor plan holds (scripts/check-layout): no import cycle between
the core's source files, no file over 700 lines and no function over 150
outside tests and tables, sched/core.rs never branches on the scheduling
class, the rooms keep their floors (at most BACK_ARROWS imports run back up,
at most SIM_USERS files take the whole Sim), and no Python import circle
(imports inside functions counted). The checker itself is tested on small
trees that break each rule."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "check-layout"


def checker() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("check_layout", str(SCRIPT))
    spec = importlib.util.spec_from_loader("check_layout", loader)
    assert spec is not None
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def test_the_core_keeps_its_floor_plan() -> None:
    r = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, check=False)
    assert (r.returncode, r.stdout) == (0, "")


def fake_tree(tmp_path: Path, files: dict[str, str]) -> ModuleType:
    mod = checker()
    src = tmp_path / "src"
    for rel, text in files.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    setattr(mod, "SRC", src)  # noqa: B010 - a module loaded from a script file
    setattr(mod, "ROOT", tmp_path)  # noqa: B010
    return mod


def test_a_cycle_is_found(tmp_path: Path) -> None:
    mod = fake_tree(
        tmp_path,
        {
            "lib.rs": "pub mod a;\npub mod b;\n",
            "a.rs": "use crate::b::B;\npub struct A;\n",
            "b.rs": "use crate::a::A;\npub struct B;\n",
        },
    )
    assert mod.cycles(mod.graph()) == [[("a",), ("b",)]]


def test_a_reexport_is_followed(tmp_path: Path) -> None:
    # x -> m (mod.rs re-exports m::y::Y) resolves to m/y, which imports
    # nothing back: no cycle, and the edge lands on the defining file.
    mod = fake_tree(
        tmp_path,
        {
            "lib.rs": "pub mod m;\npub mod x;\n",
            "m/mod.rs": "pub mod y;\npub use y::Y;\n",
            "m/y.rs": "pub struct Y;\n",
            "x.rs": "use crate::m::Y;\n",
        },
    )
    g = mod.graph()
    assert g[("x",)] == {("m", "y")}
    assert mod.cycles(g) == []


@pytest.mark.parametrize("n", [149, 151])
def test_long_functions(tmp_path: Path, n: int) -> None:
    body = "\n".join("    let _x = 1;" for _ in range(n - 2))
    mod = fake_tree(tmp_path, {"lib.rs": f"fn f() {{\n{body}\n}}\n"})
    found = list(mod.long_functions(mod.SRC / "lib.rs"))
    assert found == ([("f", n)] if n > 150 else [])


def test_an_arrow_back_up_the_floors_is_counted(tmp_path: Path) -> None:
    # engine is the ground floor; sched stands above it: engine -> sched runs
    # back up, sched -> engine does not, and a file that takes the whole Sim
    # from sim/ is counted as such.
    mod = fake_tree(
        tmp_path,
        {
            "lib.rs": "pub mod engine;\npub mod sched;\npub mod sim;\n",
            "engine/mod.rs": "use crate::sched::Rq;\npub struct Ev;\n",
            "sched/mod.rs": "use crate::engine::Ev;\nuse crate::sim::Sim;\npub struct Rq;\n",
            "sim/mod.rs": "pub struct Sim;\n",
        },
    )
    g = mod.graph()
    assert mod.back_arrows(g) == ["engine -> sched", "sched -> sim"]
    assert mod.sim_users(g) == ["sched"]
    assert mod.room_cycles(g) == [[("engine",), ("sched",)]]


def test_a_python_circle_through_a_function_level_import_is_found(tmp_path: Path) -> None:
    mod = checker()
    pkg = tmp_path / "schedlab"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from schedlab import b\n")
    (pkg / "b.py").write_text("def f():\n    from schedlab import a\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from schedlab import a\n")
    (pkg / "d.py").write_text("from schedlab import _native, c\n")
    setattr(mod, "PY", pkg)  # noqa: B010 - a module loaded from a script file
    assert mod.python_cycles() == [["schedlab.a", "schedlab.b"]]
