"""``schedlab validate``: the simulator against real kernels.

    schedlab validate [--kernel 6.1|6.12] [--json FILE] [--only NAME ...] [--local] [--suite FILE]

For each scenario of ``validation/suite.toml`` (its header documents the
format, the metrics and the tolerance syntax) this runs the simulator at the
real kernel's exact stable release (``kernel.version`` overridden to, say,
6.12.95 when the guest ran 6.12.95, see ``sim_version``; plus the entry's
``sim_set``) and the same scenario for real: under the QEMU
oracle (:func:`schedlab.qemu.run_in_guest`, icount shift=0, with the static
``schedlab-runner``, built if missing) or, with ``--local``, on this kernel
(machines bigger than this host are refused). It prints a fidelity table
(scenario, metric, sim, real, difference, tolerance, verdict) and exits 0
when every row is ok and every negative-control row is off, 1 otherwise, 2 on
an error (SL300 when the oracle is missing or a guest fails).

The simulator runs with the real machine's cost constants, measured first
(``--costs measured``, the default): ``schedlab-runner --calibrate`` in a
two-CPU guest of the oracle kernel (on this host with ``--local``; kept as
``calibration.json`` by ``--save-real`` and read back by ``--real-from``).
At icount shift 0 the guest spends one ns per instruction, several times a
KVM host's time per syscall; ``--costs default`` keeps the documented
defaults. The document records the costs used under ``costs``.

Both sides are read over their measurement window by ``schedlab.metrics``
(the simulator's per-task ``window`` counters, the runner's counters, which
are window deltas already); each scenario is simulated once.
Both reports carry the timer delays (``timer_delay_*``): the simulator's from the sleep
timer's expiry (or, without a timer, the wakeup) to the task's return to
user space (its switch plus the switch's cost, a wakeup IPI, the idle exit); the
runner's from its timer/sleep ops (expiry to return to user space); hrtimer
slack is included on both sides.

Metrics the guest cannot measure are not emitted: a metric whose real value is
null (``se.nr_migrations`` absent, a task that recorded no timer delay) is
left out of ``results`` and listed under ``unmeasured``. nr_wakeups and
wait_max (schedstats, off by default) are not used at all.

The package: ``suite.py`` reads the suite file and its tolerances;
``runners.py`` produces both sides of a row (the simulator's run and the real
run under QEMU, on this kernel, or kept from an earlier one); ``results.py``
computes each metric on both sides through ``schedlab.metrics``, judges the
rows and prints the table. Every public name is importable from
``schedlab.validation``.
"""

from schedlab.metrics import MetricError
from schedlab.validation.results import cmd_validate, compute, exit_status, format_table, validate
from schedlab.validation.runners import (
    CALIBRATION_FILE,
    GUEST_TIMEOUT_S,
    RUN_SEPARATOR,
    RUNS_KEY,
    RealRunner,
    Side,
    kept_calibration,
    kept_real,
    local_real,
    noting_warnings,
    parse_tool_output,
    qemu_calibration,
    qemu_real,
    real_side,
    repeated_real,
    run_sim,
    save_calibration,
    saving_real,
    sim_side,
    sim_version,
    static_runner,
)
from schedlab.validation.suite import (
    DEFAULT_SUITE,
    KERNELS,
    METRIC_UNITS,
    Bound,
    Entry,
    MetricSpec,
    Suite,
    Tolerance,
    load_suite,
    parse_tolerance,
    select_entries,
)

__all__ = [
    "CALIBRATION_FILE",
    "DEFAULT_SUITE",
    "GUEST_TIMEOUT_S",
    "KERNELS",
    "METRIC_UNITS",
    "RUNS_KEY",
    "RUN_SEPARATOR",
    "Bound",
    "Entry",
    "MetricError",
    "MetricSpec",
    "RealRunner",
    "Side",
    "Suite",
    "Tolerance",
    "cmd_validate",
    "compute",
    "exit_status",
    "format_table",
    "kept_calibration",
    "kept_real",
    "load_suite",
    "local_real",
    "noting_warnings",
    "parse_tolerance",
    "parse_tool_output",
    "qemu_calibration",
    "qemu_real",
    "real_side",
    "repeated_real",
    "run_sim",
    "save_calibration",
    "saving_real",
    "select_entries",
    "sim_side",
    "sim_version",
    "static_runner",
    "validate",
]
