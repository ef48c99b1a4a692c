"""The corrected latency of a step as one HdrHistogram, with every request due in the step accounted for:
answered (their corrected latency), failed (counted by kind, no latency), or unanswered at the end (in flight,
queued in the generator or never sent). An unanswered request is in the histogram with at least its age at
the end of the step, so the corrected percentiles are never better than the truth: leaving them out would drop
up to the worst few per cent of the step, several times the p99's tail."""
from __future__ import annotations

from hdrh.histogram import HdrHistogram

from rundata.records import SPECTRUM_PERCENTILES

NAMED_PERCENTILES = (("p50", 50), ("p90", 90), ("p99", 99), ("p99.9", 99.9))


def new_histogram() -> HdrHistogram:
    """Microseconds, 1 µs to 1 h, 3 significant digits (wrk2's own histogram keeps the same precision)."""
    return HdrHistogram(1, 3_600_000_000, 3)


def record_ms(histogram: HdrHistogram, ms: float, count: int = 1) -> None:
    histogram.record_value(max(1, min(3_600_000_000, round(ms * 1000.0))), count)


def unanswered_ages_ms(unanswered: int, rate: float, duration_s: float) -> list[float]:
    """The least each unanswered request can have waited by the end of the step: the schedule's last
    `unanswered` due times (request i is due at i / rate), whichever requests they really were. Any other
    choice of requests would be older, so this is a lower bound of the tail they add."""
    if unanswered <= 0 or rate <= 0:
        return []
    last_slot = max(0, round(rate * duration_s) - 1)
    return [max(0.0, 1000.0 * (duration_s - (last_slot - j) / rate)) for j in range(unanswered)]


def add_unanswered(histogram: HdrHistogram, unanswered: int, rate: float, duration_s: float) -> None:
    for age_ms in unanswered_ages_ms(unanswered, rate, duration_s):
        record_ms(histogram, age_ms)


def figures(histogram: HdrHistogram) -> tuple[dict[str, float], list[list[float]]]:
    """The named percentiles and max (ms), and the [percentile, ms] spectrum ending at [100, max]."""
    if histogram.get_total_count() == 0:
        return {}, []
    latency = {name: histogram.get_value_at_percentile(p) / 1000.0 for name, p in NAMED_PERCENTILES}
    latency["max"] = histogram.get_max_value() / 1000.0
    spectrum = [[p, histogram.get_value_at_percentile(p) / 1000.0] for p in SPECTRUM_PERCENTILES]
    spectrum.append([100, latency["max"]])
    return latency, spectrum


def unanswered_count(intended: int | None, responses: int, no_response: int) -> int:
    """Requests due in the step with neither a response nor an error by its end."""
    if intended is None:
        return 0
    return max(0, intended - responses - no_response)
