"""The package version, in one place (``oasis_opt.__version__``, ``oasis-opt --version``, the
optimum cache key).

It changes whenever an exact answer may change, since the optimum cache
(``oasis_opt/optcache.py``) keys by it and would go on serving the old one: 0.1.1 fixed
optima proven wrong on extreme numbers (the patterns' fit test, r25834; no second opinion
on a proof without presolve, r18551 and r46354; docs/offline.md)."""

__version__ = "0.1.1"
