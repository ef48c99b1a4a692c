"""The console while a bench runs: one line per step (target, phase, offered, achieved, p99, failures, verdict,
elapsed and ETA) and the harness's own messages."""
from __future__ import annotations

import statistics
import time

from rundata.records import StepRecord

STEPS_PER_SEARCH_GUESS = 10  # for the ETA until a search has finished


def say(message: str) -> None:
    print(f"capbench: {message}", flush=True)


def mmss(seconds: float) -> str:
    return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"


class Progress:
    """Counts steps and searches for the ETA: searches left × steps a search took so far × a step's wall time
    (its length plus the pause after it, `settle_s`)."""

    def __init__(self, searches: int, step_s: int, settle_s: float, steps_per_search: int = STEPS_PER_SEARCH_GUESS):
        self.started = time.monotonic()
        self.steps_per_search = steps_per_search
        self.searches_left = searches
        self.steps_in_search = 0
        self.finished_search_steps: list[int] = []
        self.step_walls: list[float] = []
        self.step_s = step_s
        self.settle_s = settle_s
        # Steps measured side by side (a duet) end in any order: each line is then printed whole at its end.
        self.whole_lines = False
        self._begun: dict[int, str] = {}

    def begin(self, target: str, phase: str, number: int, rate: float, duration: int, connections: int) -> float:
        pace = f"{rate:>8.1f}/s" if rate > 0 else f"{'closed':>10}"
        line = f"  {target:<7} {phase:<7} #{number:<3} {pace} {duration:>3}s {connections:>4}c "
        if self.whole_lines:
            self._begun[number] = line
        else:
            print(line, end="", flush=True)
        return time.monotonic()

    def end(self, record: StepRecord, began: float) -> None:
        self.step_walls.append(time.monotonic() - began)
        if record.phase != "warmup":
            self.steps_in_search += 1
        r = record.result
        p99 = r.latency_ms.get("p99")
        verdict = "INVALID" if not record.valid else ("pass" if record.passed else "FAIL")
        why = f"  ({record.invalid_reason or '; '.join(record.slo_broken)})" if not record.passed else ""
        p99_text = f"{p99:9.1f}ms" if p99 is not None else "        -  "
        print(f"{self._begun.pop(record.step, '')}→ {r.achieved_rps:8.1f}/s  p99 {p99_text}  fail "
              f"{r.failure_pct:6.2f}%  {verdict:<7} {self._clock()}{why}", flush=True)

    def search_done(self) -> None:
        self.finished_search_steps.append(self.steps_in_search)
        self.steps_in_search = 0
        self.searches_left -= 1

    def _clock(self) -> str:
        elapsed = time.monotonic() - self.started
        per_search = (statistics.mean(self.finished_search_steps) if self.finished_search_steps
                      else self.steps_per_search)
        steps_left = max(0.0, per_search - self.steps_in_search) + per_search * max(0, self.searches_left - 1)
        per_step = statistics.mean(self.step_walls) + self.settle_s if self.step_walls else self.step_s
        return f"elapsed {mmss(elapsed)}  ETA ~{mmss(steps_left * per_step)}"
