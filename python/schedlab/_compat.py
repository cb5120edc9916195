"""Version shims: ``tomllib`` is stdlib from Python 3.11; before that the
``tomli`` package (a declared conditional dependency) provides the same API."""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

__all__ = ["tomllib"]
