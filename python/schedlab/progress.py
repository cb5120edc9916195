"""Progress of the commands that take a while, on stderr.

On a terminal a tqdm bar (steps done, simulated time, the ETA), shown only
once the command has run for two seconds, so a quick command prints
nothing. Not on a terminal (a log, CI) one line per step. With ``--quiet``
nothing. Two shapes:

* :class:`Steps`: a command made of steps (``reproduce``'s runs,
  ``validate``'s scenarios);
* :func:`watch_run`: one long simulation (``schedlab run``), read while it
  runs from the native ``Progress`` the core publishes every few thousand
  events (engine/progress.rs; it cannot change a result).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import IO, Any, TypeVar

__all__ = ["DELAY_S", "Steps", "watch_run"]

_T = TypeVar("_T")

#: Nothing is shown for a command that ends sooner (seconds of wall time).
DELAY_S = 2.0
#: Not on a terminal, a long single run prints a line this often (seconds).
LINE_EVERY_S = 10.0


def _is_tty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _bar(total: float, desc: str, unit: str, stream: IO[str]) -> Any:
    # Imported only when a bar is shown (the CLI starts faster without it).
    from tqdm import tqdm  # type: ignore[import-untyped]

    counts = "{n:.1f}/{total:.1f} s simulated" if unit == "s sim" else "{n_fmt}/{total_fmt} " + unit + "s"
    fmt = "{desc}: {percentage:3.0f}%|{bar}| " + counts + " [{elapsed}<{remaining}{postfix}]"
    return tqdm(
        total=total, desc=desc, unit=unit, file=stream, delay=DELAY_S, leave=False, dynamic_ncols=True, bar_format=fmt
    )


class Steps:
    """Steps done out of ``total``; ``done(label, sim_s)`` after each one."""

    def __init__(self, what: str, total: int, *, quiet: bool = False, stream: IO[str] | None = None) -> None:
        self.what = what
        self.total = total
        self.quiet = quiet
        self.stream = stream if stream is not None else sys.stderr
        self.count = 0
        self.sim_s = 0.0
        self.bar = None if quiet or not _is_tty(self.stream) else _bar(total, what, "run", self.stream)

    def done(self, label: str, sim_s: float = 0.0) -> None:
        self.count += 1
        self.sim_s += sim_s
        if self.quiet:
            return
        if self.bar is not None:
            self.bar.set_postfix_str(f"{label}, {self.sim_s:.0f} s simulated", refresh=False)
            self.bar.update(1)
        else:
            print(f"  {self.what}: {label} done ({self.count}/{self.total})", file=self.stream, flush=True)

    def note(self, msg: str) -> None:
        """A line that is not a step (a derived value, a measured cost)."""
        if self.quiet:
            return
        if self.bar is not None:
            self.bar.write(f"  {msg}", file=self.stream)
        else:
            print(f"  {msg}", file=self.stream, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self) -> Steps:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def watch_run(
    call: Callable[[Any], _T], what: str, *, quiet: bool = False, stream: IO[str] | None = None, poll_s: float = 0.2
) -> _T:
    """``call(progress)`` (a native run given a ``Progress``) in a worker
    thread, showing its simulated time while the calling thread waits.

    The worker is a daemon: Ctrl-C ends the command at once (the
    simulation cannot be interrupted, and its result is not wanted)."""
    out = stream if stream is not None else sys.stderr
    if quiet:
        return call(None)
    from schedlab import native

    handle = native.load().Progress()
    result: list[_T] = []
    error: list[BaseException] = []

    def work() -> None:
        try:
            result.append(call(handle))
        except BaseException as e:  # noqa: BLE001 -- handed to the calling thread, which raises it
            error.append(e)

    t = threading.Thread(target=work, name="schedlab-run", daemon=True)
    t0 = time.monotonic()
    t.start()
    tty = _is_tty(out)
    bar = None
    last_line = t0
    try:
        while t.is_alive():
            t.join(poll_s)
            now_ns, end_ns, events = handle.read()
            if tty:
                if bar is None and end_ns:
                    bar = _bar(end_ns / 1e9, what, "s sim", out)
                if bar is not None:
                    bar.set_postfix_str(f"{events / 1e6:.1f} M events", refresh=False)
                    # update(), not refresh(): tqdm's delay is applied there.
                    bar.update(min(now_ns, end_ns) / 1e9 - bar.n)
            elif time.monotonic() - last_line >= LINE_EVERY_S and end_ns:
                last_line = time.monotonic()
                print(
                    f"  {what}: {now_ns / 1e9:.2f} of {end_ns / 1e9:.2f} s simulated, {events:,} events",
                    file=out,
                    flush=True,
                )
    finally:
        if bar is not None:
            bar.close()
    if error:
        raise error[0]
    return result[0]
