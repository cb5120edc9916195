"""The exception hierarchy shared by the Rust core and the Python front end.

The binding (``crates/schedlab-python``) maps every core ``SimError`` variant
onto one of these classes by calling ``schedlab.errors.<Kind>(code, message)``;
the Python side raises the same classes for its own errors, so a caller needs
one ``except SchedlabError`` for everything schedlab refuses.

Codes are stable: never renumber, only add.

=======  ====================  ==============================================
code     class                 meaning
=======  ====================  ==============================================
SL001    UsageError            CLI misuse: unknown name, bad ``--set``, no file
SL100    ScenarioError         the text is not valid TOML
SL101    ScenarioError         a key the schema does not know
SL102    ScenarioError         a key whose value is not acceptable
SL103    ScenarioError         a required key is missing
SL110    TopologyError         unknown preset, bad layout, affinity off-machine
SL120    NotModelledError      something schedlab does not model (yet)
SL130    TraceError            a trace to import is malformed or lacks the
                               events the import needs
SL200    InvariantError        the simulation reached a forbidden state
SL210    ResourceError         the run's heap passed its budget
                               (``SCHEDLAB_MEMORY_LIMIT``)
SL300    HostError             a real run failed: the host refused a syscall
                               (EPERM for SCHED_FIFO), the QEMU oracle is not
                               set up, the guest timed out or printed no report
SL900    InternalError         a bug, or the native module is missing
=======  ====================  ==============================================
"""

from __future__ import annotations

__all__ = [
    "HostError",
    "InternalError",
    "InvariantError",
    "NotModelledError",
    "ResourceError",
    "ScenarioError",
    "SchedlabError",
    "TopologyError",
    "TraceError",
    "UsageError",
]


class SchedlabError(Exception):
    """Base of every error schedlab raises on purpose.

    ``code`` is the stable code (``"SL101"``); ``message`` already names the
    file, the key path and what is accepted. ``str(e)`` is ``"[SL101] message"``.
    """

    def __init__(self, code: str, message: str) -> None:
        # Keep (code, message) in args so the exception pickles across processes.
        super().__init__(code, message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code!r}, {self.message!r})"


class UsageError(SchedlabError):
    """CLI or API misuse detected on the Python side (code SL001)."""


class ScenarioError(SchedlabError):
    """The scenario text is malformed (SL100), has an unknown key (SL101), a bad
    value (SL102) or misses a required key (SL103)."""


class TopologyError(SchedlabError):
    """The machine description is inconsistent or a task's affinity lies outside
    it (SL110)."""


class NotModelledError(SchedlabError):
    """The scenario asks for something schedlab does not model yet (SL120)."""


class InvariantError(SchedlabError):
    """The simulation reached a state the model forbids (SL200)."""


class ResourceError(SchedlabError):
    """The run outgrew what it may take of this host: its heap passed the
    budget (SL210; ``SCHEDLAB_MEMORY_LIMIT``, ``schedlab.heap``)."""


class HostError(SchedlabError):
    """A real run failed on this host or in the QEMU oracle (SL300): a syscall
    was refused (EPERM for SCHED_FIFO), the oracle is missing (run ``make
    oracle-setup``), the guest timed out or printed no report. ``console_tail``
    holds the guest's last console lines when there is a guest."""

    def __init__(self, code: str, message: str, console_tail: str = "") -> None:
        super().__init__(code, message)
        self.console_tail = console_tail


class InternalError(SchedlabError):
    """A schedlab bug, reported instead of a panic, or a missing native module (SL900)."""


class TraceError(SchedlabError):
    """A trace given to ``schedlab import`` is malformed or lacks the events
    the import needs (SL130); the message names them and how to record them."""
