"""``python -m schedlab`` is the ``schedlab`` command."""

from schedlab.cli import main

raise SystemExit(main())
