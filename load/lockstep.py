"""Capacity searches stepped together: each slot's search is load/capacity_search.py's find_capacity, unchanged, and
every step they ask for is measured at the same instants as the others' (a duet: load/duet.py). A search whose
step is ready waits until every search still running has asked for its own; then `measure_together` runs them
all at once. A slot whose search has ended is not left idle while the others go on: it is loaded at its
capacity (a companion step, not counted), so the machine the remaining searches see stays as busy as it was.

Each search runs on a thread of its own only so that find_capacity can stay a plain loop; the steps themselves
are measured by the caller's thread, one set at a time."""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable

from load.capacity_search import SearchOutcome, Verdict, find_capacity

COMPANION = "companion"  # the phase of a step that keeps an ended search's slot loaded


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


class _Stop(Exception):
    """Ends a search thread whose step will not be measured (another search failed)."""


def search_together(plans: dict[str, SearchPlan],
                    measure_together: Callable[[list[Ask]], dict[str, Verdict]]) -> dict[str, SearchOutcome]:
    """Each slot's search by its plan, their steps measured together; returns each slot's outcome. An exception
    raised by measure_together, or by a search, ends every search and is raised here."""
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

    threads = {slot: threading.Thread(target=search, args=(slot, plan), daemon=True, name=f"search {slot}")
               for slot, plan in plans.items()}
    for thread in threads.values():
        thread.start()
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
            asks += [Ask(s, outcomes[s].capacity, COMPANION) for s in plans
                     if s in outcomes and outcomes[s].capacity]
            verdicts = measure_together(asks)
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
