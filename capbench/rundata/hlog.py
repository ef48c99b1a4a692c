"""A step's corrected latency kept whole, as an HdrHistogram interval log (`.hlog`, format 1.3), the form
HdrHistogram's own tools read (HistogramLogProcessor, hdrh's HistogramLogReader, HdrHistogramVisualizer): a
percentile the record does not hold, or a merge of several steps, can be had later from the counts themselves.

Values are microseconds (pass `-outputValueUnitRatio 1000` to HistogramLogProcessor for milliseconds). The
untagged intervals are the step's measured part, whose sum is the histogram the step's verdict and figures come
from (its windows where the tool timed each request, else one interval); the part before it (the ramp, wrk2's
calibration) is tagged `ramp`, which the tools leave out unless asked for the tag."""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader, HistogramLogWriter

RAMP_TAG = "ramp"


def new_histogram() -> HdrHistogram:
    """Microseconds, 1 µs to 1 h, 3 significant digits (wrk2's own histogram keeps the same precision): every
    step's latency histogram, and the reference a log is read against."""
    return HdrHistogram(1, 3_600_000_000, 3)


@dataclass(frozen=True)
class Interval:
    start_s: float  # from the step's start
    length_s: float
    histogram: HdrHistogram
    tag: str | None = None


def write(path: Path, start_epoch: float, intervals: list[Interval], comment: str) -> None:
    """The log of one step's intervals, written beside and renamed (a reader never sees half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    with partial.open("w", encoding="utf-8") as out:
        log = HistogramLogWriter(out)
        log.output_comment("[Histogram log format version 1.3]")
        log.output_comment(f"[{comment}; values in microseconds]")
        # hdrh's own output_start_time cannot format its date: the same line, written here.
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start_epoch))
        out.write(f"#[StartTime: {start_epoch:.3f} (seconds since epoch), {stamp}]\n")
        log.output_base_time(start_epoch * 1000.0)
        log.output_legend()
        for interval in sorted(intervals, key=lambda i: i.start_s):
            if interval.histogram.get_total_count() == 0:
                continue
            # The writer has no tags: a tagged line is the writer's line behind "Tag=NAME,".
            prefix = f"Tag={interval.tag}," if interval.tag else ""
            out.write(f"{prefix}{interval.start_s:.3f},{interval.length_s:.3f},"
                      f"{interval.histogram.get_max_value() / 1000.0:.3f},"
                      f"{interval.histogram.encode().decode('ascii')}\n")
    partial.replace(path)


def read(path: Path, tag: str | None = None) -> HdrHistogram | None:
    """The sum of the log's intervals of one tag (None: the untagged, the step's measured part), read with
    hdrh's own reader; None when it has none."""
    reader = HistogramLogReader(str(path), new_histogram())
    total = None
    try:
        while (interval := reader.get_next_interval_histogram()) is not None:
            if interval.get_tag() != tag:
                continue
            if total is None:
                total = interval
            else:
                total.add(interval)
    finally:
        reader.close()
    return total


def spectrum_ms(histogram: HdrHistogram, percentiles: tuple[float, ...]) -> list[tuple[float, float]]:
    """[percentile, ms] at each percentile, ending at [100, max]."""
    points = [(float(p), histogram.get_value_at_percentile(p) / 1000.0) for p in percentiles]
    return points + [(100.0, histogram.get_max_value() / 1000.0)]
