"""tune.json, typed: what make tune swept (capbench/commands/tune.py writes it as the sweep starts and ends) and, once the
report is made (capbench/report/tune_report.py), each setting's row and the analysis of the rows."""
from __future__ import annotations

from dataclasses import asdict, dataclass

from capbench.rundata.findings import from_json
from capbench.rundata.records import doc


@dataclass
class TuneRow:
    """One setting of the sweep, measured: from its run folder in each round."""
    label: str = doc("the setting's label")
    values: dict[str, str] = doc("the sweep's parameters as this setting sets them", default_factory=dict)
    env: dict[str, str] = doc("the cluster settings it ran with", default_factory=dict)
    baseline: bool = doc("the configured settings, measured for comparison", default=False)
    folder: str = doc("its run folder (of the round nearest its median), under points/", default="")
    status: str = doc("complete, partial, or not run", default="not run")
    capacity_rps: float | None = doc("its capacity: the median of its rounds'", default=None)
    repeats: list[float] = doc("every capacity its searches found, all rounds", default_factory=list)
    spread_pct: float | None = doc("(max - min) / median of those, %", default=None)
    figures: dict | None = doc("the node's PCP figures at its capacity (a cluster's: threads and cores summed, "
                               "CPU and GC of the busiest node), with cpu_cores, and the balancer's "
                               "HAProxy CPU in cores (lb_cpu_cores)", default=None)
    p99_ms: float | None = doc("the corrected p99 of the step at its capacity", default=None)
    round_capacities: list[float | None] = doc("its capacity in each round", default_factory=list)
    vs_baseline_pct: float | None = doc("its change against the baseline (in rounds: the median of each "
                                        "round's)", default=None)

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class TuneRecord:
    """tune.json."""
    run_id: str = doc("the tune run's id, its folder's name")
    target: str = doc("node1 or cluster")
    parameters: list[str] = doc("the names the sweep varies")
    points: list[dict] = doc("each setting: label, values, env, baseline")
    settings: dict = doc("the bench settings every point ran with")
    sweep_hash: str = doc("the sweep and settings' hash: a run of the same sweep resumes this one", default="")
    source: str = doc("where the sweep came from (SWEEP_FILE or the make line)", default="")
    rounds: int = doc("how many rounds", default=1)
    orders: list[list[int]] = doc("each round's order of the points, drawn at random", default_factory=list)
    driver: str = doc("the load generator", default="")
    profile: str = doc("the cluster's profile", default="")
    figures_of: str = doc("whose figures a row gives", default="")
    status: str = doc("running, complete or partial", default="running")
    rows: list[TuneRow] = doc("each setting measured (capbench/report/tune_report.py)", default_factory=list)
    analysis: dict = doc("the best setting, its margin and band, the verdict and the recommendation "
                         "(capbench/report/tune_report.py, analyse)", default_factory=dict)
    round_table: list[dict] = doc("each round's capacity by label", default_factory=list)

    @classmethod
    def from_json(cls, data: dict) -> TuneRecord:
        return from_json(cls, data)

    def to_json(self) -> dict:
        return asdict(self)
