"""python -m capbench.commands.report build RUN | compare [A B] | history | baseline [RUN] [--tag TAG] (make report,
compare, history, baseline): report/'s command with each run's own report section, which its kind declares, and
the build an accepted baseline stands for in a duet gate (the kinds and the duet are layers above report/)."""
from __future__ import annotations

import sys
from pathlib import Path

from capbench.duet.baseline import accepted_build
from capbench.kinds import KINDS
from capbench.report.__main__ import main
from capbench.report.sections import ReportSection
from capbench.rundata.layout import RunPaths
from capbench.rundata.run import RunRecord


def section_of(folder: Path) -> ReportSection | None:
    """The report section of the kind the run in the folder was."""
    kind = KINDS.get(RunRecord.read(RunPaths(folder).run_json).kind)
    return kind.section if kind else None


def run(argv: list[str]) -> int:
    return main(argv, section_of, accepted_build)


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
