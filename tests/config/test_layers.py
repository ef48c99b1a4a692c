"""capbench's packages import downwards only: a module may use its own package and those of lower layers, never
one above (a function-level import counts as much as one at the top). capbench/checkout.py, below them all,
knows where the checkout is."""
from __future__ import annotations

import ast

from conftest import ROOT

PACKAGE = ROOT / "capbench"
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
            found.update(layer_of(alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(layer_of(node.module))
    return found & set(LAYERS)


def layer_of(module: str) -> str:
    """capbench.hosts.topology's layer is hosts; a name outside capbench has none."""
    parts = module.split(".")
    return parts[1] if parts[0] == "capbench" and len(parts) > 1 else ""


def test_no_module_imports_from_a_layer_above_its_own():
    upward = []
    for layer, package in enumerate(LAYERS):
        for path in sorted((PACKAGE / package).rglob("*.py")):
            above = [p for p in imported_packages(path) if LAYERS.index(p) > layer]
            upward += [f"{path.relative_to(ROOT)} imports {p}" for p in above]
    assert not upward, "imports from a layer above: " + "; ".join(upward)


def test_every_package_has_a_layer():
    packages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert packages == set(LAYERS)


def test_the_checkout_module_imports_nothing_of_the_harness():
    """It is imported first by every layer, and by make before the venv exists."""
    assert imported_packages(PACKAGE / "checkout.py") == set()
    assert not [node for node in ast.walk(ast.parse((PACKAGE / "__init__.py").read_text()))
                if isinstance(node, ast.Import | ast.ImportFrom)]


def test_no_python_package_outside_capbench():
    """The root holds what the hosts run; every Python package of ours is under capbench/."""
    outside = sorted(str(p.parent.relative_to(ROOT)) for p in ROOT.glob("*/**/__init__.py")
                     if p.parts[len(ROOT.parts)] not in ("capbench", "tests", ".venv", ".capbench", "results", ".git"))
    assert not outside


def test_the_installed_project_is_the_capbench_package():
    """pyproject.toml installs capbench and its subpackages, nothing beside them."""
    import tomllib

    found = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]["include"]
    assert found == ["capbench", "capbench.*"]
