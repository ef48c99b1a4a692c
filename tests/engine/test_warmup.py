"""The warm-up until steady, on a simulated target: windows until two in a row agree, at most MAX_WINDOWS, each
recorded; the run's warm-up rate from the history of the same workload."""
from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

from capbench.engine import warmup
from capbench.rundata import jsonl
from capbench.settings.bench import load_settings


@dataclass
class FakeBench:
    """measure() answers each window with the next mean service time (ms) of `service`."""
    service: list[float | None]
    settings: SimpleNamespace = field(default_factory=lambda: SimpleNamespace(warmup_s=5, start_rate=50.0,
                                                                               variant="v1", level=13))
    driver: SimpleNamespace = field(default_factory=lambda: SimpleNamespace(min_step_s=1))
    warmups: list = field(default_factory=list)
    measured: list = field(default_factory=list)

    def measure(self, target, repeat, rate, phase, label=None, duration_s=None):
        self.measured.append((target, rate, phase, duration_s))
        ms = self.service[len(self.measured) - 1]
        return SimpleNamespace(result=SimpleNamespace(mean_service_ms=ms, latency_ms={"p50": 99.0}))


def test_windows_until_two_in_a_row_agree():
    # A cold JVM: 19 ms per request, then 9.0 and 4.1 as the JIT compiles, then 3.0 and 2.6 (within 1 ms): steady.
    bench = FakeBench([19.0, 9.0, 4.1, 3.0, 2.6, 2.6])
    outcome = warmup.warm_up(bench, "node1", 25.0, "node1")
    assert outcome == {"label": "node1", "target": "node1", "rate_rps": 25.0, "window_s": 5, "windows": 5,
                       "service_ms": [19.0, 9.0, 4.1, 3.0, 2.6], "steady": True}
    assert bench.measured == [("node1", 25.0, "warmup", 5)] * 5 and bench.warmups == [outcome]


def test_agreement_is_relative_or_within_a_millisecond():
    assert warmup.agree(20.0, 16.5) and not warmup.agree(20.0, 15.0)  # 17.5 % and 25 %
    assert warmup.agree(2.3, 3.2) and not warmup.agree(2.0, 3.1)  # 0.9 ms and 1.1 ms apart
    assert not warmup.agree(None, 2.0)


def test_a_target_that_never_settles_stops_at_the_bound_and_says_so():
    bench = FakeBench([10.0, 5.0, 10.0, 5.0, 10.0, 5.0, 10.0, 5.0])
    outcome = warmup.warm_up(bench, "node3", 12.5, "node3")
    assert outcome["windows"] == warmup.MAX_WINDOWS and not outcome["steady"]


def test_without_a_service_time_the_p50_is_the_figure():
    bench = FakeBench([None, None])
    assert warmup.warm_up(bench, "node2", 25.0, "node2")["service_ms"] == [99.0, 99.0]


def test_the_runs_warm_rate_is_half_the_last_cluster_capacity_of_the_workload(tmp_path, monkeypatch):
    monkeypatch.setenv("RESULTS_DIR", str(tmp_path))
    settings = load_settings({"START_RATE": "50", "VARIANT": "v1", "LEVEL": "13"})
    assert warmup.run_warm_rate(settings) == 150.0  # no history: START_RATE per node
    for line in ({"status": "complete", "workload": "v1 level 13", "capacities": {"cluster": 900.0, "node1": 300.0}},
                 {"status": "complete", "workload": "v3 level 13", "capacities": {"cluster": 3000.0}},
                 {"status": "partial", "workload": "v1 level 13", "capacities": {"cluster": 10.0}}):
        jsonl.append(tmp_path / "history.jsonl", line)
    assert warmup.run_warm_rate(settings) == 450.0
    assert warmup.expected_rps(settings, "node1") == 300.0 and warmup.expected_rps(settings, "node2") is None


def test_a_single_window_is_not_judged():
    bench = FakeBench([9.0])
    outcome = warmup.warm_up(bench, "node1", 25.0, "node1", max_windows=1)
    assert outcome["windows"] == 1 and outcome["steady"] is None and len(bench.measured) == 1
