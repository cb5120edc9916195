"""schedlab's version: one line that every module reads (not the package
``__init__``, which imports the modules that read it)."""

__version__ = "0.1.0"
