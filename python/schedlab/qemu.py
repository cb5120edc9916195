"""The QEMU oracle: boot a Debian kernel with a scenario's topology and run a
program at boot.

``make oracle-setup`` (scripts/oracle-setup) unpacks QEMU 10, Debian's 6.1
(CFS) and 6.12 (EEVDF) kernels and busybox-static into ``.oracle/``. This
module then

* builds an initramfs (newc cpio, gzip) in pure Python: busybox with its
  applet links, an ``/init`` that mounts proc, sysfs, devtmpfs and debugfs,
  runs one program and powers off, and any extra files;
* translates a schedlab machine (preset or explicit ``[machine]`` layout, laid
  out by the core: ``native.check``) into ``-smp``/``-numa`` options (CPU ``i`` of the guest is CPU ``i`` of
  schedlab: both number package by package, core by core, thread by thread);
* boots it under TCG with ``-icount shift=N,sleep=off -rtc clock=vm``,
  captures the serial console, enforces a wall-time timeout and returns the
  text between ``=== SCHEDLAB-REPORT BEGIN ===`` and
  ``=== SCHEDLAB-REPORT END ===``.

The program run at boot prints its result between those two marker lines on
stdout (the serial console). :func:`probe` is the first such program: a
busybox shell snippet reporting the guest's kernel release and CPU topology.
:func:`run_in_guest` runs the workload runner (``RUNNER --serial
SCENARIO.toml``) the same way.

From the shell (``python -m schedlab.qemu ...`` is the same)::

    schedlab qemu probe 4x4 --kernel 6.12
    schedlab qemu args numa48             # the QEMU options only
    schedlab qemu run SCENARIO --runner PATH [--kernel 6.1]
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import math
import os
import shlex
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union, cast

from schedlab.errors import HostError, TopologyError, UsageError
from schedlab.overrides import toml_literal

__all__ = [
    "BEGIN_MARKER",
    "END_MARKER",
    "KERNELS",
    "BootResult",
    "CpioEntry",
    "CpuPlace",
    "FileSource",
    "Layout",
    "Oracle",
    "OracleError",
    "boot",
    "build_initramfs",
    "check_probe",
    "cpio_newc",
    "extract_report",
    "find_oracle",
    "init_script",
    "kernel_for_version",
    "layout_from_machine",
    "layout_from_scenario",
    "layout_of_preset",
    "probe",
    "qemu_args",
    "read_newc",
    "resolve_layout",
    "run_in_guest",
]

BEGIN_MARKER = "=== SCHEDLAB-REPORT BEGIN ==="
END_MARKER = "=== SCHEDLAB-REPORT END ==="
#: Printed by /init after the program, with its exit status.
EXIT_MARKER = "=== SCHEDLAB-EXIT"
#: The kernels oracle-setup fetches: label -> what it stands for.
KERNELS = {"6.1": "bookworm linux-image-amd64 (CFS)", "6.12": "bookworm-backports linux-image-amd64 (EEVDF)"}
#: TCG's "max" CPU with an Intel vendor: its topology comes from CPUID leaf 0xB,
#: which both 6.1 and 6.12 read. (With TCG's default AMD vendor and no
#: TOPOEXT, 6.1 sees every SMT thread as a core of its own.)
DEFAULT_CPU = "max,vendor=GenuineIntel"
DEFAULT_APPEND = "console=ttyS0 quiet panic=-1 cryptomgr.notests"
#: Guest memory per NUMA node unless the scenario asks less (TCG: keep it small).
MEMORY_PER_NODE_MIB = 512
#: Below this a node is given this much anyway (the kernel must boot).
MIN_MEMORY_PER_NODE_MIB = 128
#: xAPIC IDs 0..254: more needs x2APIC with interrupt remapping, not set up here.
MAX_APIC_ID = 254
_SETUP_HINT = "run `make oracle-setup` in the schedlab checkout (or set SCHEDLAB_ORACLE to its .oracle directory)"


#: The QEMU oracle is missing, the guest timed out or printed no report: the
#: one SL300 class of schedlab.errors (``OracleError("SL300", message, tail)``).
OracleError = HostError


# --------------------------------------------------------------------------
# newc cpio


@dataclass(frozen=True)
class CpioEntry:
    """One member of a newc archive. ``mode`` includes the file type bits."""

    name: str
    mode: int
    data: bytes = b""
    rdev: tuple[int, int] = (0, 0)

    @property
    def is_dir(self) -> bool:
        return stat.S_ISDIR(self.mode)

    @property
    def is_symlink(self) -> bool:
        return stat.S_ISLNK(self.mode)


def _newc_header(ino: int, e: CpioEntry, namesize: int) -> bytes:
    nlink = 2 if e.is_dir else 1
    fields = (ino, e.mode, 0, 0, nlink, 0, len(e.data), 0, 0, e.rdev[0], e.rdev[1], namesize, 0)
    return b"070701" + b"".join(b"%08X" % f for f in fields)


def _pad4(n: int) -> bytes:
    return b"\0" * (-n % 4)


def cpio_newc(entries: Iterable[CpioEntry]) -> bytes:
    """A newc ("070701") archive of ``entries`` in order, with the trailer.

    Deterministic: uid/gid 0, mtime 0, inode numbers by position. Parents must
    come before their children (the kernel creates entries in order)."""
    out = io.BytesIO()
    for ino, e in enumerate([*entries, CpioEntry("TRAILER!!!", 0)], start=1):
        name = e.name.lstrip("/").encode() + b"\0"
        hdr = _newc_header(0 if e.name == "TRAILER!!!" else ino, e, len(name))
        out.write(hdr + name + _pad4(len(hdr) + len(name)))
        out.write(e.data + _pad4(len(e.data)))
    return out.getvalue()


def read_newc(data: bytes) -> list[CpioEntry]:
    """Parse a newc archive (possibly gzip-compressed); the entries before the trailer."""
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    entries: list[CpioEntry] = []
    pos = 0
    while True:
        if data[pos : pos + 6] != b"070701":
            raise ValueError(f"bad newc magic at offset {pos}: {data[pos : pos + 6]!r}")
        f = [int(data[pos + 6 + 8 * i : pos + 14 + 8 * i], 16) for i in range(13)]
        mode, filesize, rmaj, rmin, namesize = f[1], f[6], f[9], f[10], f[11]
        name_start = pos + 110
        name = data[name_start : name_start + namesize - 1].decode()
        body = name_start + namesize
        body += -body % 4
        if name == "TRAILER!!!":
            return entries
        entries.append(CpioEntry(name, mode, bytes(data[body : body + filesize]), (rmaj, rmin)))
        pos = body + filesize
        pos += -pos % 4


# --------------------------------------------------------------------------
# Machines: the layout is the core's (native.check), never recomputed here.


@dataclass(frozen=True)
class CpuPlace:
    """Where one CPU sits, with the core's global ids (``core`` and ``llc``
    are unique across packages)."""

    package: int
    core: int
    thread: int
    llc: int
    node: int


@dataclass(frozen=True)
class Layout:
    """A machine as QEMU needs it, as the core built it. CPU numbering as
    schedlab's (and QEMU's): package by package, core by core, thread by
    thread (``cpu = ((socket * cores_per_socket + core) * threads_per_core) + thread``)."""

    name: str
    sockets: int
    cores_per_socket: int
    threads_per_core: int
    nodes: int
    distance: tuple[tuple[int, ...], ...]
    memory_bytes: int
    cpus: tuple[CpuPlace, ...]

    @classmethod
    def from_summary(cls, machine: Mapping[str, Any]) -> Layout:
        """From the ``"machine"`` object of ``native.check``'s summary."""
        cpus = tuple(
            CpuPlace(int(c["package"]), int(c["core"]), int(c["thread"]), int(c["llc"]), int(c["node"]))
            for c in machine["cpus"]
        )
        return cls(
            name=str(machine["name"]),
            sockets=int(machine["sockets"]),
            cores_per_socket=int(machine["cores_per_socket"]),
            threads_per_core=int(machine["threads_per_core"]),
            nodes=int(machine["nodes"]),
            distance=tuple(tuple(int(x) for x in row) for row in machine["distance"]),
            memory_bytes=int(machine["memory_bytes"]),
            cpus=cpus,
        )

    @property
    def nr_cpus(self) -> int:
        return len(self.cpus)

    def socket_of(self, cpu: int) -> int:
        return self.cpus[cpu].package

    def core_of(self, cpu: int) -> int:
        """Core index within its socket (the guest's topology/core_id)."""
        return self.cpus[cpu].core % self.cores_per_socket

    def node_of(self, cpu: int) -> int:
        return self.cpus[cpu].node

    def node_cpus(self, node: int) -> list[int]:
        return [c for c, p in enumerate(self.cpus) if p.node == node]

    def thread_siblings(self, cpu: int) -> list[int]:
        """The CPUs of ``cpu``'s core, itself included."""
        return [c for c, p in enumerate(self.cpus) if p.core == self.cpus[cpu].core]

    def max_apic_id(self) -> int:
        """Largest xAPIC ID QEMU gives this topology (each level's field is
        rounded up to a power of two, as in x86_apicid_from_topo_ids)."""
        smt = math.ceil(math.log2(self.threads_per_core)) if self.threads_per_core > 1 else 0
        core = math.ceil(math.log2(self.cores_per_socket)) if self.cores_per_socket > 1 else 0
        return ((self.sockets - 1) << (smt + core)) | ((self.cores_per_socket - 1) << smt) | (self.threads_per_core - 1)


