"""What a dynamically linked program needs, read in pure Python: the ELF
loader it names (``PT_INTERP``), the libraries it names (``DT_NEEDED``), where
it says to look (``DT_RPATH``, ``DT_RUNPATH``), and the closure of those
needs inside an unpacked Debian tree (``dpkg-deb -x`` output), as the guest's
``ld.so`` would resolve them without an ``ld.so.cache``.

Standard library only: ``scripts/oracle-setup`` loads this file by its path
(before the schedlab package may be importable) to check the tools' library
closure, and :mod:`schedlab.qemu.tools` uses it to pick the initramfs files.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

__all__ = ["DEFAULT_LIB_DIRS", "GUEST_LIB_DIR", "Closure", "ElfDynamic", "closure", "read_dynamic", "resolve_in_root"]

#: Where the guest's ld.so looks when no RPATH/RUNPATH names the library (Debian
#: x86_64's compiled-in system directories; the guest has no ld.so.cache).
DEFAULT_LIB_DIRS = ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib")
#: Where a library found in a default directory goes in the guest.
GUEST_LIB_DIR = "/lib/x86_64-linux-gnu"

_PT_LOAD, _PT_DYNAMIC, _PT_INTERP = 1, 2, 3
_DT_NULL, _DT_NEEDED, _DT_STRTAB, _DT_SONAME, _DT_RPATH, _DT_RUNPATH = 0, 1, 5, 14, 15, 29


@dataclass(frozen=True)
class ElfDynamic:
    """The dynamic-linking facts of one ELF file (all empty for a static one)."""

    interp: str | None = None
    needed: tuple[str, ...] = ()
    soname: str | None = None
    rpath: tuple[str, ...] = ()
    runpath: tuple[str, ...] = ()


def read_dynamic(path: str | Path) -> ElfDynamic:
    """Read ``PT_INTERP`` and the ``DT_NEEDED``/``DT_SONAME``/``DT_RPATH``/
    ``DT_RUNPATH`` entries of an ELF file (32 or 64 bit, either byte order).
    Raises ``ValueError`` if the file is not ELF or is truncated."""
    data = Path(path).read_bytes()
    if data[:4] != b"\x7fELF" or len(data) < 64:
        raise ValueError(f"{path}: not an ELF file")
    is64 = data[4] == 2
    end = "<" if data[5] == 1 else ">"
    try:
        # e_phoff, then e_phentsize and e_phnum; the formats of a program
        # header and of a dynamic entry.
        if is64:
            (phoff,) = struct.unpack_from(end + "Q", data, 32)
            phentsize, phnum = struct.unpack_from(end + "HH", data, 54)
            ph_fmt, dyn_fmt = end + "IIQQQQQQ", end + "qQ"
        else:
            (phoff,) = struct.unpack_from(end + "I", data, 28)
            phentsize, phnum = struct.unpack_from(end + "HH", data, 42)
            ph_fmt, dyn_fmt = end + "IIIIIIII", end + "iI"
        loads: list[tuple[int, int, int]] = []  # (vaddr, filesz, offset)
        interp = None
        dyn: tuple[int, int] | None = None  # (offset, size)
        for i in range(phnum):
            f = struct.unpack_from(ph_fmt, data, phoff + i * phentsize)
            if is64:
                p_type, p_offset, p_vaddr, p_filesz = f[0], f[2], f[3], f[5]
            else:
                p_type, p_offset, p_vaddr, p_filesz = f[0], f[1], f[2], f[4]
            if p_type == _PT_LOAD:
                loads.append((p_vaddr, p_filesz, p_offset))
            elif p_type == _PT_INTERP:
                interp = data[p_offset : p_offset + p_filesz].split(b"\0", 1)[0].decode()
            elif p_type == _PT_DYNAMIC:
                dyn = (p_offset, p_filesz)
        if dyn is None:
            return ElfDynamic(interp=interp)
        entries: list[tuple[int, int]] = []
        step = struct.calcsize(dyn_fmt)
        for off in range(dyn[0], dyn[0] + dyn[1] - step + 1, step):
            tag, val = struct.unpack_from(dyn_fmt, data, off)
            if tag == _DT_NULL:
                break
            entries.append((tag, val))
    except struct.error as e:
        raise ValueError(f"{path}: truncated ELF ({e})") from None
    strtab_vaddr = next((v for t, v in entries if t == _DT_STRTAB), None)
    if strtab_vaddr is None:
        raise ValueError(f"{path}: PT_DYNAMIC without DT_STRTAB")
    # DT_STRTAB is an address: the PT_LOAD segment holding it gives its file offset.
    strtab = next((o + strtab_vaddr - v for v, n, o in loads if v <= strtab_vaddr < v + n), None)
    if strtab is None:
        raise ValueError(f"{path}: DT_STRTAB {strtab_vaddr:#x} is in no PT_LOAD segment")

    def string(off: int) -> str:
        return data[strtab + off : data.index(b"\0", strtab + off)].decode()

    def paths(tag: int) -> tuple[str, ...]:
        return tuple(p for t, v in entries if t == tag for p in string(v).split(":") if p)

    soname = next((string(v) for t, v in entries if t == _DT_SONAME), None)
    needed = tuple(string(v) for t, v in entries if t == _DT_NEEDED)
    return ElfDynamic(interp, needed, soname, paths(_DT_RPATH), paths(_DT_RUNPATH))


def resolve_in_root(root: Path, guest: str) -> Path | None:
    """The regular file that ``guest`` (an absolute path in the tree) names,
    following symlinks as if ``root`` were ``/`` (an absolute target stays
    inside the tree); None if there is none."""
    parts = [p for p in guest.split("/") if p]
    cur = root
    hops = 0
    while parts:
        name = parts.pop(0)
        if name == ".":
            continue
        if name == "..":
            cur = cur.parent if cur != root else root
            continue
        nxt = cur / name
        if nxt.is_symlink():
            hops += 1
            if hops > 40:
                return None
            target = str(nxt.readlink())
            if target.startswith("/"):
                cur = root
            parts = [p for p in target.split("/") if p] + parts
            continue
        if not os.path.lexists(nxt):
            return None
        cur = nxt
    return cur if cur.is_file() else None


@dataclass
class Closure:
    """What a set of ELF files needs from a tree: ``files`` maps each guest
    path (the loader at its ``PT_INTERP`` path, each library at
    ``GUEST_LIB_DIR/SONAME`` or in the RPATH/RUNPATH directory it was found
    in) to the real file in the tree (symlinks followed); ``needed_by`` maps
    each soname to the guest paths of the files naming it; ``missing`` maps
    each soname found nowhere to them."""

    root: Path
    interp: str | None = None
    files: dict[str, Path] = field(default_factory=dict)
    needed_by: dict[str, list[str]] = field(default_factory=dict)
    missing: dict[str, list[str]] = field(default_factory=dict)

    def describe_missing(self) -> str:
        return "; ".join(f"{s} (needed by {', '.join(sorted(set(w)))})" for s, w in sorted(self.missing.items()))


def _search_dirs(dyn: ElfDynamic, guest: str) -> list[str]:
    origin = str(PurePosixPath(guest).parent)
    extra = [*dyn.rpath, *dyn.runpath] if dyn.runpath else list(dyn.rpath)
    out = [os.path.normpath(d.replace("${ORIGIN}", origin).replace("$ORIGIN", origin)) for d in extra]
    return [*out, *DEFAULT_LIB_DIRS]


def closure(root: str | Path, elfs: Iterable[tuple[str, Path]]) -> Closure:
    """The loader and libraries that ``elfs`` ((guest path, file) pairs) need,
    transitively, resolved in the unpacked tree ``root``. Deterministic: a
    library is looked for in the needing file's RPATH/RUNPATH ($ORIGIN
    expanded), then in ``DEFAULT_LIB_DIRS``, in order; the loader provides its
    own soname (``ld-linux-x86-64.so.2`` is not copied twice)."""
    root = Path(root)
    out = Closure(root)
    provided: dict[str, str] = {}  # soname -> guest path
    queue: list[tuple[str, Path]] = sorted(elfs)
    seen: set[str] = set()
    while queue:
        guest, host = queue.pop(0)
        if guest in seen:
            continue
        seen.add(guest)
        dyn = read_dynamic(host)
        if dyn.interp and out.interp is None:
            real = resolve_in_root(root, dyn.interp)
            if real is None:
                out.missing.setdefault(dyn.interp, []).append(guest)
            else:
                out.interp = dyn.interp
                out.files[dyn.interp] = real
                soname = read_dynamic(real).soname
                provided[soname or PurePosixPath(dyn.interp).name] = dyn.interp
        for soname in dyn.needed:
            out.needed_by.setdefault(soname, []).append(guest)
            if soname in provided:
                continue
            for d in _search_dirs(dyn, guest):
                real = resolve_in_root(root, f"{d}/{soname}")
                if real is not None:
                    where = f"{GUEST_LIB_DIR if d in DEFAULT_LIB_DIRS else d}/{soname}"
                    provided[soname] = where
                    out.files[where] = real
                    queue.append((where, real))
                    break
            else:
                out.missing.setdefault(soname, []).append(guest)
    for soname in list(out.missing):
        if soname in provided:  # found later for another file (RPATH differences)
            del out.missing[soname]
    return out
