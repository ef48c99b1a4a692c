"""Capacity search: the highest constant offered rate whose step meets the SLO.

Grow the rate by a factor until a step fails, then bisect between the highest pass and the lowest failure
until they are within the asked precision, then measure the candidate once more: a lucky pass on a noisy
(or non-monotonic) server is caught, reported as a warning, and the bisection goes on below it.
The search's first failure is measured once more too (phase "recheck"): early in a search a JVM that has
just started, or just switched to other work, is still compiling (and the other nodes of a cluster may not
have served a request yet), and one such failure would otherwise cap the search far below the capacity. When
the recheck passes, that failure is set aside with a warning and the search grows on; every later failure
bounds it. No rate above a (standing) failure is tried, so the capacity is always the highest pass below the
lowest failure. Once a step has failed (near the knee, where one stall decides a step's p99) a step whose
windows disagree on the SLO (capbench/load/drivers/latency.py) saw a transient: its rate is measured again, up to three
times, and the majority decides. A step in which the generator fell behind stops the search without a capacity: that step
measured the load host, not the server. Rates are kept to RATE_STEP: a bracket that cannot be split at that
resolution is as narrow as the search can make it. Pure logic: `measure` runs a step (a real one, or a
simulated server in the tests).

Besides the capacity, the outcome carries an interval of what the search saw: from the lowest rate that
failed at or below the capacity (a failed confirm, a recheck that failed again) up to the highest rate that
passed above the lowest failure (a server that is not monotonic there), and at least the bisection bracket.
When every step agrees it is the bracket; when they disagree, it shows how far.

**The hold.** With `hold_windows`, the candidate is not confirmed by one step but held: offered for that many
consecutive windows (steps of `window_s`, a second apart: each window's request counts need a PCP sample between
it and the next), each judged by the SLO, none voted on. A server whose state grows under load (sessions,
caches, a heap that fills) passes a rate for one step and fails it a minute later; only a rate it carries for the
whole hold is reported as found ("held 60 s"). A hold that fails ("did not hold: failed after 35 s") is a failure
at that rate, and the search goes on below it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Protocol

from capbench.rundata.summary import HELD_SHORT

MIN_RATE = 1.0  # requests/s: below this there is nothing to search
RATE_STEP = 0.1  # requests/s: the resolution of the rates tried (one decimal in the records)


KNEE_MAJORITY = 2  # of at most 3 measurements of a rate whose step was unsteady, once the search has failed
# An invalid step says the load host, not the server, failed to hold the rate: on a shared machine that is often
# a passing moment, so the rate is measured again (phase "retry") before the search gives up on the target.
INVALID_RETRIES = 2


class Verdict(Protocol):
    passed: bool
    valid: bool
    invalid_reason: str | None
    unsteady: bool  # the step's windows disagreed on the SLO: a transient, not the rate's steady state


@dataclass
class SearchOutcome:
    """found: capacity within the precision (or the rates' resolution); unresolved: the steps ran out before
    the bracket narrowed to the precision (the capacity is the bracket's low end, not a precise figure);
    lower-bound: no step failed up to the last rate; invalid: the generator fell behind at one rate three times in a
    row; none-passed: not even MIN_RATE met the SLO; held-short: a capacity within the precision whose hold the
    search ran out of steps (MAX_STEPS) in, so it was held for less than HOLD_S: its figure, not a held capacity."""
    status: str
    capacity: float | None
    reason: str
    lowest_failure: float | None
    tried: list[tuple[float, str, bool]] = field(default_factory=list)  # (rate, phase, passed)
    warnings: list[str] = field(default_factory=list)
    held_s: float | None = None  # how long the capacity was held (the whole hold); None: no hold was asked
    holds_failed: list[dict] = field(default_factory=list)  # each failed hold: rate, held_s (before it failed)

    @property
    def interval(self) -> tuple[float, float] | None:
        """[low, high] of what the search saw (the module's docstring); None without a capacity and a failure."""
        if self.capacity is None or self.lowest_failure is None:
            return None
        set_aside = {rate for rate, phase, ok in self.tried if phase == "recheck" and ok}  # a warm-up transient
        failed_below = [rate for rate, _, ok in self.tried if not ok and rate <= self.capacity and rate not in set_aside]
        passed_above = [rate for rate, _, ok in self.tried if ok and rate > self.lowest_failure]
        return min([self.capacity, *failed_below]), max([self.lowest_failure, *passed_above])

    def as_dict(self) -> dict:
        interval = self.interval
        return {"status": self.status, "capacity_rps": self.capacity, "reason": self.reason,
                "lowest_failure_rps": self.lowest_failure, "steps": len(self.tried),
                "interval_rps": list(interval) if interval else None,
                "tried": [{"rate": r, "phase": p, "passed": ok} for r, p, ok in self.tried],
                "warnings": self.warnings, "held_s": self.held_s, "holds_failed": self.holds_failed}


class _OutOfSteps(Exception):
    pass


class _Invalid(Exception):
    pass


def find_capacity(measure: Callable[[float, str], Verdict], start_rate: float, growth: float,
                  precision_pct: float, max_steps: int, hold_windows: int = 0, window_s: float = 0.0) -> SearchOutcome:
    """Runs steps through `measure(rate, phase)` (phase: search | recheck | confirm | hold | repeat | retry) and
    returns the capacity. hold_windows > 0: the candidate is held for that many windows of `window_s` each (phase
    hold) in place of the one confirm step."""
    tried: list[tuple[float, str, bool]] = []
    passes: list[float] = []
    failures: list[float] = []
    invalid_reason: list[str] = []
    warnings: list[str] = []
    tried_verdicts: list[Verdict] = []
    holds_failed: list[dict] = []

    def step(rate: float, phase: str) -> bool:
        rate = round(rate, 1)
        passed = measured(rate, phase)
        # A hold's windows are not voted on: a window that failed is what the hold asks about.
        if phase != "hold" and failures and getattr(tried_verdicts[-1], "unsteady", False):
            passed = vote(rate, passed)
        if phase == "confirm" and not passed:
            warnings.append(f"{rate:g}/s passed, then failed when measured again: the server is noisy or not "
                            "monotonic here; the search went on below it")
        (passes if passed else failures).append(rate)
        return passed

    def measured(rate: float, phase: str) -> bool:
        for attempt in range(1 + INVALID_RETRIES):
            if len(tried) >= max_steps:
                raise _OutOfSteps
            verdict = measure(rate, phase if attempt == 0 else "retry")
            tried.append((rate, phase if attempt == 0 else "retry", verdict.passed))
            tried_verdicts.append(verdict)
            if verdict.valid:
                if attempt:
                    warnings.append(f"the step at {rate:g}/s was invalid ({invalid_reason[-1]}); measured again, "
                                    f"it was valid and {'passed' if verdict.passed else 'failed'}")
                return verdict.passed
            invalid_reason.append(verdict.invalid_reason or "invalid")
        raise _Invalid(f"the step at {rate:g}/s is invalid {1 + INVALID_RETRIES} times in a row: "
                       f"{invalid_reason[-1]}")

    def hold(rate: float) -> bool:
        """The candidate offered for hold_windows windows in a row; the first window that fails ends the hold."""
        for window in range(hold_windows):
            held_windows[rate] = window  # those before this one passed (a search out of steps ends here)
            if not step(rate, "hold"):
                held = round(window * window_s, 1)
                holds_failed.append({"rate": rate, "held_s": held})
                warnings.append(f"{rate:g}/s did not hold: failed after {held:g} s of {hold_windows * window_s:g} s "
                                "(passed in the search, failed when offered longer: the server changed under the "
                                "load); the search went on below it")
                return False
        held_windows[rate] = hold_windows
        return True

    def vote(rate: float, first: bool) -> bool:
        """Near the knee a step whose windows disagree saw a transient: the rate is measured again, up to three
        times in all, and the majority decides (the steps that disagree widen the interval)."""
        votes = [first]
        try:
            while max(votes.count(True), votes.count(False)) < KNEE_MAJORITY:
                votes.append(measured(rate, "repeat"))
        except _OutOfSteps:
            # The measurements taken decide, a tie fails: a failed confirm left out would report an unconfirmed
            # rate as the capacity. The next step() is out of steps too and ends the search.
            result = votes.count(True) > votes.count(False)
            warnings.append(f"at {rate:g}/s a step's windows disagreed on the SLO (a transient), and the search was "
                            f"out of steps (MAX_STEPS) before its vote: measured "
                            f"{'once' if len(votes) == 1 else f'{len(votes)} times'}, passed {votes.count(True)}, so "
                            f"it {'passes' if result else 'fails'}")
            return result
        result = votes.count(True) >= KNEE_MAJORITY
        warnings.append(f"at {rate:g}/s a step's windows disagreed on the SLO (a transient): measured "
                        f"{len(votes)} times, passed {votes.count(True)}, so it {'passes' if result else 'fails'}")
        return result

    def bracket() -> tuple[float | None, float | None]:
        """Highest pass below the lowest failure, and that failure."""
        high = min(failures) if failures else None
        below = [r for r in passes if high is None or r < high]
        return (max(below) if below else None), high

    def outcome(status: str, capacity: float | None, reason: str) -> SearchOutcome:
        held_s = None
        if hold_windows and capacity is not None and capacity in held_windows:
            held_s = round(held_windows[capacity] * window_s, 1)
            whole = round(hold_windows * window_s, 1)
            reason += f"; held {held_s:g} s" if held_s == whole else (
                f"; held only {held_s:g} s of {whole:g} s: out of steps (MAX_STEPS) during the hold")
        return SearchOutcome(status=status, capacity=capacity, reason=reason,
                             lowest_failure=min(failures) if failures else None, tried=tried, warnings=warnings,
                             held_s=held_s, holds_failed=holds_failed)

    confirmed: set[float] = set()  # candidates confirmed (or held) once: each is measured so at most once
    held_windows: dict[float, int] = {}  # per candidate held, the windows in a row it passed
    try:
        rate = start_rate
        rechecked = False
        while True:  # grow until a failure that stands
            if step(rate, "search"):
                rate *= growth
                continue
            if rechecked:
                break
            rechecked = True
            if not step(rate, "recheck"):
                break
            failures.remove(round(rate, 1))
            warnings.append(f"{round(rate, 1):g}/s failed, then passed when measured again (a transient: JIT "
                            "compilation, a first GC, nodes not yet warm); the search went on above it")
            rate *= growth
        while True:
            low, high = bracket()
            if low is None:  # nothing passed below the lowest failure (the first step, or a failed confirm
                # or recheck took the last pass away: a node that died mid-search): come down
                if high <= MIN_RATE:
                    return outcome("none-passed", None, f"no rate down to {MIN_RATE:g}/s met the SLO")
                step(max(MIN_RATE, high / growth), "search")
            elif high / low - 1 > precision_pct / 100 and low < round((low + high) / 2, 1) < high:
                step((low + high) / 2, "search")
            elif low in confirmed:
                break
            else:
                confirmed.add(low)
                if hold_windows:
                    hold(low)  # a failed window lowers the bracket and the bisection goes on
                else:
                    step(low, "confirm")  # a failure here lowers the bracket and the bisection goes on
        low, high = bracket()
        return outcome("found", low, f"passed at {low:g}/s, failed at {high:g}/s")
    except _Invalid as invalid:
        low, _ = bracket()
        return outcome("invalid", None, str(invalid) + (f" (the server passed up to {low:g}/s)" if low else ""))
    except _OutOfSteps:
        low, high = bracket()
        if low is None:  # nothing passed, or every pass was taken away by a failure at or below it
            return outcome("none-passed", None, f"out of steps ({max_steps}): every rate that passed failed when "
                           f"measured again, down to {high:g}/s" if any(passed for _, _, passed in tried)
                           else f"no step passed in {max_steps} steps")
        if high is None:
            return outcome("lower-bound", low, f"every step passed, up to {low:g}/s: the capacity is higher")
        if high / low - 1 > precision_pct / 100:
            return outcome("unresolved", low, f"out of steps ({max_steps}) with the bracket {low:g}..{high:g}/s, "
                           f"wider than {precision_pct:g}%: the capacity lies in it")
        held = outcome("found", low, f"passed at {low:g}/s, failed at {high:g}/s (out of steps before the last "
                       "confirmation)")
        if hold_windows and (held.held_s or 0) < round(hold_windows * window_s, 1):
            held.status = HELD_SHORT  # not held for the whole hold: a figure, not a capacity held
        return held
