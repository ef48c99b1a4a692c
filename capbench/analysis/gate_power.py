"""What a duet gate can call on one machine with one set of settings: make gate-calibrate's figures
(capbench/commands/gate_calibration.py measures them).

An A/A duet's band (how far its interval reaches from 1) says how often equal builds look apart: a false-alarm
figure. It is not the smallest drop a gate calls: a drop as large as the band is called only about half the time,
for the interval around a true ratio of 1 − band still reaches above the line half the time. Power needs the
interval's width and where it sits. Each calibration duet's interval gives its standard error on the log ratio
(its half-width over Student's t at its degrees of freedom); their root mean square is the figure's standard error
here, se. A gate at tolerance τ calls B FELL when the interval's upper end lies below log(1 − τ); for a true drop δ
its estimate is about normal around log(1 − δ) with that se, so the drop called with power P is where
log(1 − δ) + (t + z_P) · se = log(1 − τ). At τ = 0 that is the smallest drop the gate can call with 80 % power on
this machine: a tolerance below it would watch for drops the gate misses more often than it calls.

The known drops measure it directly too: the share of their duets called FELL at the calibration's tolerance,
beside the share of the A/A duets called FELL there (false alarms)."""
from __future__ import annotations

import math
import statistics

POWER = 0.80  # the power the smallest drop is called with
ALPHA_ONE_SIDED = 0.05  # a 90 % two-sided interval's upper end


def standard_error(low: float, high: float, blocks: int) -> float:
    """A crossover interval's standard error on the log ratio: its half-width over Student's t (n − 2 degrees of
    freedom, as capbench/analysis/duet_verdict.py builds it)."""
    from scipy import stats
    return (math.log(high) - math.log(low)) / 2 / float(stats.t.ppf(1 - ALPHA_ONE_SIDED, blocks - 2))


def pooled(errors: list[float]) -> float:
    """The root mean square of the duets' standard errors: their common figure."""
    return math.sqrt(statistics.fmean(e * e for e in errors))


def drop_called(se: float, blocks: int, tolerance_pct: float = 0.0, power: float = POWER) -> float:
    """The drop (in %) a gate at `tolerance_pct` calls FELL with `power`, for a figure of standard error `se` over
    `blocks` blocks."""
    from scipy import stats
    reach = (float(stats.t.ppf(1 - ALPHA_ONE_SIDED, blocks - 2)) + float(stats.norm.ppf(power))) * se
    return 100 * (1 - (1 - tolerance_pct / 100) * math.exp(-reach))


def power_at(se: float, blocks: int, drop_pct: float, tolerance_pct: float) -> float:
    """How often a gate at `tolerance_pct` calls a true drop of `drop_pct` FELL."""
    from scipy import stats
    t = float(stats.t.ppf(1 - ALPHA_ONE_SIDED, blocks - 2))
    margin = math.log(1 - tolerance_pct / 100) - math.log(1 - drop_pct / 100)
    return float(stats.norm.cdf(margin / se - t))
