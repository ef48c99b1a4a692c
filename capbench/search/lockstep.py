"""Capacity searches stepped together: each slot's search is capbench/search/capacity.py's find_capacity, unchanged, and
every step they ask for is measured at the same instants as the others' (a duet: capbench/duet/builds.py). A search whose
step is ready waits until every search still running has asked for its own; then `measure_together` runs them
all at once. A slot whose search has ended is not left idle while the others go on: it is loaded one
precision step below its capacity (a companion step, not counted), so the machine the remaining searches see
stays as busy as it was. A companion step is also a check: when COMPANION_FAILURES in a row fail, the capacity
no longer holds, by more than the search's precision, on the minutes the other search is still measuring (the
machine slowed), and the search is opened again below it (at most REOPENS times). Not at the capacity itself:
that is the last rate that passed, with the failure within the precision above it, and there companion steps
failed often on a steady machine, and the searches opened again on those failures found the same capacity or a
higher one, at a minute or more each (docs/findings.md, why the duet is built as it is). So both capacities describe the same minutes; without it, the
search that ended first kept a capacity from faster minutes.

Each search runs on a thread of its own only so that find_capacity can stay a plain loop; the steps themselves
are measured by the caller's thread, one set at a time."""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable

from capbench.search.capacity import SearchOutcome, Verdict, find_capacity

COMPANION = "companion"  # the phase of a step that keeps an ended search's slot loaded
COMPANION_FAILURES = 2  # failed companion steps in a row that open a search again
REOPENS = 2  # times one slot's search may be opened again
REOPEN_START = 0.8  # a search opened again starts this far below the capacity that failed


@dataclass(frozen=True)
class Ask:
    """A step one slot asks for: its rate and phase (a search's, or COMPANION)."""
    slot: str
    rate: float
    phase: str


@dataclass(frozen=True)
class SearchPlan:
    start_rate: float
    growth: float
    precision_pct: float
    max_steps: int


def companion_rate(outcome: SearchOutcome, plan: SearchPlan) -> float:
    """One precision step below the capacity: a rate the slot holds unless the machine slowed beyond the
    precision."""
    return round(outcome.capacity / (1 + plan.precision_pct / 100), 1)


class _Stop(Exception):
    """Ends a search thread whose step will not be measured (another search failed)."""


def search_together(plans: dict[str, SearchPlan], measure_together: Callable[[list[Ask]], dict[str, Verdict]],
                    reopened: Callable[[str, SearchOutcome], None] = lambda slot, outcome: None,
                    ) -> dict[str, SearchOutcome]:
    """Each slot's search by its plan, their steps measured together; returns each slot's outcome (its last
    search's, where one was opened again: `reopened(slot, the outcome set aside)` is told). An exception raised
    by measure_together, or by a search, ends every search and is raised here."""
    lock = threading.Condition()
    asked: dict[str, Ask] = {}
    answers: dict[str, Verdict] = {}
    outcomes: dict[str, SearchOutcome] = {}
    failures: list[BaseException] = []
    stopping = threading.Event()

    def step(slot: str, rate: float, phase: str) -> Verdict:
        with lock:
            asked[slot] = Ask(slot, round(rate, 1), phase)
            lock.notify_all()
            lock.wait_for(lambda: slot in answers or stopping.is_set())
            if stopping.is_set():
                raise _Stop
            return answers.pop(slot)

    def search(slot: str, plan: SearchPlan) -> None:
        try:
            outcome = find_capacity(lambda rate, phase: step(slot, rate, phase), plan.start_rate, plan.growth,
                                    plan.precision_pct, plan.max_steps)
            with lock:
                outcomes[slot] = outcome
        except _Stop:
            pass
        except BaseException as problem:  # a defect or a cluster error inside a step: ends the duet
            with lock:
                failures.append(problem)
        finally:
            with lock:
                lock.notify_all()

    threads: dict[str, threading.Thread] = {}

    def start(slot: str, plan: SearchPlan) -> None:
        threads[slot] = threading.Thread(target=search, args=(slot, plan), daemon=True, name=f"search {slot}")
        threads[slot].start()

    failed_in_a_row = {slot: 0 for slot in plans}
    reopens = {slot: 0 for slot in plans}

    def check_companion(slot: str, verdict: Verdict) -> None:
        """Opens the slot's search again below its capacity when its companions keep failing."""
        failed_in_a_row[slot] = failed_in_a_row[slot] + 1 if verdict.valid and not verdict.passed else 0
        if failed_in_a_row[slot] < COMPANION_FAILURES or reopens[slot] >= REOPENS:
            return
        with lock:
            outcome = outcomes.pop(slot)
        failed_in_a_row[slot] = 0
        reopens[slot] += 1
        reopened(slot, outcome)
        plan = plans[slot]
        start(slot, SearchPlan(round(outcome.capacity * REOPEN_START, 1), plan.growth, plan.precision_pct,
                               plan.max_steps))

    for slot, plan in plans.items():
        start(slot, plan)
    try:
        while True:
            with lock:
                lock.wait_for(lambda: failures or all(s in asked or s in outcomes or not threads[s].is_alive()
                                                      for s in plans))
                if failures:
                    raise failures[0]
                running = [s for s in plans if s in asked]
                if not running:
                    break
                asks = [asked.pop(s) for s in running]
                companions = [s for s in plans if s in outcomes and outcomes[s].capacity]
                asks += [Ask(s, companion_rate(outcomes[s], plans[s]), COMPANION) for s in companions]
            verdicts = measure_together(asks)
            for slot in companions:
                check_companion(slot, verdicts[slot])
            with lock:
                answers.update({s: verdicts[s] for s in running})
                lock.notify_all()
    finally:
        stopping.set()
        with lock:
            lock.notify_all()
        for thread in threads.values():
            thread.join(timeout=5)
    return outcomes
