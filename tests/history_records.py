"""The history's hashes and lines from run.json and summary.json as the tests write them (dicts), read back as
a run reads them (RunRecord, Summary)."""
from __future__ import annotations

from capbench.analysis import history
from capbench.kinds import KINDS
from capbench.rundata.history import HistoryLine
from capbench.rundata.run import RunRecord
from capbench.rundata.summary import Summary


def config_hash(run: dict) -> str:
    return history.config_hash(RunRecord.from_json(run))


def bench_hash(run: dict) -> str:
    return history.bench_hash(RunRecord.from_json(run))


def build_of(run: dict) -> dict[str, str]:
    return history.build_of(RunRecord.from_json(run))


def history_line(run: dict, summary: dict) -> HistoryLine:
    """As the run's end writes it: with its kind's own figures (Kind.history)."""
    kind = KINDS.get(summary.get("kind", ""))
    own = kind.shows.history(kind.found_in(summary)) if kind is not None else None
    return history.history_line(RunRecord.from_json(run), Summary.from_json(summary), own)
