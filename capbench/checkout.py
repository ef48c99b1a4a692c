"""Where the checkout is: the folder that holds what the hosts run (cluster/, tomcat-conf/, haproxy/, webapp/,
load/, metrics/, compose.yaml) and what a run leaves (results/, .capbench/). The one module that knows; every
path of the project is asked of ROOT.

The harness runs from a checkout whichever way it was installed: from its own source tree (make setup's editable
install, `python3 -m capbench.hosts`), the package's parent is the checkout; installed as a wheel (`pip install
.`), the package is in site-packages, and the checkout is CAPBENCH_HOME, else the working folder or the nearest
folder above it that is one (as git finds its repository). Standard library only: make runs it before the venv
exists."""
from __future__ import annotations

import os
from pathlib import Path

# What makes a folder a capbench checkout: the files every command reads.
MARKERS = ("compose.yaml", "cluster/topology.env", "tomcat-conf/tunables.env")
SOURCE_TREE = Path(__file__).resolve().parent.parent


def is_checkout(folder: Path) -> bool:
    return all((folder / marker).is_file() for marker in MARKERS)


def find(home: str | None = None, cwd: Path | None = None) -> Path | None:
    """The checkout: CAPBENCH_HOME (home) when given, else the source tree this package runs from, else the working
    folder or the nearest one above it; None when none of them is one."""
    if home:
        return Path(home).resolve() if is_checkout(Path(home)) else None
    if is_checkout(SOURCE_TREE):
        return SOURCE_TREE
    here = (cwd or Path.cwd()).resolve()
    return next((folder for folder in (here, *here.parents) if is_checkout(folder)), None)


def problem(home: str | None = None) -> str | None:
    """Why no checkout is found, in one line (None when one is)."""
    if find(home) is not None:
        return None
    if home:
        return (f"CAPBENCH_HOME='{home}' is not a capbench checkout (it lacks {', '.join(MARKERS)}): give the folder "
                "of a clone of the project")
    return ("no capbench checkout here: run capbench inside a clone of the project (the folder with compose.yaml and "
            "cluster/), or set CAPBENCH_HOME to one")


# Found once, where the package is first imported; a command that needs the checkout refuses with problem()'s line
# before anything starts (capbench/commands/cli.py), so this falls back to the source tree instead of failing an
# import (`capbench --help` answers anywhere).
ROOT = find(os.environ.get("CAPBENCH_HOME")) or SOURCE_TREE
