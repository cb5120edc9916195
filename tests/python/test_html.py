"""The HTML reports of `reproduce --html` and `run --html`, opened in Debian's
headless Chromium over the DevTools protocol: no console error, no failed
resource, and a screenshot kept in target/html-screenshots/ as the artefact.
`make test` installs the browser (scripts/test-tools) and sets
SCHEDLAB_REQUIRE_TOOLS=1, so a missing browser fails there instead of
skipping."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from _chromium import CANDIDATES, open_page
from _tools import real_tool

pytestmark = pytest.mark.native

REPO = Path(__file__).resolve().parents[2]
SHOTS = REPO / "target" / "html-screenshots"
EXPERIMENTS = (
    "ktask-nice",
    "ktask-vfio",
    "kworker-stack",
    "sched-idle",
    "kswapd-threads",
    "kswapd-cost",
    "kswapd-zswap",
    "rt-migrate",
    "gitsource-invariance",
    "dirty-throttle",
    "workingset-transition",
    "fair-server-osnoise",
    "grub-reclaim",
)


@pytest.fixture(scope="module")
def browser() -> str:
    return real_tool(CANDIDATES, "chromium-headless-shell")


def _schedlab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "schedlab", *args], capture_output=True, text=True, check=False)


def _check_page(browser: str, page: Path, shot: str) -> str:
    errors, png = open_page(page, browser)
    assert errors == [], f"{page}: {errors}"
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / f"{shot}.png").write_bytes(png)
    return page.read_text(encoding="utf-8")


def test_the_browser_check_can_fail(browser: str, tmp_path: Path) -> None:
    """A page with a console error and a missing image: both are caught."""
    page = tmp_path / "bad.html"
    page.write_text('<!doctype html><img src="missing.png"><script>console.error("broken")</script>')
    errors, _ = open_page(page, browser)
    assert any("broken" in e for e in errors) and any("missing.png" in e for e in errors), errors


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_every_seed_experiment_writes_its_page(browser: str, name: str, tmp_path: Path) -> None:
    r = _schedlab("reproduce", name, "--quick", "--html", str(tmp_path), "-q")
    assert r.returncode in (0, 1), r.stderr
    html = _check_page(browser, tmp_path / "index.html", f"reproduce-{name}")
    assert f"schedlab reproduce {name} --quick" in html
    assert "Acceptance bands" in html and "[experiment]" in html
    assert not re.search(r"(src|href)=\"(https?:)?//", html), "the page fetches from the network"


def test_run_page_has_the_report_and_pictures(browser: str, tmp_path: Path) -> None:
    trace = tmp_path / "t.txt"
    scen = REPO / "validation" / "smt-numa-wakers.toml"
    r = _schedlab("run", str(scen), "--trace", str(trace), "--html", str(tmp_path / "h"), "-q")
    assert r.returncode == 0, r.stderr
    html = _check_page(browser, tmp_path / "h" / "index.html", "run-smt-numa-wakers")
    for picture in ("cpu-heatmap", "wakeup-cdf", "timeline"):
        assert f"smt-numa-wakers-{picture}" in html
    assert html.count("data:image/svg+xml;base64,") == 3


def test_an_unwritable_html_dir_is_refused(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    r = _schedlab("run", "n-hogs-n-cpus", "--html", str(tmp_path / "f" / "x"), "-q")
    assert r.returncode == 2 and "--html" in r.stderr
