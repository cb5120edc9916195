"""The kernels the QEMU oracle can boot (``make oracle-setup`` fetches them).

A module of its own so that ``schedlab``'s argument parser can offer them as
choices without importing the oracle (``schedlab.qemu``) on every command.
"""

from __future__ import annotations

ORACLE_KERNELS = {
    "6.1": "bookworm linux-image-amd64 (CFS)",
    "6.12": "bookworm-backports linux-image-amd64 (EEVDF)",
    "6.18": "trixie-backports linux-image-6.18 (EEVDF, PREEMPT_LAZY)",
}

#: What an oracle kernel's build differs in from the suite's scenario files
#: (which say Debian 6.1's and 6.12's CONFIG_PREEMPT_VOLUNTARY): the
#: simulator takes these for that kernel, as ``--set`` literals. Debian's
#: 6.18 is built with CONFIG_PREEMPT_LAZY (PREEMPT_DYNAMIC, boot default
#: lazy; its boot/config in the package).
ORACLE_SIM_SETS: dict[str, tuple[tuple[str, str], ...]] = {
    "6.18": (("kernel.preempt", '"lazy"'),),
}
