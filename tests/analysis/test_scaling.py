"""The scale-out curve (capbench/analysis/scaling.py): the ideal and E(N), and the USL fitted over the number of nodes,
on synthetic points from a known law (a simulated cluster, as the issue allows for the analysis)."""
from __future__ import annotations

import numpy as np
import pytest

from capbench.analysis import scaling
from capbench.analysis.usl_fit import usl

LAM, SIGMA, KAPPA = 800.0, 0.05, 0.02  # N* = sqrt(0.95 / 0.02) ≈ 6.9: the curve bends inside 1…8
LEVELS = range(1, 9)
REPEATS = 3
NOISE = 0.02  # each capacity off the law by a normal 2 % (our full runs repeat within 2.8–6.2 %)


def measured(seed: int, law=(LAM, SIGMA, KAPPA)) -> list[dict]:
    rng = np.random.default_rng(seed)
    return [{"nodes": [f"node{i}" for i in range(1, n + 1)],
             "repeats": [float(usl(n, *law) * (1 + NOISE * rng.standard_normal())) for _ in range(REPEATS)],
             "limited_by": None} for n in LEVELS]


def test_the_fit_over_n_recovers_sigma_and_kappa_within_their_standard_errors():
    """Over 200 synthetic clusters the true σ and κ lie within one standard error about two times in three and
    within two nearly always: the errors the report prints are honest, not just small."""
    within_one = {"sigma": 0, "kappa": 0}
    within_two = {"sigma": 0, "kappa": 0}
    runs = 200
    for seed in range(runs):
        fit = scaling.fit_over_n(scaling.points(measured(seed)))
        for name, truth in (("sigma", SIGMA), ("kappa", KAPPA)):
            error = fit[f"{name}_err"]  # None: held at a bound, counted as a miss
            off = abs(fit[name] - truth) / error if error else float("inf")
            within_one[name] += off <= 1
            within_two[name] += off <= 2
    for name in ("sigma", "kappa"):
        assert 0.55 <= within_one[name] / runs <= 0.80, (name, within_one, within_two)
        assert within_two[name] / runs >= 0.90, (name, within_one, within_two)


def test_a_harness_bound_point_is_left_out_of_the_fit_with_its_reason():
    clean = measured(7)
    bound = [*clean, {"nodes": [f"node{i}" for i in range(1, 10)], "repeats": [900.0, 910.0, 905.0],
                      "limited_by": scaling.harness_limit(lb_cpu_pct=97.0, load_cpu_pct=40.0)}]
    without = scaling.fit_over_n(scaling.points(clean))
    with_it = scaling.fit_over_n(scaling.points(bound))
    assert with_it["left_out"] == [{"n": 9, "reason": "the balancer used 97 % of a core at capacity (≥ 90 %)"}]
    assert with_it["sigma"] == without["sigma"] and with_it["kappa"] == without["kappa"]
    assert with_it["points"] == len(LEVELS) * REPEATS


def test_ideal_is_the_sum_of_the_nodes_alone_where_measured_else_n_times_x1():
    curve = scaling.points([{"nodes": ["node1"], "repeats": [500.0, 520.0, 510.0]},
                             {"nodes": ["node1", "node2"], "repeats": [880.0]},
                             {"nodes": ["node1", "node2", "node3"], "repeats": [1200.0]}],
                            alone={"node1": 510.0, "node2": 400.0})
    assert [p.ideal_rps for p in curve] == [510.0, 910.0, 1530.0]  # node3 alone unknown: 3 × X(1)
    assert [p.efficiency for p in curve] == [1.0, pytest.approx(0.967, abs=1e-3), pytest.approx(0.784, abs=1e-3)]


def test_too_few_levels_are_refused_with_the_reason_not_a_fit():
    fit = scaling.fit_over_n(scaling.points(measured(1)[:3]))
    assert "too few points" in fit["error"] and fit["failed"] is False


@pytest.mark.parametrize(("lb", "load", "limited"), [(50.0, 50.0, False), (95.0, None, True), (None, 92.0, True),
                                                     (None, None, False)])
def test_harness_limit(lb, load, limited):
    assert (scaling.harness_limit(lb, load) is not None) is limited
