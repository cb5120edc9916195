"""Open a page in Debian's headless Chromium and report what its console
said: the DevTools protocol over ``--remote-debugging-pipe`` (JSON messages
separated by NUL on fds 3 and 4), with nothing but the standard library.

    errors, png = open_page(Path("index.html"))

``errors`` lists every console error (``console.error``/``assert``), every
uncaught exception and every browser log entry of level error (a resource
that failed to load, a blocked request); ``png`` is a full-page screenshot.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

__all__ = ["chromium", "open_page"]

CANDIDATES = ("chromium-headless-shell", "chromium", "chromium-browser")


def chromium() -> str | None:
    for c in CANDIDATES:
        p = shutil.which(c)
        if p:
            return p
    return None


class _Pipe:
    def __init__(self, exe: str) -> None:
        cmd_r, cmd_w = os.pipe()  # we write commands; the browser reads fd 3
        ev_r, ev_w = os.pipe()  # the browser writes fd 4; we read

        def fds() -> None:
            os.dup2(cmd_r, 3)
            os.dup2(ev_w, 4)

        args = [
            exe, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
            "--no-first-run", "--hide-scrollbars", "--window-size=1200,900", "about:blank",
        ]  # fmt: skip
        self.proc = subprocess.Popen(
            # Kept open past the fork: fds 3 and 4 as the browser reads them.
            args,
            preexec_fn=fds,
            pass_fds=(3, 4),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(cmd_r)
        os.close(ev_w)
        self.w = os.fdopen(cmd_w, "wb")
        self.r = ev_r
        self.buf = b""
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self.buf:
            if time.monotonic() > deadline:
                raise TimeoutError("chromium: no answer")
            chunk = os.read(self.r, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium: the pipe closed")
            self.buf += chunk
        msg, _, self.buf = self.buf.partition(b"\0")
        return dict(json.loads(msg))

    def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        self.next_id += 1
        msg: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        self.w.write(json.dumps(msg).encode() + b"\0")
        self.w.flush()
        deadline = time.monotonic() + 30
        while True:
            m = self._read(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError(f"chromium: {method}: {m['error']}")
                return dict(m.get("result") or {})
            self.events.append(m)

    def wait_event(self, method: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == method for e in self.events):
            self.events.append(self._read(deadline))

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, TimeoutError, OSError):
            self.call("Browser.close")
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.w.close()
        os.close(self.r)


def open_page(page: Path, exe: str | None = None) -> tuple[list[str], bytes]:
    """Load ``page``; (the console's errors, a full-page PNG screenshot)."""
    exe = exe or chromium()
    if exe is None:
        raise FileNotFoundError("no chromium on PATH (" + ", ".join(CANDIDATES) + ")")
    cdp = _Pipe(exe)
    try:
        target = cdp.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = cdp.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Page"):
            cdp.call(f"{domain}.enable", session=session)
        cdp.call("Page.navigate", {"url": page.resolve().as_uri()}, session=session)
        cdp.wait_event("Page.loadEventFired")
        # Resource errors are logged just after load: a round trip lets them in.
        cdp.call("Runtime.evaluate", {"expression": "document.readyState"}, session=session)
        shot = cdp.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}, session=session)[
            "data"
        ]
        errors: list[str] = []
        for e in cdp.events:
            m, p = e.get("method"), e.get("params") or {}
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                errors.append("console." + str(p.get("type")) + ": " + " ".join(str(a.get("value")) for a in p["args"]))
            elif m == "Runtime.exceptionThrown":
                errors.append("exception: " + str((p.get("exceptionDetails") or {}).get("text")))
            elif m == "Log.entryAdded" and (p.get("entry") or {}).get("level") == "error":
                errors.append("log: " + str(p["entry"].get("text")) + " " + str(p["entry"].get("url") or ""))
        return errors, base64.b64decode(shot)
    finally:
        cdp.close()
