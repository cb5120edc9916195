"""Real benchmark tools in a guest: ``hackbench`` and ``cyclictest``
(Debian bookworm's rt-tests) and ``perf`` (``perf bench sched pipe``;
bookworm's linux-perf), as ``make oracle-setup`` unpacked them into
``.oracle/tools/`` with every library they need (libc6 included: the guest
has no libraries of its own).

:func:`tool_files` gives the initramfs files for a list of tools: each binary
at its usual path (``/usr/bin/perf`` is the ELF itself, not Debian's wrapper),
the loader at ``/lib64/ld-linux-x86-64.so.2`` and only the libraries the
binaries need, transitively (:func:`schedlab.qemu.elf.closure`), under
``/lib/x86_64-linux-gnu/SONAME`` with the real file's contents.
:func:`run_tool` boots a machine with them and runs a command under
``/bin/sh``, returning what the tool printed and its exit status.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from schedlab.qemu.elf import Closure, closure
from schedlab.qemu.guest import boot, trace_of, traced_script
from schedlab.qemu.initramfs import BEGIN_MARKER, END_MARKER, FileSource
from schedlab.qemu.machine import MachineLike
from schedlab.qemu.oracle import Oracle, OracleError, find_oracle

__all__ = [
    "STDERR_BEGIN",
    "STDERR_END",
    "TOOLS",
    "ToolResult",
    "run_tool",
    "tool_binaries",
    "tool_closure",
    "tool_files",
    "tool_script",
    "tools_in",
    "trace_tool",
]

#: The tools and where each binary goes in the guest.
TOOLS = {"hackbench": "/usr/bin/hackbench", "cyclictest": "/usr/bin/cyclictest", "perf": "/usr/bin/perf"}
#: Around the tool's stderr on the console (before the report markers, which hold its stdout).
STDERR_BEGIN = "=== SCHEDLAB-STDERR BEGIN ==="
STDERR_END = "=== SCHEDLAB-STDERR END ==="
_SETUP_HINT = "run `make oracle-setup` (a second run fetches only what is missing)"


def tool_binaries(oracle: Oracle | None = None) -> dict[str, Path]:
    """{tool: its ELF binary in the oracle's tools/ tree}, from the manifest.
    Raises ``OracleError`` if the tools were not set up."""
    orc = oracle or find_oracle()
    t = orc.manifest.get("tools")
    if not isinstance(t, dict) or not isinstance(t.get("binaries"), dict):
        raise OracleError("SL300", f"the oracle in {orc.root} has no tools: {_SETUP_HINT}")
    out = {str(k): orc.root / str(v) for k, v in t["binaries"].items()}
    for tool, p in sorted(out.items()):
        if not p.is_file():
            raise OracleError("SL300", f"the oracle's {tool} is missing ({p}): {_SETUP_HINT}")
    return out


def _check_names(tools: Iterable[str]) -> list[str]:
    names = sorted(set(tools))
    bad = [t for t in names if t not in TOOLS]
    if bad:
        raise OracleError("SL300", f"unknown tool(s) {', '.join(bad)}; known: {', '.join(sorted(TOOLS))}")
    return names


def tool_closure(tools: Iterable[str], *, oracle: Oracle | None = None) -> Closure:
    """The loader and libraries ``tools`` need, resolved in the tools/ tree.
    Raises ``OracleError`` naming any library the tree lacks."""
    names = _check_names(tools)
    orc = oracle or find_oracle()
    bins = tool_binaries(orc)
    tree = orc.root / str(orc.manifest["tools"].get("tree", "tools"))
    cl = closure(tree, [(TOOLS[t], bins[t]) for t in names])
    if cl.missing:
        raise OracleError("SL300", f"libraries missing from {tree}: {cl.describe_missing()}: {_SETUP_HINT}")
    return cl


def tool_files(tools: Iterable[str], *, oracle: Oracle | None = None) -> dict[str, FileSource]:
    """The initramfs files running ``tools`` needs (guest path -> host file,
    symlinks already followed): the binaries at ``TOOLS``' paths, the loader
    and the libraries of their closure. Nothing else from the packages."""
    names = _check_names(tools)
    if not names:
        return {}
    orc = oracle or find_oracle()
    bins = tool_binaries(orc)
    files: dict[str, FileSource] = {TOOLS[t]: bins[t] for t in names}
    files.update(tool_closure(names, oracle=orc).files)
    return files


def tools_in(argv: Sequence[str]) -> list[str]:
    """The tools a command names: ``argv[0]``'s basename, or any word of an
    argument (``sh -c "hackbench ...; perf bench ..."``)."""
    words = {PurePosixPath(w).name for a in argv for w in a.split()}
    return sorted(t for t in TOOLS if t in words)


def tool_script(argv: Sequence[str]) -> str:
    """The guest's /bin/sh script: run ``argv`` in /tmp with HOME=/root (perf
    reads ~/.perfconfig), perf_event_paranoid at -1, a tmpfs on /dev/shm
    (cyclictest shm_open()s its status there), stdout and stderr to files;
    print stderr between ``STDERR_BEGIN``/``STDERR_END``, then stdout between
    the report markers (a missing final newline is added), and exit with the
    tool's status (``/init`` prints it)."""
    return f"""export HOME=/root TMPDIR=/tmp PATH=/usr/bin:/bin:/usr/sbin:/sbin
[ -w /proc/sys/kernel/perf_event_paranoid ] && echo -1 > /proc/sys/kernel/perf_event_paranoid
mkdir -p /dev/shm && mount -t tmpfs tmpfs /dev/shm
cd /tmp
{shlex.join(argv)} > /tmp/schedlab.out 2> /tmp/schedlab.err
st=$?
nl() {{ [ -n "$(tail -c 1 "$1")" ] && echo; }}
echo "{STDERR_BEGIN}"
cat /tmp/schedlab.err; nl /tmp/schedlab.err
echo "{STDERR_END}"
echo "{BEGIN_MARKER}"
cat /tmp/schedlab.out; nl /tmp/schedlab.out
echo "{END_MARKER}"
exit $st
"""


