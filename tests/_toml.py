"""The tests' own TOML reader, an oracle independent of the core's: the
standard library's ``tomllib`` from Python 3.11, before that the ``tomli``
package (the ``dev`` extra's, with the Makefile's test tools). schedlab
itself reads no TOML: the core does (tests/python/test_front_door.py)."""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

__all__ = ["tomllib"]
