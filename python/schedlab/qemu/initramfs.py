"""The guest's initramfs, built in pure Python: a newc cpio archive (writer and
reader), busybox with its applet links, an ``/init`` that mounts proc, sysfs,
devtmpfs and debugfs, runs one program and powers off, and any extra files.

Also the console protocol every guest program follows: the program prints its
report between ``BEGIN_MARKER`` and ``END_MARKER`` lines on the serial
console, and ``/init`` then prints ``EXIT_MARKER`` with its exit status.
"""

from __future__ import annotations

import gzip
import io
import os
import shlex
import stat
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Union

__all__ = [
    "BEGIN_MARKER",
    "END_MARKER",
    "EXIT_MARKER",
    "CpioEntry",
    "FileSource",
    "build_initramfs",
    "busybox_applets",
    "cpio_newc",
    "init_script",
    "read_newc",
]

BEGIN_MARKER = "=== SCHEDLAB-REPORT BEGIN ==="
END_MARKER = "=== SCHEDLAB-REPORT END ==="
#: Printed by /init after the program, with its exit status.
EXIT_MARKER = "=== SCHEDLAB-EXIT"


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
