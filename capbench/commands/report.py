"""python -m capbench.commands.report build RUN | compare [A B] | history | baseline [RUN] [--tag TAG] (make report,
compare, history, baseline): report/'s command with each run's own report section, which its kind declares, and
the build an accepted baseline stands for in a duet gate (the kinds and the duet are layers above report/)."""
from __future__ import annotations

import sys
from pathlib import Path

from capbench.duet.baseline import accepted_build
from capbench.hosts import topology
from capbench.kinds import KINDS
from capbench.report.__main__ import main
from capbench.report.sections import ReportSection
from capbench.rundata.layout import RunPaths
from capbench.rundata.run import RunRecord, nodes_of


def run_topology(run: RunRecord) -> topology.Topology:
    """The hosts the run had, as its run.json recorded them (not today's NODES and LOAD_HOSTS)."""
    return topology.Topology(nodes_of(run), tuple(run.load_hosts or ()) or ("load",))


def section_of(folder: Path) -> ReportSection | None:
    """The report section of the kind the run in the folder was, which reads that run's hosts."""
    run = RunRecord.read(RunPaths(folder).run_json)
    topology.adopt(run_topology(run))
    kind = KINDS.get(run.kind)
    return kind.shows.section if kind else None


def run(argv: list[str]) -> int:
    return main(argv, section_of, accepted_build)


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
