"""The guests' benchmark tools (schedlab.qemu.tools, schedlab.qemu.elf and the
"tools" role of scripts/oracle-setup): the ELF reader and the library closure
on synthetic files, always; the closure on the unpacked tools/ tree and one
hackbench run in a guest only when `make oracle-setup` has fetched them."""

from __future__ import annotations

import importlib.machinery
import re
import struct
import subprocess
import types
from pathlib import Path

import pytest

from schedlab import qemu
from schedlab.qemu import elf, tools

REPO = Path(__file__).resolve().parents[3]
LOADER = "/lib64/ld-linux-x86-64.so.2"
LIBDIR = "/lib/x86_64-linux-gnu"


# --------------------------------------------------------------------------
# A minimal ELF64 writer: one PT_LOAD mapping the whole file at 0x400000,
# PT_INTERP, PT_DYNAMIC (no section headers, as a stripped file may have)


def _elf(*, interp: str | None = None, needed: tuple[str, ...] = (), soname: str | None = None,
         runpath: str | None = None) -> bytes:  # fmt: skip
    base = 0x400000
    strtab, off = b"\0", {}
    for s in [*needed, soname, runpath]:
        if s is not None and s not in off:
            off[s] = len(strtab)
            strtab += s.encode() + b"\0"
    phnum = 3 if interp else 2
    pos = 64 + 56 * phnum
    interp_b = interp.encode() + b"\0" if interp else b""
    interp_at, pos = pos, pos + len(interp_b)
    strtab_at, pos = pos, pos + len(strtab)
    pos += -pos % 8
    dyn = [(1, off[n]) for n in needed]
    dyn += [(14, off[soname])] if soname else []
    dyn += [(29, off[runpath])] if runpath else []
    dyn += [(5, base + strtab_at), (0, 0)]
    dyn_b = b"".join(struct.pack("<qQ", t, v) for t, v in dyn)
    dyn_at, total = pos, pos + len(dyn_b)

    def ph(p_type: int, at: int, size: int) -> bytes:
        return struct.pack("<IIQQQQQQ", p_type, 4, at, base + at, base + at, size, size, 8)

    # e_ident (ELF64, little-endian), ET_DYN, EM_X86_64, e_phoff 64, 56-byte program headers.
    ident = b"\x7fELF\x02\x01\x01" + bytes(9)
    ehdr = ident + struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, 64, 0, 0, 64, 56, phnum, 64, 0, 0)
    phdrs = ph(1, 0, total) + ph(2, dyn_at, len(dyn_b)) + (ph(3, interp_at, len(interp_b)) if interp else b"")
    out = ehdr + phdrs + interp_b + strtab
    return out + bytes(dyn_at - len(out)) + dyn_b


def test_read_dynamic_synthetic(tmp_path: Path) -> None:
    f = tmp_path / "a"
    f.write_bytes(_elf(interp=LOADER, needed=("libx.so.1", "libc.so.6"), runpath="$ORIGIN/../lib"))
    d = elf.read_dynamic(f)
    assert d == elf.ElfDynamic(LOADER, ("libx.so.1", "libc.so.6"), None, (), ("$ORIGIN/../lib",))
    f.write_bytes(_elf(needed=("libc.so.6",), soname="libx.so.1"))
    assert elf.read_dynamic(f) == elf.ElfDynamic(None, ("libc.so.6",), "libx.so.1")
    f.write_bytes(b"#!/bin/sh\n")
    with pytest.raises(ValueError, match="not an ELF"):
        elf.read_dynamic(f)


