"""The real tools some tests run (Debian's, installed by scripts/test-tools):
found on PATH, else the test skips, or fails under SCHEDLAB_REQUIRE_TOOLS=1
(as `make test` sets it, so a missing tool cannot pass CI silently)."""

from __future__ import annotations

import os
import shutil

import pytest

__all__ = ["real_tool"]


def real_tool(names: tuple[str, ...], package: str) -> str:
    for n in names:
        exe = shutil.which(n)
        if exe:
            return exe
    what = f"no {' or '.join(names)} on PATH"
    if os.environ.get("SCHEDLAB_REQUIRE_TOOLS"):
        pytest.fail(f"{what}: scripts/test-tools installs Debian's {package}")
    pytest.skip(f"{what} (scripts/test-tools installs Debian's {package})")
