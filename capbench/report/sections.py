"""A bench kind's part of report.html, and what it is read from. report.html (template.html) holds what every
kind shares; a kind declares its own part as a ReportSection (kinds/<kind>.py, Kind.shows.section): its Jinja2
fragment, the fragment's values and its figures, all from the run's typed records (RunResults)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from capbench.rundata import jsonl
from capbench.rundata.layout import RunPaths
from capbench.rundata.records import StepRecord
from capbench.rundata.run import RunRecord, node_cpus, nodes_of
from capbench.rundata.summary import F, Summary

# A figure of the report: its title and the PNG made under figures/.
Figure = tuple[str, Path]


@dataclass(frozen=True)
class RunResults:
    """One run's results folder, read: run.json, summary.json and steps.jsonl as their types."""
    folder: Path
    run: RunRecord
    summary: Summary
    steps: list[StepRecord]

    @property
    def paths(self) -> RunPaths:
        return RunPaths(self.folder)

    @property
    def nodes(self) -> tuple[str, ...]:
        return nodes_of(self.run)

    @property
    def cpus(self) -> dict[str, float]:
        """Each node's CPU quota, or its JVM's processors without one."""
        return node_cpus(self.run)

    def findings(self, cls: type[F]) -> F:
        """The kind's findings record (kinds/<kind>.py) as summary.json carries it."""
        return self.summary.findings(cls)

    def analysis(self, name: str) -> dict | None:
        """A kind's whole analysis beside the summary (failover.json, stress.json), or None."""
        return jsonl.read_json(self.paths.analysis(name))


def _no_values(results: RunResults) -> dict:
    return {}


def _no_figures(results: RunResults) -> list[Figure]:
    return []


def fragment_beside(module_file: str) -> Path:
    """A module's part of report.html: the Jinja2 fragment beside it, named as it is (kinds/scaleout.html)."""
    return Path(module_file).with_suffix(".html")


@dataclass(frozen=True)
class ReportSection:
    """What a kind adds to report.html. The fragment is rendered where the page includes it (after the
    capacities), with the page's values (run, summary, noise_pct, caveat, ...) and values()'s."""
    fragments: tuple[Path, ...] = ()  # its Jinja2 fragments, files beside the kind's module, rendered in order
    values: Callable[[RunResults], dict] = field(default=_no_values)
    figures: Callable[[RunResults], list[Figure]] = field(default=_no_figures)  # each made at results.paths.figure()
    # A capacity summary figure per search label; bench-overhead's paired searches are measured for their ratio.
    capacity_figures: bool = True
    # The shared USL section's input: what N counts, the (N, X) points {"n", "throughput_rps"} and the fit the
    # run made (UslFit.as_dict, or its error), or None for the report to fit the points; None: no points.
    usl: Callable[[Summary], tuple[str, list[dict], dict | None] | None] | None = None

    def template(self) -> str:
        """Its fragments' text, read when a report is made."""
        return "".join(path.read_text() for path in self.fragments)
