"""The corrected latency of a step as one HdrHistogram, with every request due in the step accounted for:
answered (their corrected latency), failed (counted by kind, no latency), or unanswered at the end (in flight,
queued in the generator or never sent). An unanswered request is in the histogram with at least its age at
the end of the step, so the corrected percentiles are never better than the truth: leaving them out would drop
up to the worst few per cent of the step, several times the p99's tail."""
from __future__ import annotations

from hdrh.histogram import HdrHistogram

from capbench.rundata.hlog import RAMP_TAG, Interval, new_histogram
from capbench.rundata.records import SPECTRUM_PERCENTILES

NAMED_PERCENTILES = (("p50", 50), ("p90", 90), ("p99", 99), ("p99.9", 99.9))


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


# The steady part of a step is cut into this many windows, each with its own p99: a step whose windows disagree
# on the SLO saw a transient (a stall, a GC, the machine's neighbours), not its rate's steady state.
WINDOWS = 4


class StepLatency:
    """A step's corrected latencies by when each request was due (seconds from the start): the requests due in
    the first `ramp_s` seconds (connections opened, the nodes' pools growing: the harness's own start-up, as
    wrk2's calibration) apart from the steady part the verdict reads, which is also cut into WINDOWS windows,
    and a p99 per second of the whole step. `without_lag` is the same steady latency less the generator's own
    lag behind its schedule."""

    def __init__(self, duration_s: float, ramp_s: float):
        self.duration_s, self.ramp_s = duration_s, ramp_s
        self.steady, self.without_lag, self.ramp = new_histogram(), new_histogram(), new_histogram()
        self.windows = [new_histogram() for _ in range(WINDOWS)]
        self.by_second: dict[int, HdrHistogram] = {}

    def add(self, due_s: float, ms: float, lag_ms: float = 0.0) -> None:
        second = max(0, min(int(self.duration_s) - 1, int(due_s)))
        record_ms(self.by_second.setdefault(second, new_histogram()), ms)
        if due_s < self.ramp_s:
            record_ms(self.ramp, ms)
            return
        record_ms(self.steady, ms)
        record_ms(self.without_lag, ms - lag_ms)
        width = (self.duration_s - self.ramp_s) / WINDOWS
        record_ms(self.windows[max(0, min(WINDOWS - 1, int((due_s - self.ramp_s) / width)))], ms)

    def add_unanswered(self, unanswered: int, rate: float) -> None:
        for age_ms in unanswered_ages_ms(unanswered, rate, self.duration_s):
            self.add(self.duration_s - age_ms / 1000.0, age_ms)

    def add_steady(self, histogram: HdrHistogram) -> None:
        """A tool's whole histogram of the steady part, where it gives no per-request times (wrk2)."""
        self.steady.add(histogram)

    def merge(self, other: "StepLatency") -> None:
        """Adds another generator's book of the same step: every histogram count by count, so each percentile of
        the sum is that of all their requests together (HdrHistogram's add is exact at its precision)."""
        for mine, theirs in ((self.steady, other.steady), (self.without_lag, other.without_lag),
                             (self.ramp, other.ramp), *zip(self.windows, other.windows)):
            mine.add(theirs)
        for second, histogram in other.by_second.items():
            self.by_second.setdefault(second, new_histogram()).add(histogram)

    def window_p99s(self) -> list[float | None]:
        return [h.get_value_at_percentile(99) / 1000.0 if h.get_total_count() else None for h in self.windows]

    def seconds(self) -> list[list[float]]:
        return [[second, h.get_total_count(), h.get_value_at_percentile(99) / 1000.0]
                for second, h in sorted(self.by_second.items())]

    def intervals(self) -> list[Interval]:
        """The book as an interval log's intervals (capbench/rundata/hlog.py): the steady part as its windows where every
        steady request is in one (a tool that timed each), else whole; the ramp tagged apart."""
        steady_s = self.duration_s - self.ramp_s
        width = steady_s / WINDOWS
        if sum(h.get_total_count() for h in self.windows) == self.steady.get_total_count():
            steady = [Interval(self.ramp_s + i * width, width, h) for i, h in enumerate(self.windows)]
        else:
            steady = [Interval(self.ramp_s, steady_s, self.steady)]
        return [Interval(0.0, self.ramp_s, self.ramp, RAMP_TAG), *steady]

    def ramp_p99(self) -> float | None:
        return self.ramp.get_value_at_percentile(99) / 1000.0 if self.ramp.get_total_count() else None
