"""``python -m schedlab.runner ARGS``: the real-kernel runner built into the
native module, with schedlab-runner's command line and exit statuses.

The scenario's tasks run as real threads of this process (the Python
interpreter only waits in the native call), so an installed wheel runs
``schedlab real --local`` and ``schedlab calibrate`` without a separate binary
or a Rust toolchain. The QEMU oracle's guests need the static binary instead
(``make runner`` in a checkout): their initramfs has no Python.
"""

from __future__ import annotations

import sys

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    from schedlab import native

    args = sys.argv if argv is None else argv
    sys.stdout.flush()
    return int(native.load().runner_main(["schedlab-runner", *args[1:]]))


if __name__ == "__main__":
    sys.exit(main())