@dataclass
class ToolResult:
    """What a tool printed in a guest: ``stdout`` (between the report
    markers), ``stderr``, its exit status, the boot's wall time, the kernel
    (label and ``uname -r`` release) and the QEMU command line."""

    argv: list[str]
    kernel: str
    release: str | None
    stdout: str
    stderr: str
    exit_status: int | None
    wall_s: float
    command: list[str]


def _between(console: str, begin: str, end: str) -> str:
    lines = console.replace("\r", "").split("\n")
    starts = [i for i, ln in enumerate(lines) if ln.rstrip().endswith(begin)]
    if not starts:
        return ""
    out: list[str] = []
    for ln in lines[starts[-1] + 1 :]:
        if ln.rstrip().endswith(end):
            break
        out.append(ln)
    return "\n".join(out)


def run_tool(
    machine: MachineLike,
    kernel: str,
    argv: Sequence[str],
    *,
    tools: Iterable[str] | None = None,
    shift: int = 0,
    timeout: float = 600.0,
    append: str = "",
    oracle: Oracle | None = None,
    keep: str | Path | None = None,
) -> ToolResult:
    """Boot ``machine`` on ``kernel`` ("6.1" or "6.12") with ``tools``
    (default: those ``argv`` names, see :func:`tools_in`) and run ``argv``
    under /bin/sh in the guest; return its stdout, stderr and exit status.

    ``shift`` is the ``-icount`` shift (0: one instruction per ns of virtual
    time, as the validation suite runs). ``timeout`` is wall seconds for the
    whole boot. Keep loop counts small: TCG runs the guest far slower than
    real time. Raises ``OracleError`` as :func:`boot` does, or when the tools
    are not set up."""
    argv = [str(a) for a in argv]
    if not argv:
        raise OracleError("SL300", "run_tool: empty command")
    names = _check_names(tools_in(argv) if tools is None else tools)
    orc = oracle or find_oracle()
    files = tool_files(names, oracle=orc)
    files["/schedlab/tool.sh"] = tool_script(argv).encode()
    res = boot(machine, kernel, ["/bin/sh", "/schedlab/tool.sh"], files, shift=shift, timeout=timeout,
               append=append, oracle=orc, keep=keep)  # fmt: skip
    return ToolResult(
        argv=argv,
        kernel=kernel,
        release=orc.kernel_releases.get(kernel),
        stdout=res.report,
        stderr=_between(res.console, STDERR_BEGIN, STDERR_END),
        exit_status=res.exit_status,
        wall_s=round(res.wall_s, 2),
        command=res.command,
    )


def trace_tool(
    machine: MachineLike,
    kernel: str,
    argv: Sequence[str],
    *,
    events: Sequence[str],
    shift: int = 0,
    timeout: float = 900.0,
    oracle: Oracle | None = None,
) -> bytes:
    """Run ``argv`` (a tool of ``TOOLS``, or busybox's programs) in the
    guest of ``kernel`` on ``machine`` while tracefs records the sched
    ``events``; return the trace file's text (``scripts/import-roundtrip
    --kernel``: real programs traced in a guest). Its output is discarded;
    a non-zero exit is an ``OracleError``."""
    from schedlab.qemu.machine import resolve_layout

    argv = [str(a) for a in argv]
    orc = oracle or find_oracle()
    files = tool_files(_check_names(tools_in(argv)), oracle=orc)
    layout = resolve_layout(machine)
    command = (
        "export HOME=/root TMPDIR=/tmp PATH=/usr/bin:/bin:/usr/sbin:/sbin; "
        "mkdir -p /dev/shm && mount -t tmpfs tmpfs /dev/shm; "
        f"(cd /tmp && {shlex.join(argv)} > /dev/null 2>&1); s=$?; "
        f"echo '{BEGIN_MARKER}'; echo '{END_MARKER}'; (exit $s)"  # boot() reads a report: an empty one
    )
    res = boot(layout, kernel, ["sh", "-c", traced_script(command, events, layout.nr_cpus)], files,
               shift=shift, timeout=timeout, oracle=orc)  # fmt: skip
    if res.exit_status not in (0, None):
        raise OracleError("SL300", f"{shlex.join(argv)} exited with {res.exit_status} in the {kernel} guest")
    return trace_of(res, kernel)
