"""The kernels the QEMU oracle can boot (``make oracle-setup`` fetches them).

A module of its own so that ``schedlab``'s argument parser can offer them as
choices without importing the oracle (``schedlab.qemu``) on every command.
"""

from __future__ import annotations

ORACLE_KERNELS = {
    "6.1": "bookworm linux-image-amd64 (CFS)",
    "6.12": "bookworm-backports linux-image-amd64 (EEVDF)",
}
