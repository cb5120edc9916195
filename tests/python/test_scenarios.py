"""Finding bundled scenarios; their titles and experiment names are read by
the core (``schedlab.native.heading``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import RunCli
from schedlab.errors import UsageError
from schedlab.scenarios import ENV_VAR, bundled, read_text, resolve, scenarios_dir

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "scenarios"
    (root / "seeds").mkdir(parents=True)
    (root / "hog.toml").write_text('name = "hog"\ndescription = "two CPU hogs"\n')
    (root / "plain.toml").write_text('name = "plain"\n')
    (root / "broken.toml").write_text("name = \n")
    (root / "notes.txt").write_text("not a scenario")
    (root / "seeds" / "ktask-nice.toml").write_text(
        'description = "d"\n[experiment]\nname = "ktask-nice"\ntitle = "ktask helpers at MAX_NICE"\n'
    )
    (root / "seeds" / "kthread.toml").write_text('[experiment]\nname = "kthread-stacking"\n')
    (root / "seeds" / "hog.toml").write_text('description = "shadowed by the top-level hog"\n')
    monkeypatch.setenv(ENV_VAR, str(root))
    return root


def test_default_dir_is_the_package_data(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scenarios ship inside the package; the checkout's scenarios/ is a link to them."""
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert scenarios_dir() == REPO / "python" / "schedlab" / "data" / "scenarios"
    assert (REPO / "scenarios").resolve() == scenarios_dir().resolve()


def test_env_var(library: Path) -> None:
    assert scenarios_dir() == library


def test_bundled(library: Path) -> None:
    files = bundled()
    assert [f.name for f in files] == ["broken", "hog", "ktask-nice", "kthread", "plain"]
    by = {f.name: f for f in files}
    assert by["hog"].path == library / "hog.toml"
    assert by["hog"].title == "two CPU hogs" and not by["hog"].is_experiment
    assert by["plain"].title == "plain"
    assert by["ktask-nice"].experiment == "ktask-nice"
    assert by["ktask-nice"].title == "ktask helpers at MAX_NICE"
    assert by["kthread"].experiment == "kthread-stacking" and by["kthread"].is_experiment
    assert by["broken"].error is not None and "syntax error" in by["broken"].error


def test_bundled_missing_dir(tmp_path: Path) -> None:
    assert bundled(tmp_path / "nowhere") == []


def test_resolve(library: Path, tmp_path: Path) -> None:
    assert resolve("hog") == library / "hog.toml"
    assert resolve("ktask-nice") == library / "seeds" / "ktask-nice.toml"
    assert resolve("kthread-stacking") == library / "seeds" / "kthread.toml"  # by experiment name
    own = tmp_path / "mine.toml"
    own.write_text("")
    assert resolve(str(own)) == own


@pytest.mark.parametrize("arg", ["nope", "nope.toml", "dir/nope.toml"])
def test_resolve_unknown(library: Path, arg: str) -> None:
    with pytest.raises(UsageError) as e:
        resolve(arg)
    assert e.value.code == "SL001"
    assert arg in e.value.message and "accepted" in e.value.message
    if arg == "nope":
        assert "hog, ktask-nice" in e.value.message


def test_resolve_directory(library: Path) -> None:
    with pytest.raises(UsageError, match="is a directory"):
        resolve(str(library))


def test_read_text_missing(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file"):
        read_text(tmp_path / "gone.toml")


def test_list_cli(library: Path, run_cli: RunCli) -> None:
    out = run_cli("list", env={ENV_VAR: str(library)})
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == f"bundled scenarios in {library}"
    assert "Scenarios (schedlab run NAME):" in lines
    assert "Experiments (schedlab reproduce NAME):" in lines
    assert any(line.split()[:2] == ["hog", "two"] for line in lines)
    assert any(line.startswith("  ktask-nice  ktask helpers at MAX_NICE") for line in lines)
    assert any("[experiment kthread-stacking]" in line for line in lines)
    assert any(line.startswith("  broken") and "unreadable" in line for line in lines)
