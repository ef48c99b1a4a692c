"""Each step window's CSVs cut, in Python, out of one pmrep export of a host's whole run (capbench/metrics/pmrep.py): the
same bytes pmrep writes when run over that window alone, or None where they cannot be had that way (then that
window is exported on its own, as before).

Why a cut is exact: pmrep's CSV header lists every instance its metric ever had in the host's archives (it asks
pmGetInDomArchive, which answers from all of the archives' metadata whatever the -S), so a window's own export
and the whole run's have the same header and columns. A row is interpolated from the archive around its time
(the same whether pmrep started at the window or before it, up to the first discontinuity in the archives:
capbench/metrics/archives.py) and a counter's rate (pmrep's default for the metrics pminfo calls counters) from the row
one interval before it. So the one row that differs is a window's first: alone, pmrep has no row before it and
leaves its counters empty; in the whole run they hold the rate over the second before the window. The counters
of each window's first row are emptied here; its other columns (instantaneous values) are kept."""
from __future__ import annotations

import calendar
import csv
import re
import time
from dataclasses import dataclass
from datetime import datetime

from capbench.metrics.series import RAW_TIME_FORMAT

# pmrep's Time at whole-second intervals, as in each window's CSV. The whole run is exported with
# RAW_TIME_FORMAT instead: its microseconds show that each row is at a whole second (pmrep starts at the
# archive's first sample instead when -S is before it, and every row is then off the window's seconds).
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"


@dataclass(frozen=True)
class Row:
    second: int  # the epoch's whole seconds (UTC)
    micro: int
    stamp: str  # its Time as written
    values: str  # the rest of the line as written: "," and each column's value (none if no columns)


@dataclass(frozen=True)
class Export:
    """A whole-run export: its header line as pmrep wrote it, its rows, and which of its columns (0 = the first
    after Time) pmrep rate-converted."""
    header: str
    rows: list[Row]
    counters: frozenset[int]


def semantics(pminfo_text: str) -> dict[str, str]:
    """`pminfo -d` → {metric: its semantics (counter, instant, discrete)}."""
    found: dict[str, str] = {}
    metric = None
    for line in pminfo_text.splitlines():
        if line and not line[0].isspace():
            metric = line.strip()
        elif metric and (match := re.search(r"Semantics: (\w+)", line)):
            found[metric] = match.group(1)
    return found


def _stamp(text: str) -> tuple[int, int] | None:
    """RAW_TIME_FORMAT's text → (epoch seconds, microseconds), exactly (no float)."""
    try:
        parsed = datetime.strptime(text, RAW_TIME_FORMAT)
    except ValueError:
        return None
    return calendar.timegm(parsed.timetuple()), parsed.microsecond


def read_export(csv_text: str, pminfo_text: str) -> Export | None:
    """None where the columns of a window could not be told from it: not exactly one header line followed by
    rows stamped RAW_TIME_FORMAT with one field per column (pmrep would add a header line where its instances
    changed only with --dynamic-header, which the export does not use), or a column whose metric's semantics
    pminfo did not give (whether pmrep gave it as a rate is then unknown)."""
    lines = csv_text.splitlines()
    if not lines:
        return None
    names = next(csv.reader([lines[0]]))
    if names[:1] != ["Time"]:
        return None
    kinds = semantics(pminfo_text)
    metrics = [name.partition("-")[0] for name in names[1:]]  # "metric-instance", or a metric without instances
    if any(metric not in kinds for metric in metrics):
        return None
    rows = []
    for line in lines[1:]:
        text = line.partition(",")[0]
        stamp = _stamp(text)
        if stamp is None or line.count(",") != len(metrics):  # no commas inside pmrep's values: it replaces them
            return None
        rows.append(Row(*stamp, text, line[len(text):]))
    return Export(lines[0], rows, frozenset(i for i, m in enumerate(metrics) if kinds[m] == "counter"))


def _line(export: Export, stamp: str, row: Row, first: bool) -> str:
    """A row as the window's CSV has it; its first row as pmrep alone writes it: no row before it, no rate."""
    if not first or not export.counters:
        return stamp + row.values
    fields = row.values.split(",")  # fields[0] is the empty text before the first column's ","
    for column in export.counters:
        fields[1 + column] = ""
    return stamp + ",".join(fields)


def window_rows(export: Export, start: int, end: int) -> list[str] | None:
    """The -t 1s export of start..end (whole seconds, both included), header first; None unless the whole run
    has exactly one row at each of those seconds, on the second (rows missing: pmrep stopped at the archive's
    end, or started after the window; off the second: it started at the archive's first sample)."""
    rows = [row for row in export.rows if start <= row.second <= end]
    if [(row.second, row.micro) for row in rows] != [(second, 0) for second in range(start, end + 1)]:
        return None
    return [export.header, *(_line(export, time.strftime(TIME_FORMAT, time.gmtime(row.second)), row, i == 0)
                             for i, row in enumerate(rows))]


def raw_rows(export: Export, first: int, last: int) -> list[str]:
    """The -u export from -S first to -T last, header first: the samples at or after `first` whose whole
    seconds are not past `last` (pmrep -u stops at the first sample whose whole seconds are after -T, so a
    sample up to a second after it is in), but no more than last - first + 1 of them (pmrep's sample count
    from -S and -T, one per second: a logger's jitter can put one more in the span), its first row without
    rates. Exact when the host's archives start at or before `first` (capbench/metrics/archives.py)."""
    rows = [row for row in export.rows if first <= row.second <= last][:last - first + 1]
    return [export.header, *(_line(export, row.stamp, row, i == 0) for i, row in enumerate(rows))]
