"""The bench kinds, one module each (capbench/engine/kind.py says what a kind is). `make bench-<name>` runs the kind of
that name; a new kind is its module (its settings and report section included) plus one line below.
`python -m capbench.kinds` lists them for make help."""
from __future__ import annotations

import importlib

from capbench.engine.kind import Kind
from capbench.settings.bench import BenchSettings, load_settings

MODULES = (
    "capbench.kinds.single",
    "capbench.kinds.cluster",
    "capbench.kinds.selfcheck",
    "capbench.kinds.overhead",
    "capbench.kinds.usl",
    "capbench.kinds.variants",
    "capbench.kinds.failover",
    "capbench.kinds.stress",
    "capbench.kinds.scaleout",
    "capbench.kinds.sessions",
    "capbench.kinds.duet",
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
# Each kind's own settings class, by its name: every run reads and checks all of them (capbench/settings/bench.py).
OWN_SETTINGS = {name: kind.own_settings for name, kind in KINDS.items() if kind.own_settings is not None}


def read_settings(environ: dict[str, str] | None = None) -> BenchSettings:
    """The shared settings and every kind's own, checked (capbench/settings/bench.py: load_settings)."""
    return load_settings(environ, OWN_SETTINGS)
