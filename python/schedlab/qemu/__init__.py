"""The QEMU oracle: boot a Debian kernel with a scenario's topology and run a
program at boot.

``make oracle-setup`` (scripts/oracle-setup) unpacks QEMU 10, Debian's 6.1
(CFS) and 6.12 (EEVDF) kernels and busybox-static into ``.oracle/``. Then

* ``oracle.py`` finds that directory and its kernels;
* ``initramfs.py`` builds the guest's initramfs (newc cpio, gzip) in pure
  Python: busybox, an ``/init`` running one program, extra files;
* ``machine.py`` turns a schedlab machine, as the core lays it out, into QEMU
  options (``-smp``, ``-numa``, ``-icount shift=N,sleep=off -rtc clock=vm``);
* ``guest.py`` boots it under TCG, captures the serial console and returns
  the text the program printed between ``=== SCHEDLAB-REPORT BEGIN ===`` and
  ``=== SCHEDLAB-REPORT END ===``: :func:`probe` (a busybox snippet reporting
  the guest's kernel release and CPU topology) and :func:`run_in_guest` (the
  workload runner) are two such programs;
* ``elf.py`` reads what a dynamically linked program needs (loader,
  ``DT_NEEDED``) and its library closure inside an unpacked tree;
* ``tools.py`` runs real benchmark tools in a guest (hackbench and
  cyclictest from rt-tests, ``perf bench``; unpacked into ``.oracle/tools/``
  with their libraries): :func:`tool_files` gives the initramfs files for a
  list of tools, :func:`run_tool` boots a machine and returns what a command
  printed and its exit status.

Dependencies point one way: initramfs, oracle and elf at the bottom, machine
on the core's layout, guest on those, tools on guest and elf. Every public
name is importable from ``schedlab.qemu``. From the shell (``python -m
schedlab.qemu ...`` is the same)::

    schedlab qemu probe 4x4 --kernel 6.12
    schedlab qemu args numa48             # the QEMU options only
    schedlab qemu run SCENARIO --runner PATH [--kernel 6.1]

and from Python: ``run_tool({"sockets": 1, "cores_per_socket": 2}, "6.12",
["perf", "bench", "sched", "pipe", "-l", "2000"]).stdout``.
"""

from __future__ import annotations

from schedlab.qemu.elf import Closure, ElfDynamic, closure, read_dynamic, resolve_in_root
from schedlab.qemu.guest import (
    BootResult,
    boot,
    calibrate_in_guest,
    check_probe,
    cmd_args,
    cmd_probe,
    cmd_run,
    extract_report,
    parse_cpulist,
    probe,
    run_batch_in_guest,
    run_in_guest,
    trace_in_guest,
)
from schedlab.qemu.initramfs import (
    BEGIN_MARKER,
    END_MARKER,
    EXIT_MARKER,
    CpioEntry,
    FileSource,
    build_initramfs,
    busybox_applets,
    cpio_newc,
    init_script,
    read_newc,
)
from schedlab.qemu.machine import (
    CpuPlace,
    Layout,
    MachineLike,
    layout_from_machine,
    layout_from_scenario,
    layout_of_preset,
    node_memory_mib,
    qemu_args,
    resolve_layout,
)
from schedlab.qemu.oracle import (
    KERNELS,
    Oracle,
    OracleError,
    find_oracle,
    kernel_for_era,
    kernel_for_summary,
    kernel_for_version,
)
from schedlab.qemu.tools import TOOLS, ToolResult, run_tool, tool_binaries, tool_closure, tool_files, tools_in

__all__ = [
    "BEGIN_MARKER",
    "END_MARKER",
    "EXIT_MARKER",
    "KERNELS",
    "TOOLS",
    "BootResult",
    "Closure",
    "CpioEntry",
    "CpuPlace",
    "ElfDynamic",
    "FileSource",
    "Layout",
    "MachineLike",
    "Oracle",
    "OracleError",
    "ToolResult",
    "boot",
    "build_initramfs",
    "busybox_applets",
    "calibrate_in_guest",
    "check_probe",
    "closure",
    "cmd_args",
    "cmd_probe",
    "cmd_run",
    "cpio_newc",
    "extract_report",
    "find_oracle",
    "init_script",
    "kernel_for_era",
    "kernel_for_summary",
    "kernel_for_version",
    "layout_from_machine",
    "layout_from_scenario",
    "layout_of_preset",
    "node_memory_mib",
    "parse_cpulist",
    "probe",
    "qemu_args",
    "read_dynamic",
    "read_newc",
    "resolve_in_root",
    "resolve_layout",
    "run_batch_in_guest",
    "run_in_guest",
    "run_tool",
    "tool_binaries",
    "tool_closure",
    "tool_files",
    "tools_in",
    "trace_in_guest",
]
