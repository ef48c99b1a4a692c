"""What a node's recording says, read on the harness's machine: the tables (JfrSummary.java, by the JDK's source
launcher), the flame graphs (async-profiler's converter: self-contained HTML pages) and the heap's holders (the
text of GC.class_histogram)."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from capbench.profiling.names import PLATFORM, SERVER
from capbench.rundata.layout import ROOT

SUMMARY_SOURCE = Path(__file__).resolve().parent / "JfrSummary.java"
# The Makefile fetches it (JFR_CONVERTER); its version is pinned there.
CONVERTER = ROOT / ".capbench" / "tools" / "jfr-converter" / "jfr-converter.jar"
TOP = 20  # rows of each table
# The graphs drawn from a recording by the converter: its file's suffix → the converter's options (and --dot: class
# names as the tables write them). The CPU graph is drawn from the stacks JfrSummary.java counted instead: given
# the recording, the converter's --cpu keeps only a thread state the JDK's own recorder does not write (an empty
# graph), and unfiltered it draws the JDK's native-method samples too (threads inside native code: the poller's
# EPoll.wait, the acceptor's accept; 617 of 825 samples in a 10-s step of v1), waits the tables leave out.
FLAME_GRAPHS = {"alloc": ["--alloc", "--total"], "lock": ["--lock", "--total"]}
PRIMITIVES = {"Z": "boolean", "B": "byte", "C": "char", "S": "short", "I": "int", "J": "long", "F": "float",
              "D": "double"}  # an array's element in the JVM's names
HISTOGRAM_ROW = re.compile(r"^\s*\d+:\s+(?P<instances>\d+)\s+(?P<bytes>\d+)\s+(?P<cls>\S+)")


class ProfileError(RuntimeError):
    """A recording could not be read, or a tool it needs is missing."""


def _java() -> str:
    java = shutil.which("java")
    if java is None:
        raise ProfileError("no java on PATH: the profile's tables and graphs need a JDK 17 (make setup's own)")
    return java


def _ms(epoch_s: float) -> str:
    return str(round(epoch_s * 1000))


def summarize(recording: Path, window: tuple[float, float], cpu_stacks: Path, top: int = TOP) -> dict:
    """The recording's tables (capbench/profiling/JfrSummary.java says which) over the window (epoch seconds, from, to);
    its CPU samples' stacks written to cpu_stacks (the collapsed format: the CPU flame graph's)."""
    done = subprocess.run([_java(), str(SUMMARY_SOURCE), str(recording), str(top), *map(_ms, window),
                           ",".join(PLATFORM), ",".join(SERVER), str(cpu_stacks)],
                          capture_output=True, timeout=300, check=False)
    if done.returncode != 0:
        raise ProfileError(f"{recording.name}: {done.stderr.decode(errors='replace').strip()[-500:]}")
    return json.loads(done.stdout)


def flame_graphs(recording: Path, window: tuple[float, float], cpu_stacks: Path | None,
                 page_of: Callable[[str], Path], title: str) -> dict[str, str]:
    """The recording's flame graphs over the window (epoch seconds) as self-contained pages, each where
    page_of(kind) says (kind → file name): CPU from the stacks summarize() wrote to cpu_stacks (None: no CPU
    graph, another sampler's is drawn), allocation and locks from the recording."""
    if not CONVERTER.is_file():
        raise ProfileError(f"{CONVERTER} is missing: make setup fetches it")
    drawn = {}
    drawn_from = {**({"cpu": [str(cpu_stacks)]} if cpu_stacks else {}),
                  **{kind: [*options, "--dot", "--from", _ms(window[0]), "--to", _ms(window[1]), str(recording)]
                     for kind, options in FLAME_GRAPHS.items()}}
    for kind, arguments in drawn_from.items():
        page = page_of(kind)
        page.parent.mkdir(parents=True, exist_ok=True)
        done = subprocess.run([_java(), "-jar", str(CONVERTER), "--title", f"{title}: {kind}", *arguments, str(page)],
                              capture_output=True, timeout=300, check=False)
        if done.returncode != 0 or not page.is_file():
            raise ProfileError(f"{recording.name}: the {kind} flame graph: "
                               f"{done.stderr.decode(errors='replace').strip()[-500:]}")
        drawn[kind] = page.name
    return drawn


def readable(name: str) -> str:
    """An array class as Java source writes it, as JfrSummary.java's tables do ("[B": byte[])."""
    element = name.lstrip("[")
    dims = len(name) - len(element)
    if not dims:
        return name
    return (PRIMITIVES.get(element) or element[1:-1]) + "[]" * dims


def heap_holders(histogram: str, top: int = TOP, not_the_jdks: bool = False) -> list[dict]:
    """The classes holding the most bytes, from GC.class_histogram's text (already ordered by bytes); with
    not_the_jdks, the classes not the JDK's (nor arrays): the server's and the application's objects, such
    as the session manager's sessions, which the JDK's arrays and strings they hold outweigh."""
    rows = [m.groupdict() for m in map(HISTOGRAM_ROW.match, histogram.splitlines()) if m]
    held = [{"name": readable(r["cls"]), "instances": int(r["instances"]), "bytes": int(r["bytes"])} for r in rows]
    if not_the_jdks:
        held = [h for h in held if not h["name"].endswith("[]") and not h["name"].startswith(PLATFORM)]
    return held[:top]

