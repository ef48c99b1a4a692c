"""The packages import downwards only: a module may use its own package and those of lower layers, never one above
(a function-level import counts as much as one at the top)."""
from __future__ import annotations

import ast

from conftest import ROOT

# Lowest first. hosts/ may read the run records (HAProxy's logs are cut by a run's steps); metrics/ and profiling/
# read what the hosts recorded; analysis/ gives the figures their meaning, report/ draws them. Above them the
# harness: settings/ read and check what a run is asked, load/ sends the load, search/ decides the next rate,
# engine/ runs a bench with all of these, duet/ is two builds measured together, kinds/ are the benches the engine
# runs, commands/ are the ways in.
LAYERS = ("rundata", "hosts", "metrics", "profiling", "analysis", "report", "settings", "load", "search", "engine",
          "duet", "kinds", "commands")


def imported_packages(path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found & set(LAYERS)


def test_no_module_imports_from_a_layer_above_its_own():
    upward = []
    for layer, package in enumerate(LAYERS):
        for path in sorted((ROOT / package).rglob("*.py")):
            above = [p for p in imported_packages(path) if LAYERS.index(p) > layer]
            upward += [f"{path.relative_to(ROOT)} imports {p}" for p in above]
    assert not upward, "imports from a layer above: " + "; ".join(upward)


def test_every_package_has_a_layer():
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")}
    assert packages == set(LAYERS)


def test_the_installed_project_holds_every_package():
    """pyproject.toml's package list (what `pip install -e .` maps for the capbench command) is the layers'."""
    import tomllib

    found = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]["include"]
    assert {name for name in found if "." not in name and "*" not in name} == set(LAYERS)
