"""Checks on what the Python API and the CLI are given, before anything runs.

Every check raises ``UsageError`` (SL001) naming the argument, the value (cut
to a readable length) and what is accepted; nothing a caller passes reaches
the native module unchecked, so a wrong type is never reported as SL900.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Union

from schedlab.errors import UsageError

__all__ = [
    "SEED_MAX",
    "PathArg",
    "check_flag",
    "check_output_path",
    "check_overrides_shape",
    "check_seed",
    "cut",
]

#: Seeds are u64 in the core (the RNG's state).
SEED_MAX = 2**64 - 1

#: A path as the API takes it.
PathArg = Union[str, "os.PathLike[str]"]

_CUT = 80


def cut(value: object, limit: int = _CUT) -> str:
    """``repr(value)``, cut to ``limit`` characters with an ellipsis."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _bad(name: str, value: object, accepted: str) -> UsageError:
    return UsageError("SL001", f"{name}={cut(value)}: accepted: {accepted}")


def check_seed(value: object, name: str = "seed") -> int:
    """An int in 0..2**64-1 (a bool is not a seed)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad(name, value, f"an integer from 0 to {SEED_MAX}, not {type(value).__name__}")
    if not 0 <= value <= SEED_MAX:
        raise _bad(name, value, f"an integer from 0 to {SEED_MAX}")
    return value


def check_flag(value: object, name: str) -> bool:
    """A bool: ``True`` or ``False``, not a truthy string."""
    if not isinstance(value, bool):
        raise _bad(name, value, f"True or False, not {type(value).__name__}")
    return value


def check_overrides_shape(value: object, name: str = "overrides") -> None:
    """None, a mapping of str keys, or a sequence of (str, value) pairs."""
    if value is None:
        return
    if isinstance(value, Mapping):
        keys = list(value)
    elif isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        keys = []
        for item in value:
            if not (isinstance(item, (tuple, list)) and len(item) == 2):
                raise _bad(name, value, "a dict of key -> value, or a list of (key, value) pairs")
            keys.append(item[0])
    else:
        raise _bad(name, value, "a dict of key -> value, or a list of (key, value) pairs")
    for k in keys:
        if not isinstance(k, str):
            raise _bad(name, value, f"keys that are dotted-key strings (task.0.nice), not {type(k).__name__}")


def check_output_path(value: object, name: str) -> str | None:
    """None, or a path (str or os.PathLike) a file can be written to: its
    directory exists and is writable, and it is not a directory itself.
    Checked before the simulation, so a typo does not cost the run."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, os.PathLike)):
        raise _bad(name, value, f"a file path (str or pathlib.Path), not {type(value).__name__}")
    text = os.fspath(value)
    if not isinstance(text, str) or not text:
        raise _bad(name, value, "a non-empty file path")
    p = Path(text)
    if p.is_dir():
        raise UsageError("SL001", f"{name} {text}: is a directory; accepted: a file path")
    parent = p.parent if str(p.parent) else Path()
    if not parent.is_dir():
        raise UsageError("SL001", f"{name} {text}: directory {parent} does not exist; accepted: a writable file path")
    if p.exists() and not os.access(p, os.W_OK):
        raise UsageError("SL001", f"{name} {text}: the file is not writable; accepted: a writable file path")
    if not p.exists() and not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError("SL001", f"{name} {text}: directory {parent} is not writable; accepted: a writable file path")
    return text
