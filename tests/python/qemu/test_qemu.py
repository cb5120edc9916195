"""The QEMU oracle (schedlab.qemu): pure unit tests that always run, and one
end-to-end boot that runs only when `make oracle-setup` has filled .oracle/."""

from __future__ import annotations

import gzip
import importlib.machinery
import stat
import subprocess
import sys
import types
from pathlib import Path

import pytest

from _tools import real_tool
from conftest import RunCli, cli_env
from schedlab import native, qemu
from schedlab.errors import TopologyError, UsageError
from schedlab.qemu import BEGIN_MARKER, END_MARKER, CpioEntry

REPO = Path(__file__).resolve().parents[3]


# --------------------------------------------------------------------------
# cpio


def _entries() -> list[CpioEntry]:
    return [
        CpioEntry("bin", stat.S_IFDIR | 0o755),
        CpioEntry("bin/hello", stat.S_IFREG | 0o755, b"#!/bin/sh\necho hello\n"),
        CpioEntry("bin/odd", stat.S_IFREG | 0o644, b"12345"),  # length not a multiple of 4
        CpioEntry("bin/sh", stat.S_IFLNK | 0o777, b"busybox"),
        CpioEntry("dev", stat.S_IFDIR | 0o755),
        CpioEntry("dev/console", stat.S_IFCHR | 0o600, rdev=(5, 1)),
        CpioEntry("empty", stat.S_IFREG | 0o644, b""),
    ]


def test_cpio_round_trip() -> None:
    data = qemu.cpio_newc(_entries())
    assert data.startswith(b"070701")
    assert len(data) % 4 == 0
    assert qemu.read_newc(data) == _entries()
    # gzip-compressed archives are read too, and the output is deterministic.
    assert qemu.read_newc(gzip.compress(data)) == _entries()
    assert qemu.cpio_newc(_entries()) == data


def test_cpio_header_fields() -> None:
    data = qemu.cpio_newc([CpioEntry("a", stat.S_IFREG | 0o644, b"xyz")])
    fields = [int(data[6 + 8 * i : 14 + 8 * i], 16) for i in range(13)]
    ino, mode, uid, gid, nlink, mtime, size = fields[:7]
    assert (mode, uid, gid, nlink, mtime, size) == (stat.S_IFREG | 0o644, 0, 0, 1, 0, 3)
    assert ino == 1
    assert fields[11] == 2  # namesize includes the NUL
    assert data[110:112] == b"a\0"
    assert data.endswith(b"TRAILER!!!\0" + b"\0" * (-(110 + 11) % 4))


