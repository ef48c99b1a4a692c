"""Step records for the tests: a StepRecord with only the fields a test is about given, the rest plain; and a
step's verdict alone, as a simulated server gives it to the capacity search."""
from __future__ import annotations

from dataclasses import dataclass

from capbench.rundata.records import StepRecord, StepResult, Tool, empty_errors


def a_step(step: int = 1, target: str = "node1", offered_rps: float = 100.0, passed: bool = True, *,
           label: str = "", phase: str = "search", valid: bool = True, host_metrics: dict | None = None,
           slo_broken: tuple[str, ...] = (), **result) -> StepRecord:
    """result: StepResult's fields (achieved_rps, latency_ms, loadhost, generators, ...)."""
    measured = {"duration_s": 5.0, "connections": 4, "achieved_rps": offered_rps, "responses": int(offered_rps * 5),
                "latency_ms": {}, "errors": empty_errors(), "error_messages": {}, "start_epoch": 0.0,
                "end_epoch": 5.0, "tool": Tool("oha", "oha 1.16.0", []), **result}
    return StepRecord("run", step, phase, target, 1, "http://lb:8080/grind", "session",
                      StepResult(offered_rps=offered_rps, **measured), valid, None, passed, list(slo_broken),
                      label=label, host_metrics=host_metrics)


@dataclass
class Verdict:
    """What find_capacity reads of a step (capbench/search/capacity.py's Verdict protocol)."""
    passed: bool
    valid: bool = True
    invalid_reason: str | None = None
    unsteady: bool = False
