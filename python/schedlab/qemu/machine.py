"""A schedlab machine as QEMU boots it: the ``Layout`` the core built (preset
or explicit ``[machine]`` layout, from ``native.check``; no preset or layout
rule is repeated here) and the QEMU options for it: ``-smp`` sockets, cores
and threads, ``-numa`` nodes with their CPUs, memory and SLIT distances, under
TCG with ``-icount shift=N,sleep=off -rtc clock=vm``. CPU ``i`` of the guest
is CPU ``i`` of schedlab: both number package by package, core by core, thread
by thread.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

from schedlab.errors import TopologyError, UsageError
from schedlab.overrides import toml_literal

__all__ = [
    "DEFAULT_APPEND",
    "MEMORY_PER_NODE_MIB",
    "CpuPlace",
    "Layout",
    "MachineLike",
    "cpu_ranges",
    "layout_from_machine",
    "layout_from_scenario",
    "layout_of_preset",
    "node_memory_mib",
    "qemu_args",
    "resolve_layout",
]

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


def cpu_ranges(cpus: Sequence[int]) -> list[str]:
    """``[0, 1, 2, 3, 8]`` -> ``["0-3", "8"]`` (sorted CPUs)."""
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
            cpus = "".join(f",cpus={r}" for r in cpu_ranges(layout.node_cpus(n)))
            args += ["-numa", f"node,nodeid={n}{cpus},memdev=mem{n}"]
        for a in range(layout.nodes):
            for b in range(layout.nodes):
                if a != b:
                    args += ["-numa", f"dist,src={a},dst={b},val={layout.distance[a][b]}"]
    args += ["-kernel", str(kernel), "-initrd", str(initrd), "-append", append]
    return args
