"""The console's ETA (capbench/engine/progress.py): the searches left, then the steps a kind measures after them."""
from __future__ import annotations

import re

from capbench.engine import progress as progress_module
from capbench.engine.progress import Progress
from tests.step_records import a_step


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def eta_s(line: str) -> int:
    minutes, seconds = re.search(r"ETA ~(\d+)m(\d+)s", line).groups()
    return int(minutes) * 60 + int(seconds)


def step(progress: Progress, clock: Clock, wall_s: float, phase: str, capsys) -> int:
    began = progress.begin("node1", phase, 1, 100.0, 5, 4)
    clock.now += wall_s
    progress.end(a_step(phase=phase), began)
    return eta_s(capsys.readouterr().out)


def test_the_eta_counts_the_steps_after_the_searches_at_the_pace_they_keep(monkeypatch, capsys):
    clock = Clock()
    monkeypatch.setattr(progress_module.time, "monotonic", clock)
    # One search of 2 steps of 5 s (no pause after them), then 4 window steps planned at 6 s each.
    progress = Progress(1, 5, 0.0, steps_per_search=2, after=("window", 4, 24.0))
    assert step(progress, clock, 5, "search", capsys) == 5 + 24
    assert step(progress, clock, 5, "search", capsys) == 24
    progress.search_done()
    # The windows took 10 s each (a swap's warm-up among them): the rest at that pace, not the plan's.
    clock.now += 7  # between the search and the first window: not counted in the windows' pace
    assert step(progress, clock, 10, "window", capsys) == 30
    assert step(progress, clock, 10, "window", capsys) == 20
    assert step(progress, clock, 10, "window", capsys) == 10
    assert step(progress, clock, 10, "window", capsys) == 0


def test_without_steps_after_the_searches_the_eta_is_the_searches_alone(monkeypatch, capsys):
    clock = Clock()
    monkeypatch.setattr(progress_module.time, "monotonic", clock)
    progress = Progress(2, 5, 1.0, steps_per_search=3)
    # 5 steps left of 4 s wall and 1 s pause each.
    assert step(progress, clock, 4, "search", capsys) == 5 * 5
    # A warm-up is not a search's step: still 5 left, at the walls measured so far (mean 4 s) plus the pause.
    assert step(progress, clock, 4, "warmup", capsys) == 5 * 5