def _layout_of_text(text: str, source: str) -> Layout:
    """The layout the core builds for a scenario text (raises its SL1xx errors)."""
    from schedlab import native

    return Layout.from_summary(native.check(text, source, [])["machine"])


def layout_from_machine(table: Mapping[str, Any], source: str = "<machine>") -> Layout:
    """A ``Layout`` from a scenario's ``[machine]`` table (preset and/or
    explicit keys): the core checks it and lays it out."""
    return _layout_of_text(f"machine = {toml_literal(dict(table))}\n", source)


def layout_of_preset(name: str, source: str | None = None) -> Layout:
    """A preset's ``Layout``: the core's, from the one-line scenario
    ``[machine] preset = NAME`` (an unknown name is the core's SL110, which
    lists the presets)."""
    return layout_from_machine({"preset": name}, source or f"preset {name}")


def layout_from_scenario(scenario: str | Path) -> Layout:
    """The ``Layout`` of a scenario (bundled name or path), as the core builds it."""
    from schedlab.scenarios import read_text, resolve

    path = resolve(str(scenario))
    return _layout_of_text(read_text(path), str(path))


MachineLike = Union[str, Path, Mapping[str, Any], Layout]


def resolve_layout(machine: MachineLike) -> Layout:
    """A ``Layout`` from a scenario (bundled name or path), a preset name, a
    ``[machine]`` table or a ``Layout``. A name that is neither a file nor a
    bundled scenario is taken as a preset."""
    from schedlab.scenarios import resolve

    if isinstance(machine, Layout):
        return machine
    if isinstance(machine, Mapping):
        return layout_from_machine(machine)
    name = str(machine)
    try:
        path = resolve(name)
    except UsageError:
        if isinstance(machine, Path) or name.endswith(".toml") or "/" in name or os.sep in name:
            raise
        return layout_of_preset(name, f"{name} (not a scenario, so a machine preset)")
    return layout_from_scenario(path)


