"""``python -m schedlab.qemu ARGS`` is ``schedlab qemu ARGS``."""

import sys

from schedlab.qemu import main

sys.exit(main())
