"""bench-usl's summary: a fit that fails is recorded as failed with its reason, and the summary is still made
and printed (the points are on disk whatever the fit does)."""
from __future__ import annotations

from capbench.analysis import usl_fit
from capbench.kinds.usl import KIND, UslFindings

POINTS = [{"n": n, "throughput_rps": 100.0 * n / (1 + 0.05 * (n - 1)), "mean_latency_ms": 10.0, "step": i,
           "valid": True} for i, n in enumerate((1, 2, 4, 8), 1)]


def summarized(points: list[dict]) -> UslFindings:
    """The findings of a sweep that measured `points`, summarized, as summary.json carries them."""
    found = UslFindings.from_json({"measured": points})
    KIND.summarize(None, {"targets": {}}, found)
    return UslFindings.from_json(found.to_json())


def test_a_failing_fit_is_recorded_as_failed_and_the_summary_is_still_made(monkeypatch, capsys):
    def broken(*args, **kwargs):
        raise RuntimeError("Optimal parameters not found: Number of calls to function has reached maxfev = 20000.")
    monkeypatch.setattr(usl_fit, "curve_fit", broken)
    found = summarized(POINTS)
    assert found.to_json()["points"] == POINTS and found.fit["failed"] is True
    assert "RuntimeError: Optimal parameters not found" in found.fit["error"]
    KIND.shows.console({}, found)
    assert "USL: fit failed: the least-squares fit failed (RuntimeError" in capsys.readouterr().out


def test_an_unexpected_error_in_the_fit_is_recorded_too(monkeypatch):
    def broken(*args, **kwargs):
        raise TypeError("unsupported operand")
    monkeypatch.setattr(usl_fit, "fit", broken)
    assert summarized(POINTS).fit == {"error": "the fit failed (TypeError: unsupported operand)", "failed": True}


def test_too_few_points_are_refused_not_failed_and_a_fit_at_a_bound_prints_at_bound(capsys):
    few = summarized(POINTS[:2]).fit
    assert few["failed"] is False and "too few points" in few["error"]
    flat = summarized([{**p, "throughput_rps": 700.0 * (1 + 0.03 * (-1) ** i)} for i, p in enumerate(POINTS)])
    assert flat.fit["at_bound"] == ["sigma"] and flat.fit["sigma_err"] is None
    KIND.shows.console({}, flat)
    assert "USL: σ = 1.0000 (at bound)  κ = " in capsys.readouterr().out