def kernel_for_version(version: str) -> str:
    """The oracle kernel standing for a scenario's ``kernel.version``: 6.1 (CFS)
    before 6.6, 6.12 (EEVDF) from 6.6 on."""
    parts = [int(x) for x in str(version).split(".")[:2] if x.isdigit()]
    major, minor = [*parts, 0, 0][:2]
    return "6.12" if (major, minor) >= (6, 6) else "6.1"


def _ranges(cpus: Sequence[int]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else f"{cpus[i]}-{cpus[j]}")
        i = j + 1
    return out


def node_memory_mib(layout: Layout, per_node_mib: int = MEMORY_PER_NODE_MIB) -> int:
    """MiB per node: ``per_node_mib`` unless the machine asks less, at least
    ``MIN_MEMORY_PER_NODE_MIB``, a multiple of 2 MiB."""
    mib = per_node_mib
    if layout.memory_bytes:
        mib = min(mib, layout.memory_bytes // layout.nodes >> 20)
    mib = max(mib, MIN_MEMORY_PER_NODE_MIB)
    return mib - mib % 2


def qemu_args(
    layout: Layout,
    kernel: str | Path,
    initrd: str | Path,
    *,
    shift: int = 3,
    append: str = DEFAULT_APPEND,
    memory_per_node_mib: int = MEMORY_PER_NODE_MIB,
    cpu: str = DEFAULT_CPU,
) -> list[str]:
    """The QEMU command-line options (without the binary) booting ``kernel``
    with ``initrd`` on ``layout``. Raises ``TopologyError`` for machines whose
    APIC IDs do not fit xAPIC."""
    if layout.max_apic_id() > MAX_APIC_ID:
        raise TopologyError(
            "SL110",
            f"machine {layout.name}: {layout.nr_cpus} CPUs need APIC ID {layout.max_apic_id()}; "
            f"the QEMU oracle boots at most APIC ID {MAX_APIC_ID} (no x2APIC interrupt remapping)",
        )
    mib = node_memory_mib(layout, memory_per_node_mib)
    args = ["-machine", "q35", "-cpu", cpu, "-accel", "tcg"]
    args += ["-icount", f"shift={shift},sleep=off", "-rtc", "clock=vm"]
    args += ["-nographic", "-no-reboot", "-net", "none"]
    args += [
        "-smp",
        f"cpus={layout.nr_cpus},sockets={layout.sockets},cores={layout.cores_per_socket},"
        f"threads={layout.threads_per_core}",
    ]
    args += ["-m", f"{mib * layout.nodes}M"]
    if layout.nodes > 1:
        for n in range(layout.nodes):
            args += ["-object", f"memory-backend-ram,id=mem{n},size={mib}M"]
            cpus = "".join(f",cpus={r}" for r in _ranges(layout.node_cpus(n)))
            args += ["-numa", f"node,nodeid={n}{cpus},memdev=mem{n}"]
        for a in range(layout.nodes):
            for b in range(layout.nodes):
                if a != b:
                    args += ["-numa", f"dist,src={a},dst={b},val={layout.distance[a][b]}"]
    args += ["-kernel", str(kernel), "-initrd", str(initrd), "-append", append]
    return args


# --------------------------------------------------------------------------
# The oracle directory


@dataclass(frozen=True)
class Oracle:
    """What ``make oracle-setup`` unpacked (from .oracle/manifest.json)."""

    root: Path
    launcher: Path
    busybox: Path
    kernels: dict[str, Path]
    kernel_releases: dict[str, str]
    manifest: dict[str, Any] = field(repr=False)

    def kernel(self, label: str) -> Path:
        if label not in self.kernels:
            raise OracleError(
                "SL300", f"no kernel {label!r} in {self.root}; accepted: {', '.join(sorted(self.kernels))}"
            )
        return self.kernels[label]


def _default_oracle_dir() -> Path:
    env = os.environ.get("SCHEDLAB_ORACLE")
    if env:
        return Path(env)
    # The checkout this package lives in (python/schedlab/qemu.py -> repo).
    return Path(__file__).resolve().parents[2] / ".oracle"


def find_oracle(directory: str | Path | None = None) -> Oracle:
    """The oracle in ``directory`` (default: $SCHEDLAB_ORACLE, else .oracle in
    the checkout). Raises ``OracleError`` saying to run make oracle-setup."""
    root = Path(directory) if directory is not None else _default_oracle_dir()
    mf = root / "manifest.json"
    if not mf.is_file():
        raise OracleError("SL300", f"the QEMU oracle is not set up ({mf} missing): {_SETUP_HINT}")
    try:
        doc = json.loads(mf.read_text())
        launcher = root / doc["launcher"]
        busybox = root / doc["busybox"]
        kernels = {k: root / v["vmlinuz"] for k, v in doc["kernels"].items()}
        releases = {k: str(v["release"]) for k, v in doc["kernels"].items()}
    except (ValueError, KeyError, TypeError) as e:
        raise OracleError("SL300", f"{mf} is unreadable ({e}): {_SETUP_HINT}") from None
    for p in [launcher, busybox, *kernels.values()]:
        if not p.is_file():
            raise OracleError("SL300", f"the QEMU oracle is incomplete ({p} missing): {_SETUP_HINT}")
    return Oracle(root, launcher, busybox, kernels, releases, doc)


# --------------------------------------------------------------------------
# The initramfs

FileSource = Union[bytes, str, Path]

_BUSYBOX_DIRS = ("bin", "sbin", "usr", "usr/bin", "usr/sbin")


def busybox_applets(busybox: Path) -> list[str]:
    """The applet paths (``bin/sh``, ``usr/bin/awk``...) of a busybox binary,
    by running it on the host (busybox-static runs anywhere on x86_64)."""
    try:
        out = subprocess.run([str(busybox), "--list-full"], capture_output=True, text=True, check=False, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if out.returncode != 0:
        return []
    return sorted({ln.strip().lstrip("/") for ln in out.stdout.splitlines() if ln.strip()})


def init_script(program: Sequence[str], *, workdir: str = "/schedlab", printk_level: int = 1) -> str:
    """The /init shell script: mount the pseudo filesystems, quiet the console
    (``printk_level``), run ``program`` in ``workdir``, print its exit status,
    power off."""
    cmd = " ".join(shlex.quote(a) for a in program)
    return f"""#!/bin/sh
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tmpfs tmpfs /tmp
echo {printk_level} > /proc/sys/kernel/printk
cd {shlex.quote(workdir)} 2>/dev/null || cd /
{cmd}
echo "{EXIT_MARKER} $? ==="
poweroff -f
"""


def build_initramfs(
    busybox: str | Path,
    program: Sequence[str],
    files: Mapping[str, FileSource] | None = None,
    *,
    workdir: str = "/schedlab",
) -> bytes:
    """A gzip-compressed newc initramfs: busybox with its applet links, /init
    running ``program``, and ``files`` (guest path -> bytes or a host path;
    the mode of a host file is kept, bytes get 0755 if they start with
    ``#!`` or ELF magic, else 0644). Deterministic for the same inputs."""
    bb = Path(busybox)
    entries: list[CpioEntry] = []
    dirs: set[str] = set()

    def add_dir(d: str) -> None:
        d = d.strip("/")
        if not d or d in dirs:
            return
        if "/" in d:
            add_dir(str(Path(d).parent))
        dirs.add(d)
        entries.append(CpioEntry(d, stat.S_IFDIR | 0o755))

    for d in (*_BUSYBOX_DIRS, "dev", "proc", "sys", "tmp", "root", "etc", workdir):
        add_dir(d)
    entries.append(CpioEntry("dev/console", stat.S_IFCHR | 0o600, rdev=(5, 1)))
    entries.append(CpioEntry("dev/null", stat.S_IFCHR | 0o666, rdev=(1, 3)))
    entries.append(CpioEntry("bin/busybox", stat.S_IFREG | 0o755, bb.read_bytes()))
    applets = busybox_applets(bb) or ["bin/sh", "sbin/poweroff", "bin/mount", "bin/cat", "bin/echo"]
    for a in applets:
        if a == "bin/busybox":
            continue
        add_dir(str(Path(a).parent))
        target = os.path.relpath("bin/busybox", str(Path(a).parent))
        entries.append(CpioEntry(a, stat.S_IFLNK | 0o777, target.encode()))
    for guest, src in sorted((files or {}).items()):
        name = guest.strip("/")
        add_dir(str(Path(name).parent))
        if isinstance(src, bytes):
            data = src
            mode = 0o755 if data[:2] == b"#!" or data[:4] == b"\x7fELF" else 0o644
        else:
            p = Path(src)
            data = p.read_bytes()
            mode = stat.S_IMODE(p.stat().st_mode) | 0o444
        entries.append(CpioEntry(name, stat.S_IFREG | mode, data))
    entries.append(CpioEntry("init", stat.S_IFREG | 0o755, init_script(program, workdir=workdir).encode()))
    return gzip.compress(cpio_newc(entries), compresslevel=6, mtime=0)


# --------------------------------------------------------------------------
# Booting


@dataclass
class BootResult:
    """What a boot gave: the report text between the markers, the whole
    console, the program's exit status (None if /init did not print it), the
    wall time of the QEMU process and the command line."""

    report: str
    console: str
    exit_status: int | None
    wall_s: float
    command: list[str]


def _tail(console: str, n: int = 25) -> str:
    lines = [ln for ln in console.splitlines() if ln.strip()]
    return "\n".join(lines[-n:])


def extract_report(console: str) -> str | None:
    """The text between the last ``BEGIN_MARKER`` line and the next
    ``END_MARKER`` line, or None if there is no complete pair. A marker ends
    its line; anything before it on that line (the firmware's terminal
    escapes, an unfinished kernel message) is ignored, and so is ``\\r``."""
    lines = console.replace("\r", "").split("\n")
    begin = None
    for i, ln in enumerate(lines):
        if ln.rstrip().endswith(BEGIN_MARKER):
            begin = i
    if begin is None:
        return None
    for j in range(begin + 1, len(lines)):
        if lines[j].rstrip().endswith(END_MARKER):
            return "\n".join(lines[begin + 1 : j])
    return None


def _exit_status(console: str) -> int | None:
    for ln in reversed(console.replace("\r", "").split("\n")):
        s = ln.strip()
        if s.startswith(EXIT_MARKER):
            try:
                return int(s[len(EXIT_MARKER) :].strip().split()[0])
            except (ValueError, IndexError):
                return None
    return None


def boot(
    machine: MachineLike,
    kernel: str,
    program: Sequence[str],
    files: Mapping[str, FileSource] | None = None,
    *,
    shift: int = 3,
    timeout: float = 300.0,
    append: str = "",
    memory_per_node_mib: int = MEMORY_PER_NODE_MIB,
    oracle: Oracle | None = None,
    keep: str | Path | None = None,
) -> BootResult:
    """Boot the oracle ``kernel`` ("6.1" or "6.12") on ``machine`` with an
    initramfs running ``program`` (plus ``files``), and return its report.

    ``shift`` is the ``-icount`` shift (3: cheap; 0: one instruction per ns,
    when per-CPU speed matters). ``timeout`` is wall seconds for the whole
    QEMU process. ``append`` is added to the kernel command line. ``keep``
    names a directory that keeps initrd.gz, console.log and cmdline.
    Raises ``OracleError`` when the oracle is missing, the guest times out
    (with the last console lines), QEMU fails, or the markers are absent."""
    layout = resolve_layout(machine)
    orc = oracle or find_oracle()
    vmlinuz = orc.kernel(kernel)
    initrd_bytes = build_initramfs(orc.busybox, program, files)
    cmdline = DEFAULT_APPEND + (" " + append if append else "")
    with tempfile.TemporaryDirectory(prefix="schedlab-qemu-") as tmp:
        work = Path(keep) if keep is not None else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        initrd = work / "initrd.gz"
        initrd.write_bytes(initrd_bytes)
        args = qemu_args(layout, vmlinuz, initrd, shift=shift, append=cmdline, memory_per_node_mib=memory_per_node_mib)
        command = [str(orc.launcher), *args]
        (work / "cmdline").write_text(shlex.join(command) + "\n")
        log_path = work / "console.log"
        start = time.monotonic()
        with log_path.open("wb") as log:
            proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
            try:
                rc = proc.wait(timeout=timeout)
            except BaseException as e:  # the timeout, or ^C: never leave QEMU behind
                proc.kill()
                proc.wait()
                if not isinstance(e, subprocess.TimeoutExpired):
                    raise
                console = log_path.read_bytes().decode("utf-8", "replace")
                raise OracleError(
                    "SL300",
                    f"the guest ({layout.name}, {layout.nr_cpus} CPUs, kernel {kernel}) did not finish "
                    f"within {timeout:g} s of wall time; last console lines:\n{_tail(console)}",
                    _tail(console),
                ) from None
        wall = time.monotonic() - start
        console = log_path.read_bytes().decode("utf-8", "replace").replace("\r", "")
    report = extract_report(console)
    status = _exit_status(console)
    if rc != 0:
        raise OracleError(
            "SL300", f"QEMU exited with status {rc}; last console lines:\n{_tail(console)}", _tail(console)
        )
    if report is None:
        why = f"the program exited with status {status}" if status is not None else "/init did not finish"
        raise OracleError(
            "SL300",
            f"the guest printed no report between {BEGIN_MARKER!r} and {END_MARKER!r} ({why}); "
            f"last console lines:\n{_tail(console)}",
            _tail(console),
        )
    return BootResult(report, console, status, wall, command)


# --------------------------------------------------------------------------
# The topology probe

PROBE_SCRIPT = r"""
q='"'
cpus=""
for d in /sys/devices/system/cpu/cpu[0-9]*; do
  [ -d "$d/topology" ] || continue
  t=$d/topology
  c="{${q}cpu$q:${d##*/cpu},${q}package$q:$(cat $t/physical_package_id),${q}core_id$q:$(cat $t/core_id)"
  cpus="$cpus${cpus:+,}$c,${q}thread_siblings$q:$q$(cat $t/thread_siblings_list)$q}"
done
nodes=""
for d in /sys/devices/system/node/node[0-9]*; do
  [ -d "$d" ] || continue
  mem=$(awk '/MemTotal/ {print $4}' $d/meminfo)
  n="$q${d##*/node}$q:{${q}cpulist$q:$q$(cat $d/cpulist)$q,${q}distance$q:$q$(cat $d/distance)$q"
  nodes="$nodes${nodes:+,}$n,${q}mem_kb$q:$mem}"
done
domains=""
for d in /sys/kernel/debug/sched/domains/cpu0/domain*; do
  [ -f "$d/name" ] && domains="$domains${domains:+,}$q$(cat $d/name)$q"
done
echo "=== SCHEDLAB-REPORT BEGIN ==="
echo "{${q}uname_r$q:$q$(uname -r)$q,${q}online$q:$q$(cat /sys/devices/system/cpu/online)$q,"
echo " ${q}nproc$q:$(nproc),${q}uptime_s$q:$(cut -d' ' -f1 /proc/uptime),"
echo " ${q}cpus$q:[$cpus],${q}nodes$q:{$nodes},${q}cpu0_domains$q:[$domains]}"
echo "=== SCHEDLAB-REPORT END ==="
"""


def parse_cpulist(text: str) -> list[int]:
    """``"0-3,8"`` -> ``[0, 1, 2, 3, 8]``."""
    out: list[int] = []
    for part in text.strip().split(","):
        if not part:
            continue
        a, _, b = part.partition("-")
        out += list(range(int(a), int(b or a) + 1))
    return out


def probe(
    machine: MachineLike, kernel: str, *, shift: int = 3, timeout: float = 300.0, oracle: Oracle | None = None
) -> dict[str, Any]:
    """Boot ``machine`` on ``kernel`` and report what the guest sees:
    ``{"uname_r", "online", "nproc", "uptime_s", "cpus": [{"cpu", "package",
    "core_id", "thread_siblings", "node"}], "nodes": {"0": {"cpulist",
    "distance", "mem_kb"}}, "cpu0_domains", "wall_s"}``."""
    res = boot(machine, kernel, ["/bin/sh", "/schedlab/probe.sh"], {"/schedlab/probe.sh": PROBE_SCRIPT.encode()},
               shift=shift, timeout=timeout, append="sched_verbose", oracle=oracle)  # fmt: skip
    try:
        doc = cast("dict[str, Any]", json.loads(res.report))
    except ValueError as e:
        raise OracleError("SL300", f"the probe's report is not JSON ({e}):\n{res.report[:2000]}") from None
    node_of: dict[int, int] = {}
    for n, info in doc["nodes"].items():
        for c in parse_cpulist(info["cpulist"]):
            node_of[c] = int(n)
    for c in doc["cpus"]:
        c["node"] = node_of.get(c["cpu"])
    doc["cpus"].sort(key=lambda c: c["cpu"])
    doc["wall_s"] = round(res.wall_s, 2)
    return doc


def check_probe(layout: Layout, doc: Mapping[str, Any]) -> list[str]:
    """Differences between ``layout`` and a :func:`probe` result (empty: the
    guest has exactly that topology)."""
    bad: list[str] = []
    if doc.get("nproc") != layout.nr_cpus:
        bad.append(f"nproc {doc.get('nproc')} != {layout.nr_cpus}")
    cpus = {c["cpu"]: c for c in doc.get("cpus", [])}
    if sorted(cpus) != list(range(layout.nr_cpus)):
        bad.append(f"CPUs {sorted(cpus)} != 0..{layout.nr_cpus - 1}")
    for i, c in sorted(cpus.items()):
        want = (layout.socket_of(i), layout.core_of(i), layout.node_of(i))
        got = (c.get("package"), c.get("core_id"), c.get("node"))
        if got != want:
            bad.append(f"cpu{i}: (package, core_id, node) {got} != {want}")
        sib = layout.thread_siblings(i)
        if parse_cpulist(str(c.get("thread_siblings", ""))) != sib:
            bad.append(f"cpu{i}: thread_siblings {c.get('thread_siblings')} != {_ranges(sib)}")
    nodes = doc.get("nodes", {})
    if len(nodes) != layout.nodes:
        bad.append(f"{len(nodes)} nodes != {layout.nodes}")
    for n, info in nodes.items():
        row = [int(x) for x in str(info.get("distance", "")).split()]
        if int(n) < layout.nodes and row != list(layout.distance[int(n)]):
            bad.append(f"node{n}: distance {row} != {list(layout.distance[int(n)])}")
    return bad


# --------------------------------------------------------------------------
# The workload runner


def run_in_guest(
    scenario: str | Path,
    runner: str | Path,
    *,
    kernel: str | None = None,
    shift: int = 0,
    timeout: float = 1800.0,
    extra_args: Sequence[str] = (),
    oracle: Oracle | None = None,
    keep: str | Path | None = None,
) -> dict[str, Any]:
    """Boot the scenario's machine on ``kernel`` (default: the oracle kernel
    for the scenario's ``kernel.version``, see :func:`kernel_for_version`),
    run ``RUNNER --serial /schedlab/scenario.toml`` at boot and return the
    JSON it prints between the markers (plus ``"oracle": {kernel, release,
    shift, wall_s}``). The runner must be a static executable."""
    from schedlab.scenarios import parse_toml, read_text, resolve

    path = resolve(str(scenario))
    text = read_text(path)
    layout = layout_from_scenario(path)
    if kernel is None:
        version = str((parse_toml(text, str(path)).get("kernel") or {}).get("version", "6.1"))
        kernel = kernel_for_version(version)
    orc = oracle or find_oracle()
    files: dict[str, FileSource] = {"/schedlab/runner": Path(runner), "/schedlab/scenario.toml": text.encode()}
    program = ["/schedlab/runner", "--serial", "/schedlab/scenario.toml", *extra_args]
    res = boot(layout, kernel, program, files, shift=shift, timeout=timeout, oracle=orc, keep=keep)
    try:
        doc = cast("dict[str, Any]", json.loads(res.report))
    except ValueError as e:
        raise OracleError("SL300", f"the runner's report is not JSON ({e}):\n{res.report[:2000]}") from None
    doc["oracle"] = {
        "kernel": kernel,
        "release": orc.kernel_releases.get(kernel),
        "shift": shift,
        "wall_s": round(res.wall_s, 2),
        "exit_status": res.exit_status,
    }
    return doc


# --------------------------------------------------------------------------
# schedlab qemu args|probe|run (arguments: cli.py; python -m schedlab.qemu is the same)


def cmd_args(args: argparse.Namespace) -> int:
    layout = resolve_layout(args.machine)
    print(shlex.join(["qemu-system-x86_64", *qemu_args(layout, "VMLINUZ", "INITRD")]))
    return 0


def cmd_probe(args: argparse.Namespace) -> int:
    layout = resolve_layout(args.machine)
    doc = probe(layout, args.kernel or "6.1", shift=3 if args.shift is None else args.shift,
                timeout=args.timeout or 300.0)  # fmt: skip
    print(json.dumps(doc, indent=2))
    bad = check_probe(layout, doc)
    for b in bad:
        print(f"mismatch: {b}", file=sys.stderr)
    return 1 if bad else 0


def cmd_run(args: argparse.Namespace) -> int:
    doc = run_in_guest(args.scenario, args.runner, kernel=args.kernel,
                       shift=0 if args.shift is None else args.shift, timeout=args.timeout or 1800.0,
                       keep=args.keep)  # fmt: skip
    print(json.dumps(doc, indent=2))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m schedlab.qemu ARGS``: ``schedlab qemu ARGS``."""
    from schedlab import cli

    return cli.main(["qemu", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
