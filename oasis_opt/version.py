"""The package version, in one place (``oasis_opt.__version__``, ``oasis-opt --version``, the
optimum cache key)."""

__version__ = "0.1.0"
