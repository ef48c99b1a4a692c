"""The bench kinds, one module each (engine/kind.py says what a kind is). `make bench-<name>` runs the kind of
that name; a new kind is its module (its settings and report section included) plus one line below.
`python -m kinds` lists them for make help."""
from __future__ import annotations

import importlib

from engine.kind import Kind
from settings.bench import BenchSettings, load_settings

MODULES = (
    "kinds.single",
    "kinds.cluster",
    "kinds.selfcheck",
    "kinds.overhead",
    "kinds.usl",
    "kinds.variants",
    "kinds.failover",
    "kinds.stress",
    "kinds.scaleout",
    "kinds.sessions",
    "kinds.duet",
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
# Each kind's own settings class, by its name: every run reads and checks all of them (settings/bench.py).
OWN_SETTINGS = {name: kind.own_settings for name, kind in KINDS.items() if kind.own_settings is not None}


def read_settings(environ: dict[str, str] | None = None) -> BenchSettings:
    """The shared settings and every kind's own, checked (settings/bench.py: load_settings)."""
    return load_settings(environ, OWN_SETTINGS)
