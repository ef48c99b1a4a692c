"""What a bench kind is: `make bench-<name>` runs its run() inside the runner (capbench/engine/runner.py), which owns the
rest (settings, monitoring, the partial marker, the summary's common part, restoring the cluster, exit codes).
A kind sets the class attributes that differ from these defaults (what it needs of the runner: a Needs) and
overrides run(). What it finds beyond its capacities is a record of its own type (`findings`, a rundata.findings.Findings dataclass): the runner makes it
empty before run() and hands it in, so a run that breaks off keeps what it had found; summarize() completes it
from the capacities, the runner writes it under the kind's name in summary.json however the run ended, and
its Showing (console(), history() and `section`, its part of report.html) reads it back as that type."""
from __future__ import annotations

from dataclasses import dataclass

from capbench.engine.console import print_capacities
from capbench.report.sections import ReportSection
from capbench.rundata import jsonl
from capbench.rundata.findings import Findings
from capbench.settings.bench import BenchSettings

# A kind's own ending (status, error, exit code), e.g. the self-check's verdict; run() returning None: complete.
Outcome = tuple[str, "str | None", int]


@dataclass(frozen=True)
class Needs:
    """What a kind needs of the runner around its run(), declared in one place; the defaults are most kinds'."""
    restores_rotation: bool = True  # every node back in rotation at the end (the self-check never changes it)
    logs_whole_run: bool = True  # with MONITOR=on PCP logs the whole run (bench-overhead switches it itself)
    always_monitored: bool = False  # monitoring is set up even with MONITOR=off (bench-overhead)
    flags_disturbances: bool = True  # steps that ran while a node was DOWN are flagged (not when that is the point)
    closed_loop: bool = False  # its steps are closed loops, which wrk2 cannot run
    takes_scenario_file: bool = False  # a SCENARIO_FILE's requests may take the place of its WORKLOAD's
    users: bool = True  # its requests are the scenario's (the user dataset goes to the load host), not a fixed URL
    reports: bool = True  # tables, a history line and report.html at the end
    profiles_by_default: bool = False  # JFR=auto profiles at each capacity it finds
    gated: bool = False  # make gate may measure a build with it: its targets' capacities are searched, with repeats


class Showing:
    """How a kind shows what it found, apart from how it measures it: its tables in the console at the end, its
    part of report.html and its figures in the run's history line. A kind that shows more than its capacities
    declares a Showing of its own (Kind.shows)."""
    section: ReportSection | None = None  # its own part of report.html (None: the shared page alone)

    def console(self, summary: dict, found) -> None:
        """Prints the kind's tables at the end, before the host figures: by default the capacities' table."""
        print_capacities(summary)

    def history(self, found) -> dict:
        """Its figures for the run's line in results/history.jsonl (HistoryLine's fields by name): none by
        default, the capacities are in the line already."""
        return {}


class Kind:
    """What a kind measures and how: its targets, its plan (for the ETA), its settings, its findings and its
    run(); how it shows them is its Showing (`shows`)."""
    name = ""
    description = ""  # one line: make help, --help
    targets: tuple[str, ...] = ()  # what it measures, recorded in run.json
    needs = Needs()
    workload: str | None = None  # the one WORKLOAD it runs (None: any), and what it compares, for the refusal
    compares = ""
    shows = Showing()
    # Its own settings: a frozen dataclass of capbench/settings/fields.setting() fields (and a problems() method for
    # rules between them), read and checked with the shared ones; None: it has none.
    own_settings: type | None = None
    # What it finds beyond its capacities, written under its name in summary.json; None: nothing.
    findings: type[Findings] | None = None

    @classmethod
    def own(cls, settings: BenchSettings):
        """Its own settings, as the run read them."""
        return settings.kinds[cls.name]

    def planned_searches(self, settings: BenchSettings) -> int:
        """How many capacity searches a run makes (for the ETA)."""
        return len(self.targets) * settings.repeats

    def steps_per_search(self, settings: BenchSettings) -> int | None:
        """For the ETA, when the kind knows better than a guess."""
        return None

    def after_searches(self, settings: BenchSettings) -> tuple[str, int, float]:
        """For the ETA: the phase of the steps the kind measures after its searches, how many, and the seconds
        planned for them (none by default)."""
        return "", 0, 0.0

    def refusal(self, settings: BenchSettings) -> str:
        """'' when the cluster, once up, can do what the settings ask; else why not, in one line (refused with
        exit status 2 before the run begins). For what only the running cluster can tell."""
        return ""

    def run(self, bench, found) -> Outcome | None:
        """Measures, filling in `found` (its findings record, None without one) as it goes."""
        raise NotImplementedError(f"bench kind '{self.name}' has no run()")

    def summarize(self, bench, summary: dict, found) -> None:
        """Completes `found` from the common part of summary.json (its capacities), which is in by now."""

    def found_in(self, summary: dict):
        """Its findings record read back from summary.json as written (None for a kind without one)."""
        return self.findings.in_summary(summary) if self.findings is not None else None


class KindSettings:
    """What a kind's settings class inherits: no rule between its values unless it says one."""

    def problems(self) -> list[str]:
        return []


def keep_analysis(bench, found, analysis: dict, series: tuple[str, ...]) -> None:
    """A kind's whole analysis in analysis/<kind>.json, and in its findings without its per-second series (they
    would swamp summary.json; the report reads them from the file)."""
    jsonl.write_json(bench.paths.analysis(found.kind), analysis)
    found.update({k: v for k, v in analysis.items() if k not in series})