def _tree(root: Path) -> None:
    """A Debian-like tree: the loader's /lib64 link absolute (as libc6 ships
    it), sonames as links to versioned files, one library beside the binary
    found through RUNPATH $ORIGIN, and one extra library nobody needs."""

    def put(guest: str, data: bytes) -> None:
        p = root / guest.lstrip("/")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)

    def link(guest: str, target: str) -> None:
        p = root / guest.lstrip("/")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.symlink_to(target)

    put(f"{LIBDIR}/ld-linux-x86-64.so.2", _elf(soname="ld-linux-x86-64.so.2"))
    link(LOADER, f"{LIBDIR}/ld-linux-x86-64.so.2")
    put(f"{LIBDIR}/libc.so.6", _elf(interp=LOADER, needed=("ld-linux-x86-64.so.2",), soname="libc.so.6"))
    put("/usr/lib/x86_64-linux-gnu/libnuma.so.1.0.0", _elf(needed=("libc.so.6",), soname="libnuma.so.1"))
    link("/usr/lib/x86_64-linux-gnu/libnuma.so.1", "libnuma.so.1.0.0")
    put("/usr/lib/tool/libpriv.so", _elf(needed=("libnuma.so.1", "libc.so.6"), soname="libpriv.so"))
    put("/usr/lib/x86_64-linux-gnu/libunused.so.1", _elf(soname="libunused.so.1"))
    put("/usr/bin/tool", _elf(interp=LOADER, needed=("libpriv.so", "libc.so.6"), runpath="$ORIGIN/../lib/tool"))


def test_closure_synthetic_tree(tmp_path: Path) -> None:
    _tree(tmp_path)
    cl = elf.closure(tmp_path, [("/usr/bin/tool", tmp_path / "usr/bin/tool")])
    assert cl.missing == {}
    assert cl.interp == LOADER
    assert cl.files == {
        LOADER: tmp_path / "lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",  # the loader once, not again as a soname
        f"{LIBDIR}/libc.so.6": tmp_path / "lib/x86_64-linux-gnu/libc.so.6",
        f"{LIBDIR}/libnuma.so.1": tmp_path / "usr/lib/x86_64-linux-gnu/libnuma.so.1.0.0",  # the real file
        "/usr/lib/tool/libpriv.so": tmp_path / "usr/lib/tool/libpriv.so",  # where RUNPATH found it
    }
    assert sorted(cl.needed_by["libc.so.6"]) == [f"{LIBDIR}/libnuma.so.1", "/usr/bin/tool", "/usr/lib/tool/libpriv.so"]
    assert elf.resolve_in_root(tmp_path, LOADER) == tmp_path / "lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"
    assert elf.resolve_in_root(tmp_path, "/usr/lib/x86_64-linux-gnu/nothing") is None


def test_closure_names_what_is_missing(tmp_path: Path) -> None:
    _tree(tmp_path)
    (tmp_path / "usr/lib/x86_64-linux-gnu/libnuma.so.1.0.0").unlink()  # the soname link dangles now
    cl = elf.closure(tmp_path, [("/usr/bin/tool", tmp_path / "usr/bin/tool")])
    assert cl.missing == {"libnuma.so.1": ["/usr/lib/tool/libpriv.so"]}
    assert cl.describe_missing() == "libnuma.so.1 (needed by /usr/lib/tool/libpriv.so)"


def test_tools_in_and_script() -> None:
    assert tools.tools_in(["perf", "bench", "sched", "pipe"]) == ["perf"]
    assert tools.tools_in(["/usr/bin/hackbench", "-g", "1"]) == ["hackbench"]
    assert tools.tools_in(["sh", "-c", "cyclictest -q; hackbench -p"]) == ["cyclictest", "hackbench"]
    assert tools.tools_in(["nproc"]) == []
    script = tools.tool_script(["perf", "bench", "sched", "pipe", "-l", "2000"])
    assert "perf bench sched pipe -l 2000 > /tmp/schedlab.out 2> /tmp/schedlab.err" in script
    assert script.index(tools.STDERR_END) < script.index(qemu.BEGIN_MARKER) < script.index(qemu.END_MARKER)
    assert script.rstrip().endswith("exit $st")
    with pytest.raises(qemu.OracleError, match="unknown tool"):
        tools.tool_files(["stress-ng"], oracle=None)


def _oracle_setup_module() -> types.ModuleType:
    loader = importlib.machinery.SourceFileLoader("oracle_setup_tools", str(REPO / "scripts/oracle-setup"))
    mod = types.ModuleType(loader.name)
    mod.__file__ = loader.path  # elf_module() finds python/schedlab/qemu/elf.py from it
    loader.exec_module(mod)
    return mod