def test_cpio_readable_by_cpio_tool(tmp_path: Path) -> None:
    cpio = real_tool(("cpio",), "cpio")
    archive = tmp_path / "a.cpio"
    archive.write_bytes(qemu.cpio_newc(_entries()))
    out = subprocess.run([cpio, "-t", "-F", str(archive)], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [e.name for e in _entries()]


def test_cpio_bad_magic() -> None:
    with pytest.raises(ValueError, match="bad newc magic"):
        qemu.read_newc(b"070707" + b"0" * 200)


def test_initramfs_contents(tmp_path: Path) -> None:
    fake_busybox = tmp_path / "busybox"
    fake_busybox.write_bytes(b"not really busybox")  # --list-full fails: the fallback applet list
    host_file = tmp_path / "runner"
    host_file.write_bytes(b"\x7fELF...")
    host_file.chmod(0o755)
    files: dict[str, qemu.FileSource] = {"/schedlab/scenario.toml": b"name = 'x'\n", "/schedlab/runner": host_file}
    gz = qemu.build_initramfs(fake_busybox, ["/schedlab/runner", "--serial", "/schedlab/scenario.toml"], files)
    assert gz == qemu.build_initramfs(fake_busybox, ["/schedlab/runner", "--serial", "/schedlab/scenario.toml"], files)
    entries = {e.name: e for e in qemu.read_newc(gz)}
    assert entries["bin/busybox"].data == b"not really busybox"
    assert entries["bin/sh"].is_symlink and entries["bin/sh"].data == b"busybox"
    assert entries["sbin/poweroff"].data == b"../bin/busybox"
    assert entries["dev/console"].rdev == (5, 1) and stat.S_ISCHR(entries["dev/console"].mode)
    assert entries["schedlab"].is_dir
    assert entries["schedlab/scenario.toml"].data == b"name = 'x'\n"
    assert stat.S_IMODE(entries["schedlab/runner"].mode) & 0o111
    init = entries["init"].data.decode()
    assert stat.S_IMODE(entries["init"].mode) == 0o755
    assert init.startswith("#!/bin/sh\n")
    for line in ("mount -t proc proc /proc", "mount -t sysfs sysfs /sys", "poweroff -f"):
        assert line in init
    assert "/schedlab/runner --serial /schedlab/scenario.toml\n" in init
    # Every entry's parent directory comes before it.
    seen: set[str] = set()
    for e in qemu.read_newc(gz):
        parent = str(Path(e.name).parent)
        assert parent == "." or parent in seen, e.name
        seen.add(e.name)


def test_init_script_quotes_arguments() -> None:
    init = qemu.init_script(["/bin/prog", "a b", "it's"])
    assert "/bin/prog 'a b' 'it'\"'\"'s'\n" in init


# --------------------------------------------------------------------------
# Machines and QEMU options


def _opts(args: list[str], flag: str) -> list[str]:
    return [args[i + 1] for i, a in enumerate(args) if a == flag]


NATIVE = pytest.mark.native


@NATIVE
def test_layout_comes_from_the_core() -> None:
    """qemu keeps no copy of the presets: a preset's layout is what the core's
    check() says for the scenario `[machine] preset = NAME`."""
    from schedlab import native

    summary = native.check('[machine]\npreset = "numa48"\n', "t", [])["machine"]
    layout = qemu.resolve_layout("numa48")
    assert layout == qemu.Layout.from_summary(summary)
    assert (layout.name, layout.nr_cpus, layout.sockets, layout.cores_per_socket) == ("numa48", 48, 2, 12)
    assert (layout.threads_per_core, layout.nodes, layout.memory_bytes) == (2, 2, 128 << 30)
    assert layout.distance == ((10, 21), (21, 10))
    assert summary["cpus"][25] == {"cpu": 25, "package": 1, "core": 12, "thread": 1, "llc": 1, "node": 1}
    assert layout.thread_siblings(25) == [24, 25]
    assert not hasattr(qemu, "PRESETS")


@NATIVE
@pytest.mark.parametrize(
    "name", ["8cpu-llc", "4cpu", "4x4", "uma8", "numa48", "skl52", "2x8smt", "smp64", "smp256", "smp1024"]
)
def test_every_preset_lays_out(name: str) -> None:
    layout = qemu.resolve_layout(name)
    assert layout.name == name
    assert layout.nr_cpus == layout.sockets * layout.cores_per_socket * layout.threads_per_core
    sockets = [layout.socket_of(c) for c in range(layout.nr_cpus)]
    assert sockets == sorted(sockets)
    assert sorted(c for n in range(layout.nodes) for c in layout.node_cpus(n)) == list(range(layout.nr_cpus))
    assert len(layout.distance) == layout.nodes and all(len(r) == layout.nodes for r in layout.distance)


@NATIVE
def test_unknown_preset_is_the_cores_error() -> None:
    with pytest.raises(TopologyError) as e:
        qemu.resolve_layout("nope")
    assert e.value.code == "SL110"
    msg = e.value.message
    assert msg.startswith("nope (not a scenario, so a machine preset): machine.preset: unknown preset")
    assert "4x4" in msg and "smp1024" in msg  # the accepted presets, from the core
    # A path-like name is a scenario that is not there, not a preset.
    with pytest.raises(UsageError, match="no such file"):
        qemu.resolve_layout("nope.toml")


@NATIVE
def test_args_4x4() -> None:
    layout = qemu.resolve_layout("4x4")
    assert (layout.nr_cpus, layout.sockets, layout.nodes) == (16, 4, 1)
    args = qemu.qemu_args(layout, "/k/vmlinuz", "/k/initrd.gz", shift=3)
    assert _opts(args, "-smp") == ["cpus=16,sockets=4,cores=4,threads=1"]
    assert _opts(args, "-numa") == []
    assert _opts(args, "-object") == []
    assert _opts(args, "-m") == ["512M"]  # 16GiB asked, capped to 512 MiB per node
    assert _opts(args, "-icount") == ["shift=3,sleep=off"]
    assert _opts(args, "-rtc") == ["clock=vm"]
    assert _opts(args, "-machine") == ["q35"]
    assert _opts(args, "-accel") == ["tcg"]
    assert _opts(args, "-kernel") == ["/k/vmlinuz"]
    assert _opts(args, "-initrd") == ["/k/initrd.gz"]
    assert "console=ttyS0" in _opts(args, "-append")[0].split()
    assert "-nographic" in args and "-no-reboot" in args


@NATIVE
def test_args_two_nodes() -> None:
    layout = qemu.resolve_layout(
        {"sockets": 2, "cores_per_socket": 4, "threads_per_core": 2, "nodes": 2, "distance": [[10, 32], [32, 10]]}
    )
    args = qemu.qemu_args(layout, "k", "i", shift=0)
    assert _opts(args, "-smp") == ["cpus=16,sockets=2,cores=4,threads=2"]
    assert _opts(args, "-m") == ["1024M"]
    assert _opts(args, "-object") == ["memory-backend-ram,id=mem0,size=512M", "memory-backend-ram,id=mem1,size=512M"]
    assert _opts(args, "-numa") == [
        "node,nodeid=0,cpus=0-7,memdev=mem0",
        "node,nodeid=1,cpus=8-15,memdev=mem1",
        "dist,src=0,dst=1,val=32",
        "dist,src=1,dst=0,val=32",
    ]
    assert _opts(args, "-icount") == ["shift=0,sleep=off"]


@NATIVE
def test_args_memory_the_scenario_asks() -> None:
    small = qemu.resolve_layout({"sockets": 2, "cores_per_socket": 2, "nodes": 2, "memory": "600MiB"})
    assert _opts(qemu.qemu_args(small, "k", "i"), "-object")[0] == "memory-backend-ram,id=mem0,size=300M"
    tiny = qemu.resolve_layout({"sockets": 1, "cores_per_socket": 2, "memory": "64MiB"})
    assert _opts(qemu.qemu_args(tiny, "k", "i"), "-m") == ["128M"]  # the floor the kernel needs


@NATIVE
def test_layout_numa48_and_split_sockets() -> None:
    n48 = qemu.resolve_layout("numa48")
    assert (n48.nr_cpus, n48.nodes, n48.threads_per_core) == (48, 2, 2)
    assert n48.node_cpus(1) == list(range(24, 48))
    assert (n48.socket_of(25), n48.core_of(25), n48.node_of(25)) == (1, 0, 1)
    # Two nodes per socket (SNC/NPS): each node holds half a socket's cores
    # (and of its LLCs: the core refuses an LLC straddling two nodes).
    snc = qemu.resolve_layout({"sockets": 2, "cores_per_socket": 4, "llcs_per_socket": 2, "nodes": 4})
    assert [snc.node_of(c) for c in range(8)] == [0, 0, 1, 1, 2, 2, 3, 3]
    numa = _opts(qemu.qemu_args(snc, "k", "i"), "-numa")
    assert numa[:4] == [f"node,nodeid={n},cpus={2 * n}-{2 * n + 1},memdev=mem{n}" for n in range(4)]
    # smp1024's two-level SLIT comes through.
    assert qemu.resolve_layout("smp1024").distance[0][:5] == (10, 21, 21, 21, 31)


@NATIVE
def test_args_refuse_more_than_xapic() -> None:
    assert qemu.resolve_layout("smp64").max_apic_id() == 63
    assert qemu.resolve_layout("skl52").max_apic_id() == 32 + 25  # 26 cores take 5 bits
    with pytest.raises(TopologyError, match="APIC ID"):
        qemu.qemu_args(qemu.resolve_layout("smp256"), "k", "i")


@NATIVE
def test_layout_errors() -> None:
    with pytest.raises(TopologyError, match="unknown preset"):
        qemu.resolve_layout({"preset": "nope"})
    with pytest.raises(TopologyError, match="no layout"):
        qemu.resolve_layout({"nodes": 2})
    with pytest.raises(TopologyError, match="evenly"):
        qemu.resolve_layout({"sockets": 3, "cores_per_socket": 2, "nodes": 2})


@NATIVE
def test_layout_from_bundled_scenario() -> None:
    layout = qemu.resolve_layout(str(REPO / "scenarios/textbook/n-hogs-n-cpus.toml"))
    assert (layout.name, layout.nr_cpus) == ("8cpu-llc", 8)


def test_kernel_for_version() -> None:
    assert qemu.kernel_for_version("6.1") == "6.1"
    assert qemu.kernel_for_version("5.5") == "6.1"
    assert qemu.kernel_for_version("2.6.32") == "6.1"
    assert qemu.kernel_for_version("6.6") == "6.12"
    assert qemu.kernel_for_version("6.12") == "6.12"


# --------------------------------------------------------------------------
# Reports and errors


def test_extract_report() -> None:
    console = (
        "SeaBIOS\r\nBooting from ROM...\r\n"
        f"c\x1b[?7l\x1b[2J{BEGIN_MARKER}\r\n"
        '{"a": 1}\r\n'
        "line two\r\n"
        f"{END_MARKER}\r\n=== SCHEDLAB-EXIT 0 ===\r\n[    9.07] reboot: Power down\r\n"
    )
    assert qemu.extract_report(console) == '{"a": 1}\nline two'
    assert qemu.extract_report(f"{BEGIN_MARKER}\n{END_MARKER}\n") == ""
    assert qemu.extract_report(f"{BEGIN_MARKER}\nold\n{END_MARKER}\n{BEGIN_MARKER}\nnew\n{END_MARKER}\n") == "new"
    assert qemu.extract_report(f"{BEGIN_MARKER}\nno end\n") is None
    assert qemu.extract_report("nothing\n") is None
    assert qemu.extract_report(f"mention of {BEGIN_MARKER} mid-line, then text\n{END_MARKER}\n") is None


@NATIVE
def test_check_probe_finds_mismatches() -> None:
    layout = qemu.resolve_layout({"sockets": 2, "cores_per_socket": 1, "nodes": 2})
    assert layout.distance == ((10, 21), (21, 10))
    good = {
        "nproc": 2,
        "cpus": [
            {"cpu": 0, "package": 0, "core_id": 0, "thread_siblings": "0", "node": 0},
            {"cpu": 1, "package": 1, "core_id": 0, "thread_siblings": "1", "node": 1},
        ],
        "nodes": {"0": {"cpulist": "0", "distance": "10 21"}, "1": {"cpulist": "1", "distance": "21 10"}},
    }
    assert qemu.check_probe(layout, good) == []
    bad = {**good, "nodes": {"0": {"cpulist": "0-1", "distance": "10"}}}
    bad["cpus"] = [dict(c, node=0) for c in good["cpus"]]  # type: ignore[attr-defined]
    problems = qemu.check_probe(layout, bad)
    assert any("cpu1" in p for p in problems) and any("nodes" in p for p in problems)


def test_missing_oracle_says_run_setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(qemu.OracleError, match="make oracle-setup"):
        qemu.find_oracle(tmp_path)
    monkeypatch.setenv("SCHEDLAB_ORACLE", str(tmp_path / "nowhere"))
    with pytest.raises(qemu.OracleError, match=r"\[SL300\].*make oracle-setup"):
        qemu.boot("4cpu", "6.1", ["/bin/true"])


# --------------------------------------------------------------------------
# End to end (needs `make oracle-setup`)


def _oracle_or_none() -> qemu.Oracle | None:
    try:
        return qemu.find_oracle()
    except qemu.OracleError:
        return None


ORACLE = _oracle_or_none()
needs_oracle = pytest.mark.skipif(
    ORACLE is None, reason="the QEMU oracle is not set up: run `make oracle-setup` (fetches QEMU 10 and the kernels)"
)


@needs_oracle
def test_boot_probe_4cpu() -> None:
    """4 CPUs on the 6.12 kernel at shift 3: about 15 s of wall time."""
    assert ORACLE is not None
    layout = qemu.resolve_layout({"sockets": 2, "cores_per_socket": 2, "nodes": 2})
    doc = qemu.probe(layout, "6.12", shift=3, timeout=120, oracle=ORACLE)
    assert doc["uname_r"] == ORACLE.kernel_releases["6.12"]
    assert qemu.check_probe(layout, doc) == []
    assert doc["wall_s"] < 120


@needs_oracle
def test_boot_timeout_shows_console() -> None:
    assert ORACLE is not None
    with pytest.raises(qemu.OracleError, match="did not finish within 3 s") as e:
        qemu.boot("4cpu", "6.1", ["/bin/true"], timeout=3, oracle=ORACLE)
    assert "last console lines" in str(e.value)


#: A stand-in for the static runner: a busybox script with the runner's
#: interface (`RUNNER --serial SCENARIO.toml`, JSON between the markers).
FAKE_RUNNER = f"""#!/bin/sh
[ "$1" = --serial ] || exit 3
echo "{BEGIN_MARKER}"
lines=$(wc -l < "$2"); seen=$(grep -c 250ms "$2")
echo "{{\\"args\\": \\"$*\\", \\"scenario_lines\\": $lines, \\"set_seen\\": $seen, \\"nproc\\": $(nproc)}}"
echo "{END_MARKER}"
"""


@needs_oracle
def test_run_in_guest_plumbing(tmp_path: Path) -> None:
    assert ORACLE is not None
    runner = tmp_path / "runner"
    runner.write_text(FAKE_RUNNER)
    runner.chmod(0o755)
    scenario = tmp_path / "s.toml"
    scenario.write_text(
        'name = "two"\n[machine]\nsockets = 1\ncores_per_socket = 2\n[kernel]\nversion = "6.1"\n'
        '[measure]\nduration = "100ms"\n[[task]]\nname = "hog"\ncount = 1\nprogram = [ { run = "10ms" } ]\n'
    )
    # The guest runs the core's TOML of the scenario, --set applied.
    overrides = [("measure.duration", '"250ms"')]
    doc = qemu.run_in_guest(scenario, runner, shift=3, timeout=120, oracle=ORACLE, overrides=overrides)
    assert doc["args"] == "--serial /schedlab/scenario.toml"
    resolved = native.scenario_toml(scenario.read_text(), str(scenario), overrides)
    assert doc["scenario_lines"] == len(resolved.splitlines())
    assert doc["set_seen"] == 1
    assert doc["nproc"] == 2
    assert doc["oracle"]["kernel"] == "6.1" and doc["oracle"]["exit_status"] == 0


# --------------------------------------------------------------------------
# scripts/oracle-setup: reading the system's apt sources


def _oracle_setup_module() -> types.ModuleType:
    loader = importlib.machinery.SourceFileLoader("oracle_setup", str(REPO / "scripts/oracle-setup"))
    mod = types.ModuleType(loader.name)
    loader.exec_module(mod)
    return mod


def test_oracle_setup_reads_apt_sources() -> None:
    mod = _oracle_setup_module()
    listed = mod._parse_list_file(
        "# comment\n"
        "deb [arch=amd64 signed-by=/k.gpg] http://mirror.example/debian bookworm main contrib\n"
        "deb-src http://mirror.example/debian bookworm main\n"
        "deb http://security.example/debian-security bookworm-security main\n"
    )
    assert [(e["types"], e["uris"], e["suites"], e["signed_by"]) for e in listed] == [
        (["deb"], ["http://mirror.example/debian"], ["bookworm"], "/k.gpg"),
        (["deb-src"], ["http://mirror.example/debian"], ["bookworm"], None),
        (["deb"], ["http://security.example/debian-security"], ["bookworm-security"], None),
    ]
    deb822 = mod._parse_deb822_file(
        "Types: deb deb-src\n"
        "# http://snapshot.example/archive\n"
        "URIs: http://mirror.example/debian\n"
        "Suites: bookworm bookworm-updates\n"
        "Components: main\n"
        "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
        "\n"
        "Types: deb\n"
        "URIs: http://other.example/debian\n"
        "Suites: bookworm\n"
        "Enabled: no\n"
    )
    assert deb822[0]["uris"] == ["http://mirror.example/debian"]
    assert deb822[0]["suites"] == ["bookworm", "bookworm-updates"]
    assert deb822[0]["types"] == ["deb", "deb-src"]
    assert deb822[0]["signed_by"] == "/usr/share/keyrings/debian-archive-keyring.gpg"
    assert deb822[0]["enabled"] and not deb822[1]["enabled"]


# --------------------------------------------------------------------------
# The command: `schedlab qemu ...`, and `python -m schedlab.qemu ...` delegating to it


@NATIVE
def test_cli_qemu_args(run_cli: RunCli) -> None:
    r = run_cli("qemu", "args", "numa48")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("qemu-system-x86_64 ") and "-smp cpus=48,sockets=2,cores=12,threads=2" in r.stdout
    same = subprocess.run(
        [sys.executable, "-m", "schedlab.qemu", "args", "numa48"],
        capture_output=True,
        text=True,
        env=cli_env(),
        check=False,
    )
    assert (same.returncode, same.stdout) == (0, r.stdout)
    bad = run_cli("qemu", "args", "nope")
    assert bad.returncode == 2 and "[SL110]" in bad.stderr and "unknown preset" in bad.stderr


def test_a_scenarios_isolcpus_goes_on_the_guests_command_line() -> None:
    """isolcpus= is a boot parameter: the oracle boots the guest with the
    scenario's, and nothing more when it has none."""
    from schedlab.qemu.guest import _boot_parameters

    text = (REPO / "validation" / "isolcpus.toml").read_text()
    assert _boot_parameters(native.scenario_tree(text, "isolcpus.toml", [])) == "isolcpus=2-3"
    text = (REPO / "validation" / "nice-pinned.toml").read_text()
    assert _boot_parameters(native.scenario_tree(text, "nice-pinned.toml", [])) == ""
    assert _boot_parameters({"kernel": {"isolcpus": "domain,1"}}) == "isolcpus=domain,1"
