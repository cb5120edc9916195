"""Finding scenarios: bundled ones by name, or any file by path.

Bundled scenarios are package data, ``schedlab/data/scenarios`` (the
checkout's ``scenarios/`` is a link to it), with subdirectories ``seeds/``
(the seeds' reproductions), ``published/`` (other published results
reproduced), ``textbook/`` and ``bench/``. ``$SCHEDLAB_SCENARIOS``
points elsewhere.
A scenario's name is its file stem; an experiment may also be found by its
``[experiment] name``.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import Any, NamedTuple

from schedlab import native
from schedlab.args import cut
from schedlab.errors import ScenarioError, UsageError

__all__ = [
    "MAX_INPUT_BYTES",
    "ScenarioFile",
    "ScenarioInput",
    "bundled",
    "decode_text",
    "read_stdin",
    "read_text",
    "resolve",
    "scenario_input",
    "scenario_text",
    "scenarios_dir",
]

ENV_VAR = "SCHEDLAB_SCENARIOS"
SUBDIRS = ("", "seeds", "published", "textbook", "bench")


def scenarios_dir() -> Path:
    """Where the bundled scenarios are (it may not exist)."""
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env)
    from schedlab._paths import SCENARIOS

    return SCENARIOS


class ScenarioFile(NamedTuple):
    """One bundled scenario file, as ``schedlab list`` shows it. (A named
    tuple, not a dataclass: importing dataclasses costs the CLI 6 ms.)"""

    name: str
    path: Path
    title: str
    experiment: str | None = None  # the [experiment] name, if it is an experiment
    error: str | None = None  # why it could not be read, if it could not

    @property
    def is_experiment(self) -> bool:
        return self.experiment is not None


def bundled(root: Path | None = None) -> list[ScenarioFile]:
    """Every ``*.toml`` in the scenarios dir and its ``seeds/``, sorted by name.

    If two files share a stem the one in the top directory wins (it is listed
    first and ``resolve`` finds it).
    """
    root = scenarios_dir() if root is None else root
    seen: set[str] = set()
    out: list[ScenarioFile] = []
    for sub in SUBDIRS:
        d = root / sub if sub else root
        if not d.is_dir():
            continue
        for path in sorted(d.glob("*.toml")):
            if path.stem in seen:
                continue
            seen.add(path.stem)
            out.append(_describe(path))
    out.sort(key=lambda s: s.name)
    return out


def _describe(path: Path) -> ScenarioFile:
    """A file's name, title and experiment name, as the core reads its TOML
    (unchecked: ``schedlab check`` checks)."""
    try:
        head = native.heading(read_text(path), str(path))
    except (UsageError, ScenarioError) as e:
        return ScenarioFile(path.stem, path, "", error=e.message)
    exp = head["experiment"]
    if exp is not None:
        title = exp["title"] or head["description"] or ""
        return ScenarioFile(path.stem, path, title, experiment=exp["name"] or path.stem)
    return ScenarioFile(path.stem, path, head["description"] or head["name"] or "")


def resolve(name_or_path: str, root: Path | None = None) -> Path:
    """A path to an existing scenario file, from a path or a bundled name.

    Raises ``UsageError`` (SL001) naming what is accepted.
    """
    p = Path(name_or_path)
    if p.is_file():
        return p
    if p.is_dir():
        raise UsageError("SL001", f"{name_or_path}: is a directory; accepted: a scenario .toml file")
    looks_like_path = name_or_path.endswith(".toml") or "/" in name_or_path or os.sep in name_or_path
    files = bundled(root)
    if not looks_like_path:
        for f in files:
            if f.name == name_or_path:
                return f.path
        for f in files:
            if f.experiment == name_or_path:
                return f.path
    names = ", ".join(f.name for f in files) or "(none found in " + str(root or scenarios_dir()) + ")"
    what = "no such file" if looks_like_path else "not a file and not a bundled scenario"
    raise UsageError(
        "SL001",
        f"{name_or_path}: {what}; accepted: a path to a scenario .toml file or a bundled name: {names}",
    )


#: The largest scenario or rt-app file read (a scenario of 100,000 task
#: groups is 7.5 MB): a bigger file, or one that is not a regular file
#: (``/dev/zero``, a FIFO), is refused before it is read whole.
MAX_INPUT_BYTES = 64 * 1024 * 1024


def _size(n: int) -> str:
    return f"{n / 2**20:.0f} MiB" if n >= 2**20 else f"{n} bytes"


def decode_text(data: bytes, source: str) -> str:
    """``data`` as UTF-8 text, strictly: a byte that is not UTF-8 (a lone
    surrogate's encoding included) is SL001 naming its offset."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UsageError(
            "SL001", f"{source}: not UTF-8 text at byte {e.start} ({e.reason}); accepted: a UTF-8 text file"
        ) from None


