"""The profile's pairs of steps (capbench/engine/profile_step.py's profile), their recordings' handling stood in for: which
steps are recorded, which recordings are read or discarded, and what each label's findings say, for one target
and for a duet's two builds measured at once."""
from __future__ import annotations

from types import SimpleNamespace

from capbench.engine import profile_step


def profiled(monkeypatch, nodes_of: dict[str, tuple[str, ...]], pairs: int, refusing: tuple[str, ...] = ()):
    log: list[str] = []
    steps = iter(range(1, 100))

    def started(pids, name, problems):
        problems += [(node, "not recorded: refused") for node in pids if node in refusing]
        log.append(f"start {name}")
        return {node: pid for node, pid in pids.items() if node not in refusing}

    def read(bench, node, pid, name, record, title, problems, top, sampled=None, clock=(None, None)):
        log.append(f"read {node} {name} step {record.step} ({title}, {top} rows, CPU by {sampled['by']}, "
                   f"threads {' to '.join(clock)})")
        return {"tables": {"cpu_samples": 10}}

    readings = iter("abcdefgh")

    def thread_times(pids, problems):
        if pids:
            log.append(f"threads of {' '.join(pids)}")
        return {node: next(readings) for node in pids}

    def sampling(bench, pids, problems):
        log.append("sample " + " ".join(pids))
        return {node: {"by": "async-profiler"} for node in pids}

    def sampled(sampling, pids, name, title, problems):
        if sampling:
            log.append(f"samples of {' '.join(sampling)} at {title}")
        return sampling

    monkeypatch.setattr(profile_step, "_primed", lambda nodes, problems: {node: f"pid-{node}" for node in nodes})
    monkeypatch.setattr(profile_step, "_started", started)
    monkeypatch.setattr(profile_step, "_discarded", lambda node, pid, name, problems: log.append(f"discard {node} {name}"))
    monkeypatch.setattr(profile_step, "_read_node", read)
    monkeypatch.setattr(profile_step, "_sampling", sampling)
    monkeypatch.setattr(profile_step, "_sampled", sampled)
    monkeypatch.setattr(profile_step, "_thread_times", thread_times)
    monkeypatch.setattr(profile_step.time, "sleep", lambda s: None)

    def measure(phase: str) -> dict:
        log.append(f"measure {phase}")
        achieved = 480.0 if phase == "profiled" else 500.0
        return {label: SimpleNamespace(step=next(steps), passed=True, result=SimpleNamespace(
            achieved_rps=achieved, responses=int(achieved * 10), errors={"status": 3, "timeout": 2},
            latency_ms={"p99": 40.0})) for label in nodes_of}

    bench = SimpleNamespace(settings=SimpleNamespace(jfr=SimpleNamespace(pairs=pairs, seconds=10, cpu="async")),
                            profiles={})
    profile_step.profile(bench, 500.0, nodes_of, measure, top=50)
    return log, bench.profiles


def test_a_duets_two_builds_are_recorded_in_the_same_steps_and_each_keeps_its_own_slot(monkeypatch):
    log, found = profiled(monkeypatch, {"A": ("node2",), "B": ("node1",)}, pairs=2)
    # The CPU sampler runs in every profiled step and no other, started after the settling pause, stopped before
    # the recordings are read; the threads' times are read just before and after the step whose recordings are.
    log_of_pair = ["sample node2 node1", "measure profiled", "samples of node2 node1 at 500/s"]
    assert log == ["measure unprofiled", "start capbench-pair-1", "sample node2 node1", "threads of node2 node1",
                   "measure profiled", "threads of node2 node1", "samples of node2 node1 at 500/s",
                   "read node2 capbench-pair-1 step 3 (A at 500/s, 50 rows, CPU by async-profiler, threads a to c)",
                   "read node1 capbench-pair-1 step 4 (B at 500/s, 50 rows, CPU by async-profiler, threads b to d)",
                   "start capbench-pair-2", *log_of_pair, "discard node2 capbench-pair-2",
                   "discard node1 capbench-pair-2", "measure unprofiled"]
    assert list(found["A"]["nodes"]) == ["node2"] and list(found["B"]["nodes"]) == ["node1"]
    assert found["B"]["profiled"] == {"step": 4, "passed": True, "achieved_rps": 480.0, "answered_ok": 4797,
                                      "p99_ms": 40.0}  # responses less those with an error status
    assert found["A"]["overhead"] == {"pairs": 2, "achieved_ratio": 0.96, "achieved_range": [0.96, 0.96],
                                      "p99_ratio": 1.0, "p99_range": [1.0, 1.0]}


def test_a_node_that_refuses_to_record_is_said_under_its_own_label_only(monkeypatch):
    log, found = profiled(monkeypatch, {"A": ("node2",), "B": ("node1",)}, pairs=1, refusing=("node1",))
    assert found["B"]["nodes"] == {} and found["B"]["problems"] == ["node1: not recorded: refused"]
    assert found["A"]["problems"] == [] and list(found["A"]["nodes"]) == ["node2"]


def test_nodes_sampled_together_share_the_finest_interval_any_of_them_needs(monkeypatch):
    """A duet's slots on quotas of 1 and 0.5 CPU: both sampled every 0.5 x 10 s / SAMPLES_WANTED of CPU time,
    so one sample is the same CPU time on each and their counts per request compare."""
    quotas = {"node1": 1.0, "node2": 0.5}
    monkeypatch.setattr(profile_step, "_interval_ns",
                        lambda bench, node: round(quotas[node] * 10 * 1e9 / profile_step.SAMPLES_WANTED))
    asked = {}
    monkeypatch.setattr(profile_step.cpu_profiler, "start",
                        lambda node, pid, interval: asked.setdefault(node, interval) and "cpu")
    sampling = profile_step._sampling(SimpleNamespace(), {"node1": "1", "node2": "2"}, [])
    assert asked == {"node1": 1_666_667, "node2": 1_666_667}
    assert {node: s["interval_us"] for node, s in sampling.items()} == {"node1": 1666, "node2": 1666}