def test_oracle_setup_reads_depends() -> None:
    mod = _oracle_setup_module()

    class FakeApt:
        def run(self, tool: str, args: list[str], release: str | None = None, cwd: Path | None = None) -> str:
            assert (tool, args) == ("apt-cache", ["show", "--no-all-versions", "x=1"])
            return (
                "Package: x\nVersion: 1\nPre-Depends: libc6 (>= 2.34)\n"
                "Depends: libfoo1 (>= 1.0) | libfoo-alt1, perl:any, libbar2:amd64, python3\n\n"
                "Package: x\nVersion: 1\nDepends: other-stanza\n"
            )

    assert mod.depends(FakeApt(), "x", "1") == ["libbar2", "libc6", "libfoo-alt1", "libfoo1", "python3"]


# --------------------------------------------------------------------------
# On the unpacked tools/ tree and in a guest (needs `make oracle-setup`)


def _oracle_with_tools() -> qemu.Oracle | None:
    try:
        orc = qemu.find_oracle()
        tools.tool_binaries(orc)
    except qemu.OracleError:
        return None
    return orc


ORACLE = _oracle_with_tools()
needs_tools = pytest.mark.skipif(
    ORACLE is None, reason="the oracle's tools are not set up: run `make oracle-setup` (fetches rt-tests and perf)"
)


@needs_tools
@pytest.mark.parametrize("tool", sorted(tools.TOOLS))
def test_tool_closure_matches_ld_so(tool: str) -> None:
    """Our closure of each tool inside tools/ is what the tree's own ld.so
    loads with only the tree to search (--inhibit-cache: no host library)."""
    assert ORACLE is not None
    cl = tools.tool_closure([tool], oracle=ORACLE)
    assert cl.interp == LOADER and cl.missing == {}
    tree = ORACLE.root / ORACLE.manifest["tools"]["tree"]
    for guest, host in cl.files.items():
        assert guest == LOADER or guest.startswith(LIBDIR + "/"), guest
        assert host.is_file() and not host.is_symlink() and tree in host.parents
    libpath = ":".join(str(tree / d.lstrip("/")) for d in elf.DEFAULT_LIB_DIRS)
    binary = tools.tool_binaries(ORACLE)[tool]
    out = subprocess.run([str(cl.files[LOADER]), "--inhibit-cache", "--library-path", libpath, "--list", str(binary)],
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    loaded = {m.group(1): Path(m.group(2)) for m in re.finditer(r"^\s*(\S+) => (\S+) \(", out, re.M)}
    loaded.pop(LOADER, None)
    assert sorted(loaded) == sorted(g.rsplit("/", 1)[1] for g in cl.files if g != LOADER)
    for soname, path in loaded.items():
        assert path.resolve() == cl.files[f"{LIBDIR}/{soname}"].resolve()


@needs_tools
def test_tool_files_only_what_is_needed() -> None:
    assert ORACLE is not None
    hb = tools.tool_files(["hackbench"], oracle=ORACLE)
    assert {"/usr/bin/hackbench", LOADER, f"{LIBDIR}/libc.so.6"} <= set(hb)
    assert "/usr/bin/perf" not in hb and f"{LIBDIR}/libpython3.11.so.1.0" not in hb
    everything = tools.tool_files(sorted(tools.TOOLS), oracle=ORACLE)
    assert set(hb) < set(everything) and f"{LIBDIR}/libpython3.11.so.1.0" in everything
    # The manifest's record of the closure (written by oracle-setup) is the same.
    libs = ORACLE.manifest["tools"]["libraries"]
    assert sorted(g for g in everything if g.startswith(LIBDIR + "/")) == libs


@needs_tools
def test_hackbench_in_guest() -> None:
    """hackbench on 2 CPUs of the 6.1 kernel: about 12 s of wall time."""
    assert ORACLE is not None
    res = tools.run_tool({"sockets": 1, "cores_per_socket": 2}, "6.1", ["hackbench", "-g", "1", "-l", "5"],
                         shift=3, timeout=120, oracle=ORACLE)  # fmt: skip
    assert res.exit_status == 0, res.stderr
    assert "Each sender will pass 5 messages of 100 bytes" in res.stdout
    assert re.search(r"^Time: \d+\.\d{3}$", res.stdout, re.M), res.stdout
    assert res.stderr == "" and res.release == ORACLE.kernel_releases["6.1"]
    assert res.wall_s < 60
