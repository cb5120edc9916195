"""``python -m schedlab.qemu ARGS`` is ``schedlab qemu ARGS``."""

import sys

from schedlab import cli

sys.exit(cli.main(["qemu", *sys.argv[1:]]))
