"""The bench kinds, one module each (load/kinds/base.py says what a kind is). `make bench-<name>` runs the kind of
that name; a new kind is its module plus one line below. `python -m load.kinds` lists them for make help."""
from __future__ import annotations

import importlib

from load.kinds.base import Kind

MODULES = (
    "load.kinds.single",
    "load.kinds.cluster",
    "load.kinds.selfcheck",
    "load.kinds.overhead",
    "load.kinds.usl",
    "load.kinds.variants",
    "load.kinds.failover",
    "load.kinds.stress",
    "load.kinds.scaleout",
    "load.kinds.sessions",
)


def _table(modules: tuple[str, ...]) -> dict[str, Kind]:
    """Each module's KIND by its name; two kinds of one name are refused (one would silently hide the other)."""
    table: dict[str, Kind] = {}
    for module in modules:
        kind = importlib.import_module(module).KIND
        if not kind.name or kind.name in table:
            raise ValueError(f"{module}: bench kind name '{kind.name}' is empty or already taken")
        table[kind.name] = kind
    return table


KINDS = _table(MODULES)
