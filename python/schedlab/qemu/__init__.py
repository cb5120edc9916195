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
  workload runner) are two such programs.

Dependencies point one way: initramfs and oracle at the bottom, machine on
the core's layout, guest on all three. Every public name is importable from
``schedlab.qemu``. From the shell (``python -m schedlab.qemu ...`` is the
same)::

    schedlab qemu probe 4x4 --kernel 6.12
    schedlab qemu args numa48             # the QEMU options only
    schedlab qemu run SCENARIO --runner PATH [--kernel 6.1]
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from schedlab.qemu.guest import (
    BootResult,
    boot,
    check_probe,
    cmd_args,
    cmd_probe,
    cmd_run,
    extract_report,
    parse_cpulist,
    probe,
    run_in_guest,
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
from schedlab.qemu.oracle import KERNELS, Oracle, OracleError, find_oracle, kernel_for_version

__all__ = [
    "BEGIN_MARKER",
    "END_MARKER",
    "EXIT_MARKER",
    "KERNELS",
    "BootResult",
    "CpioEntry",
    "CpuPlace",
    "FileSource",
    "Layout",
    "MachineLike",
    "Oracle",
    "OracleError",
    "boot",
    "build_initramfs",
    "busybox_applets",
    "check_probe",
    "cmd_args",
    "cmd_probe",
    "cmd_run",
    "cpio_newc",
    "extract_report",
    "find_oracle",
    "init_script",
    "kernel_for_version",
    "layout_from_machine",
    "layout_from_scenario",
    "layout_of_preset",
    "main",
    "node_memory_mib",
    "parse_cpulist",
    "probe",
    "qemu_args",
    "read_newc",
    "resolve_layout",
    "run_in_guest",
]


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m schedlab.qemu ARGS``: ``schedlab qemu ARGS``."""
    from schedlab import cli

    return cli.main(["qemu", *(sys.argv[1:] if argv is None else argv)])
