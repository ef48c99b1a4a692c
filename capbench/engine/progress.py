"""The console while a bench runs: one line per step (target, phase, offered, achieved, p99, failures, verdict,
elapsed and ETA) and the harness's own messages."""
from __future__ import annotations

import statistics
import time

from capbench.rundata.records import StepRecord

STEPS_PER_SEARCH_GUESS = 10  # for the ETA until a search has finished


def say(message: str) -> None:
    print(f"capbench: {message}", flush=True)


def mmss(seconds: float) -> str:
    return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"


class Progress:
    """Counts steps and searches for the ETA: searches left × steps a search took so far × a step's wall time
    (its length plus the pause after it, `settle_s`), then what the kind measures after its searches (`after`:
    how many steps of which phase, and the seconds planned for them; a duet's blocks), at the pace it has kept
    since they began."""

    def __init__(self, searches: int, step_s: int, settle_s: float, steps_per_search: int = STEPS_PER_SEARCH_GUESS,
                 after: tuple[str, int, float] = ("", 0, 0.0)):
        self.started = time.monotonic()
        self.after_phase, self.after_steps, self.after_s = after
        self.after_done = 0
        self.after_began: float | None = None
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
        if record.phase == self.after_phase:
            self.after_done += 1
            if self.after_began is None:
                self.after_began = began
        else:
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
        now = time.monotonic()
        return f"elapsed {mmss(now - self.started)}  ETA ~{mmss(self._searches_left_s() + self._after_left_s(now))}"

    def _searches_left_s(self) -> float:
        if self.searches_left <= 0:
            return 0.0
        per_search = (statistics.mean(self.finished_search_steps) if self.finished_search_steps
                      else self.steps_per_search)
        steps_left = max(0.0, per_search - self.steps_in_search) + per_search * (self.searches_left - 1)
        per_step = statistics.mean(self.step_walls) + self.settle_s if self.step_walls else self.step_s
        return steps_left * per_step

    def _after_left_s(self, now: float) -> float:
        """The steps after the searches still to come: at the planned pace until they begin, then at the pace
        they kept (which counts the pauses between them, a duet's warm-ups after a swap among them)."""
        left = max(0, self.after_steps - self.after_done)
        if not left:
            return 0.0
        if self.after_began is None:  # set with the first of them done
            return self.after_s * left / self.after_steps
        return (now - self.after_began) / self.after_done * left
