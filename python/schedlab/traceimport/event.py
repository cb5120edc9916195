"""One scheduler event of a captured trace, as every reader gives it."""

from __future__ import annotations

from typing import Any, NamedTuple

from schedlab import native

__all__ = ["KEPT", "Event"]

#: Events the replay reads (the core's list, trace/textread.rs); everything
#: else in a trace is skipped.
KEPT = frozenset(native.load().TRACE_EVENTS_KEPT)


class Event(NamedTuple):
    """One tracepoint hit: ``ts`` in ns from the trace's clock, the CPU and
    the task (pid, comm) in whose context it ran, the ftrace flags column if
    the trace has one, and the event's own fields. (A tuple: a trace of a
    million events is held in memory.)"""

    ts: int
    cpu: int
    pid: int
    comm: str
    flags: str | None
    name: str
    f: dict[str, Any]