def _read_capped(f: Any, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of ``f``, read a MiB at a time: ``read(limit + 1)``
    allocates the whole limit up front for every file, however small."""
    chunks: list[bytes] = []
    got = 0
    while got <= limit:
        chunk = f.read(min(1 << 20, limit + 1 - got))
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def read_text(path: Path, *, limit: int = MAX_INPUT_BYTES) -> str:
    """A scenario or rt-app file's text: a regular file of at most ``limit``
    bytes, UTF-8. Anything else is SL001 naming the path."""
    accepted = f"accepted: a UTF-8 text file of at most {_size(limit)}"
    try:
        st = Path(path).stat()
        if stat.S_ISDIR(st.st_mode):
            raise UsageError("SL001", f"{path}: is a directory; {accepted}")
        if not stat.S_ISREG(st.st_mode):
            raise UsageError("SL001", f"{path}: not a regular file (a device, a FIFO or a socket); {accepted}")
        if st.st_size > limit:
            raise UsageError("SL001", f"{path}: {_size(st.st_size)}, too large; {accepted}")
        with Path(path).open("rb") as f:
            data = _read_capped(f, limit)  # the file may have grown since the stat
    except FileNotFoundError:
        raise UsageError("SL001", f"{path}: no such file; accepted: a path to a scenario .toml file") from None
    except (OSError, ValueError) as e:  # ValueError: a NUL in the path
        why = getattr(e, "strerror", None) or e
        raise UsageError("SL001", f"{cut(str(path))}: cannot read: {why}; {accepted}") from None
    if len(data) > limit:
        raise UsageError("SL001", f"{path}: more than {_size(limit)}, too large; {accepted}")
    return decode_text(data, str(path))


def read_stdin(*, limit: int = MAX_INPUT_BYTES) -> str:
    """A scenario from stdin: at most ``limit`` bytes of UTF-8 (the bytes,
    decoded strictly, whatever the locale's encoding or error handler)."""
    try:
        data = _read_capped(sys.stdin.buffer, limit)
    except (OSError, AttributeError, ValueError) as e:
        raise UsageError("SL001", f"-: cannot read the scenario from stdin: {e}") from None
    if len(data) > limit:
        raise UsageError(
            "SL001", f"-: more than {_size(limit)} on stdin, too large; accepted: a UTF-8 scenario of at most "
            f"{_size(limit)}",
        )  # fmt: skip
    return decode_text(data, "<stdin>")


class ScenarioInput(NamedTuple):
    """What the core is handed for one scenario file: its text, the name
    errors give it, whether it is an rt-app JSON workload, and the overrides
    that workload's ``--machine``/``--kernel`` make (before any ``--set``)."""

    text: str
    source: str
    rtapp: bool = False
    overrides: tuple[tuple[str, str], ...] = ()


def scenario_input(path: Path, *, machine: str | None = None, kernel: str | None = None) -> ScenarioInput:
    """A scenario file as the core takes it: a scenario's TOML (an ``rtapp =
    "FILE.json"`` key in it is expanded by the core), or an rt-app JSON
    workload (``.json``) on ``machine`` (required) at ``kernel``."""
    text = read_text(path)
    if path.suffix == ".json":
        if machine is None:
            raise UsageError(
                "SL001",
                f"{path}: an rt-app workload names no machine; accepted: "
                'schedlab run FILE.json --machine PRESET [--kernel VERSION], or a scenario with rtapp = "FILE.json"',
            )
        from schedlab.overrides import toml_literal

        ov = [("machine.preset", toml_literal(machine))]
        if kernel:
            ov.append(("kernel.version", toml_literal(kernel)))
        return ScenarioInput(text, str(path), True, tuple(ov))
    if machine is not None or kernel is not None:
        raise UsageError(
            "SL001", f"{path}: --machine and --kernel are for an rt-app .json workload; use --set for a scenario"
        )
    return ScenarioInput(text, str(path))


def scenario_text(path: Path) -> str:
    """A scenario file's TOML (an rt-app ``.json`` workload is refused: it
    names no machine; see :func:`scenario_input`)."""
    return scenario_input(path).text
