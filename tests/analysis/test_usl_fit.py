"""The USL fit recovers known parameters from synthetic points and refuses points that cannot support it."""
from __future__ import annotations

import math

import numpy as np
import pytest

from capbench.analysis import usl_fit

LEVELS = [1, 2, 4, 8, 16, 32]


def test_recovers_known_sigma_kappa_lambda_from_exact_points():
    fit = usl_fit.fit(LEVELS, [usl_fit.usl(n, 120.0, 0.04, 0.0015) for n in LEVELS])
    assert fit.sigma == pytest.approx(0.04, rel=1e-4) and fit.kappa == pytest.approx(0.0015, rel=1e-4)
    assert fit.lam == pytest.approx(120.0, rel=1e-4) and fit.r_squared == pytest.approx(1.0)
    assert fit.peak_n == pytest.approx(math.sqrt(0.96 / 0.0015), rel=1e-3)


def test_noisy_points_give_the_parameters_within_their_uncertainty():
    rng = np.random.default_rng(7)
    truth = (100.0, 0.05, 0.002)
    x = [usl_fit.usl(n, *truth) * (1 + rng.normal(0, 0.02)) for n in LEVELS]
    fit = usl_fit.fit(LEVELS, x)
    assert abs(fit.sigma - truth[1]) <= 3 * fit.sigma_err
    assert abs(fit.kappa - truth[2]) <= 3 * fit.kappa_err
    assert 0.98 < fit.r_squared < 1.0


def test_linear_scaling_has_no_peak():
    fit = usl_fit.fit(LEVELS, [50.0 * n for n in LEVELS])
    assert fit.sigma == pytest.approx(0, abs=1e-6) and fit.kappa == pytest.approx(0, abs=1e-8)
    assert fit.peak_n is None and fit.lam == pytest.approx(50.0)


def test_fully_serialized_work_peaks_at_one():
    # σ = 1 (one lock, or a CPU quota one request already fills): X only falls as N grows; N* is 1, not 0.
    fit = usl_fit.fit(LEVELS, [usl_fit.usl(n, 700.0, 1.0, 0.003) for n in LEVELS])
    assert fit.sigma == pytest.approx(1.0, abs=1e-3) and fit.peak_n == 1.0
    assert fit.peak_x == pytest.approx(700.0, rel=1e-3)


def test_a_good_fit_inside_the_measured_range_has_no_caveat():
    fit = usl_fit.fit(LEVELS, [usl_fit.usl(n, 120.0, 0.04, 0.02) for n in LEVELS])  # N* = 6.9, inside 1..32
    assert fit.caveats() == [] and fit.as_dict()["caveats"] == []


def test_an_extrapolated_peak_an_unproven_kappa_and_a_poor_r_squared_are_said():
    # Throughput that rises and then only wobbles (as bench-usl measured on a 1.5-CPU node): a tiny κ whose
    # error exceeds it puts N* far beyond the last level.
    fit = usl_fit.fit(LEVELS, [921.0, 1805.0, 1753.0, 1827.0, 2016.0, 2110.0])
    said = " | ".join(fit.caveats())
    assert fit.peak_n is not None and fit.peak_n > 32
    assert "beyond the largest N measured (32)" in said
    assert "within one standard error" in said and "R² = " in said


@pytest.mark.parametrize("n, x, message", [
    ([1, 3], [600.0, 1200.0], "too few points"),
    ([1, 2, 2, 4], [10.0, 18.0, 19.0, 30.0], "3 distinct"),
    ([0, 1, 2, 4], [1.0, 10.0, 18.0, 30.0], "≥ 1"),
    ([1, 2, 4, 8], [10.0, 18.0, 0.0, 30.0], "> 0"),
])
def test_refuses_points_that_cannot_support_a_fit(n, x, message):
    with pytest.raises(usl_fit.UslError, match=message):
        usl_fit.fit(n, x)


def test_a_parameter_driven_to_its_bound_is_shown_at_bound_not_with_a_meaningless_error():
    # Throughput flat but for ±3 % noise: σ is pushed to 1 (curve_fit's covariance still gave it ± 0.065).
    fit = usl_fit.fit(LEVELS, [700 * (1 + 0.03 * (-1) ** i) for i in range(len(LEVELS))])
    assert fit.at_bound == ("sigma",) and fit.sigma == pytest.approx(1.0) and fit.sigma_err is None
    assert fit.shown("sigma", 4) == "1.0000 (at bound)" and "±" not in fit.shown("sigma", 4)
    assert " ± " in fit.shown("kappa", 6) and " ± " in fit.shown("lam", 1)
    assert fit.peak_n == 1.0 and fit.peak_n_err is None  # N* clipped to 1: no error made from σ's
    assert any("σ = 1 sits at its bound" in caveat for caveat in fit.caveats())
    # Linear scaling holds both σ and κ at 0: λ alone is estimated.
    linear = usl_fit.fit(LEVELS, [50.0 * n for n in LEVELS])
    assert linear.at_bound == ("sigma", "kappa") and linear.kappa_err is None and linear.lam_err is not None


def test_an_interior_fit_keeps_its_errors_and_gives_n_stars():
    rng = np.random.default_rng(3)
    fit = usl_fit.fit(LEVELS, [usl_fit.usl(n, 120.0, 0.04, 0.02) * (1 + rng.normal(0, 0.01)) for n in LEVELS])
    assert fit.at_bound == () and fit.sigma_err and fit.kappa_err and fit.peak_n_err
    assert abs(fit.peak_n - math.sqrt(0.96 / 0.02)) <= 3 * fit.peak_n_err
    assert fit.peak_shown().startswith(f"{fit.peak_n:.1f} ± ")


def test_a_fit_recorded_before_bounds_were_checked_loses_the_error_of_what_sits_at_one():
    old = {k: v for k, v in usl_fit.fit(LEVELS, [700 * (1 + 0.03 * (-1) ** i) for i in range(6)]).as_dict().items()
           if k not in ("at_bound", "peak_n_err")}
    old["sigma_err"] = 0.065  # what curve_fit's covariance said
    shown = usl_fit.UslFit.from_dict(old)
    assert shown.at_bound == ("sigma",) and shown.sigma_err is None and shown.shown("sigma", 4).endswith("(at bound)")


@pytest.mark.parametrize("problem", [RuntimeError("Optimal parameters not found: maxfev exceeded"),
                                     ValueError("Residuals are not finite in the initial point"),
                                     np.linalg.LinAlgError("Singular matrix")])
def test_a_fit_that_raises_is_a_failed_fit_with_its_reason(monkeypatch, problem):
    def broken(*args, **kwargs):
        raise problem
    monkeypatch.setattr(usl_fit, "curve_fit", broken)
    with pytest.raises(usl_fit.UslFitFailed, match=f"the least-squares fit failed \\({type(problem).__name__}: "):
        usl_fit.fit(LEVELS, [50.0 * n for n in LEVELS])
