"""Where schedlab's own files are: everything the package needs at run time
ships inside it (``schedlab/data/scenarios``, ``schedlab/data/validation``), so a
wheel installed anywhere works. The source checkout is looked for in one
place only, :func:`checkout`, and only by developer conveniences (the static
runner in ``target/``, the QEMU oracle in ``.oracle/``, regenerating docs).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["PACKAGE", "SCENARIOS", "VALIDATION", "checkout"]

#: The installed package directory (``.../schedlab``).
PACKAGE = Path(__file__).resolve().parent
#: The bundled scenarios (the checkout's ``scenarios/`` links here).
SCENARIOS = PACKAGE / "data" / "scenarios"
#: The validation suite, its scenarios and the kept guest reports
#: (the checkout's ``validation/`` links here).
VALIDATION = PACKAGE / "data" / "validation"


def checkout() -> Path | None:
    """The source checkout this package runs from (an editable install), or
    None for an installed wheel: the directory holding ``Cargo.toml`` and
    ``python/schedlab``."""
    root = PACKAGE.parent.parent
    if PACKAGE.parent.name == "python" and (root / "Cargo.toml").is_file():
        return root
    return None
