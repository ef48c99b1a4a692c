"""The warm-up until steady, on a simulated target: windows until two in a row agree, at most MAX_WINDOWS, each
recorded; the run's warm-up rate from the history of the same workload."""
from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

from load import warmup
from rundata import jsonl


@dataclass
class FakeBench:
    """measure() answers each window with the next mean service time (ms) of `service`."""
    service: list[float | None]
    settings: SimpleNamespace = field(default_factory=lambda: SimpleNamespace(warmup_s=5, start_rate=50.0,
                                                                               variant="v1", level=13))
    driver: SimpleNamespace = field(default_factory=lambda: SimpleNamespace(min_step_s=1))
    label: str = "node1"
    warmups: list = field(default_factory=list)
    measured: list = field(default_factory=list)

    def measure(self, target, repeat, rate, phase, duration_s=None):
        self.measured.append((target, rate, phase, duration_s))
        ms = self.service[len(self.measured) - 1]
        return SimpleNamespace(result=SimpleNamespace(mean_service_ms=ms, latency_ms={"p50": 99.0}))


def test_windows_until_two_in_a_row_agree():
    # A cold JVM: 9.0 ms per request, then 4.1 as the JIT compiles, then 2.0 and 1.9 (within 10 %): steady.
    bench = FakeBench([9.0, 4.1, 2.0, 1.9, 1.9])
    outcome = warmup.warm_up(bench, "node1", 25.0)
    assert outcome == {"label": "node1", "target": "node1", "rate_rps": 25.0, "window_s": 5, "windows": 4,
                       "service_ms": [9.0, 4.1, 2.0, 1.9], "steady": True}
    assert bench.measured == [("node1", 25.0, "warmup", 5)] * 4 and bench.warmups == [outcome]


def test_a_target_that_never_settles_stops_at_the_bound_and_says_so():
    bench = FakeBench([10.0, 5.0, 10.0, 5.0, 10.0, 5.0, 10.0, 5.0])
    outcome = warmup.warm_up(bench, "node3", 12.5)
    assert outcome["windows"] == warmup.MAX_WINDOWS and not outcome["steady"]


def test_without_a_service_time_the_p50_is_the_figure():
    bench = FakeBench([None, None])
    assert warmup.warm_up(bench, "node2", 25.0)["service_ms"] == [99.0, 99.0]


def test_the_runs_warm_rate_is_half_the_last_cluster_capacity_of_the_workload(tmp_path, monkeypatch):
    monkeypatch.setenv("RESULTS_DIR", str(tmp_path))
    settings = SimpleNamespace(start_rate=50.0, variant="v1", level=13)
    assert warmup.run_warm_rate(settings) == 150.0  # no history: START_RATE per node
    for line in ({"status": "complete", "workload": "v1 level 13", "cluster_rps": 900.0},
                 {"status": "complete", "workload": "v3 level 13", "cluster_rps": 3000.0},
                 {"status": "partial", "workload": "v1 level 13", "cluster_rps": 10.0}):
        jsonl.append(tmp_path / "history.jsonl", line)
    assert warmup.run_warm_rate(settings) == 450.0
