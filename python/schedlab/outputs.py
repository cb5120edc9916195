"""Every file schedlab writes is written whole or not at all.

A report, an export, a page or a sweep's part goes to a temporary file in
the target's own directory (so the rename stays on one filesystem), is
flushed and fsync'd, then renamed over the target. A run that fails, a
process that is killed, or a disk that fills leaves the old file as it was
and no partial file behind; two writers of one path never interleave (the
last rename wins, whole). The core's trace writers (ftrace text, trace.dat,
Perfetto) follow the same rule on the Rust side (trace/sink.rs).

Targets that are not regular files (``/dev/null``, ``/dev/stdout``, a FIFO)
cannot be renamed over; they are written in place, as a shell redirection
would.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Union

from schedlab.errors import UsageError

__all__ = ["atomic_open", "write_bytes", "write_text"]

PathArg = Union[str, "os.PathLike[str]"]


def _special(path: Path) -> bool:
    """True for an existing target that is not a regular file (a device, a FIFO)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def _error(flag: str, path: PathArg, e: OSError) -> UsageError:
    return UsageError("SL001", f"{flag} {os.fspath(path)}: cannot write: {e.strerror or e}")


@contextlib.contextmanager
def atomic_open(path: PathArg, mode: str = "w", *, flag: str = "output") -> Iterator[IO]:  # type: ignore[type-arg]
    """A file object whose content replaces `path` when the block ends
    normally; on an exception the temporary file is removed and `path` is
    untouched. OSError becomes SL001 naming `flag` and the path."""
    if mode not in ("w", "wb"):
        raise ValueError(mode)
    target = Path(os.fspath(path))
    text = mode == "w"
    if _special(target):
        try:
            with target.open(mode, encoding="utf-8" if text else None) as f:
                yield f
        except OSError as e:
            raise _error(flag, path, e) from None
        return
    directory = target.parent if str(target.parent) else Path()
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name[:64]}.", suffix=".tmp", dir=directory)
    except OSError as e:
        raise _error(flag, path, e) from None
    done = False
    try:
        with os.fdopen(fd, mode, encoding="utf-8" if text else None) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        # mkstemp makes the file 0600; a report is as readable as any file
        # the user's umask allows.
        umask = os.umask(0)
        os.umask(umask)
        Path(tmp).chmod(0o666 & ~umask)
        Path(tmp).replace(target)
        done = True
    except OSError as e:
        raise _error(flag, path, e) from None
    finally:
        if not done:
            with contextlib.suppress(OSError):
                Path(tmp).unlink()


def write_text(path: PathArg, text: str, *, flag: str = "output") -> None:
    """Write `text` (UTF-8) to `path` atomically."""
    with atomic_open(path, "w", flag=flag) as f:
        f.write(text)


def write_bytes(path: PathArg, data: bytes, *, flag: str = "output") -> None:
    """Write `data` to `path` atomically."""
    with atomic_open(path, "wb", flag=flag) as f:
        f.write(data)
