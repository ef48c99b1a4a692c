"""What the export needs to know of a host's archives (the folder pmrep opens as one context, one archive per
logging session) to tell whether pmrep run over one window alone would write what the whole run's export
holds for it (capbench/metrics/pmrep.py cuts the windows it can, exports the others on their own):

- when the archives start: pmrep started before it starts there instead of at -S, and a raw (-u) export then
  gives another count of samples (metrics/cut.raw_rows);
- the first discontinuity: the start of the second archive (a pause of the loggers around a re-created host),
  or a <mark> record inside an archive (pmlogger lost pmcd and found it again, a killed node). pmrep started
  after one interpolates differently from pmrep that read up to it: from a start inside a later archive,
  libpcp 6.0.3's search back for an instance born in the window stops at the archives' <mark> and leaves the
  metric without values for a second or two that the whole run has (seen on the database host's proc.psinfo,
  a backend process born between two rows; the same window read through from an earlier archive has them).
  Before the first discontinuity, a window started on its own and the same window in the whole run gave the
  same rows at every start second tried in our runs' archives;
- each archive's span: where the folder cannot be opened as one context (the openmetrics agent numbers a node's
  metrics in the order it first sees them, so a node started again may give one number another metric with
  other semantics: "The semantics of a metric has changed in an archive"), a window is read from the one
  archive that holds it."""
from __future__ import annotations

import calendar
import re
import time
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import PurePosixPath

# pmdumplog's time stamps (-Z UTC; -x for the <mark> records): "Thu Nov 26 06:42:26.457906 2026".
STAMP = r"\w{3} (\w{3}) +(\d+) (\d\d:\d\d:\d\d)(?:\.(\d+))? (\d{4})"


@dataclass(frozen=True)
class Archives:
    start: Decimal  # epoch (UTC), to the archive's own precision
    clean_until: Decimal | None  # the first discontinuity (None: none)
    # Each archive's name (in the host's folder) and span, in time order.
    spans: tuple[tuple[str, Decimal, Decimal], ...] = field(default=(), compare=False)

    def holding(self, start: float, end: float) -> str | None:
        """The name of the one archive whose span holds [start, end], or None (a window across two)."""
        return next((name for name, first, last in self.spans if first <= Decimal(start) and Decimal(end) <= last),
                    None)


def _epoch(month: str, day: str, clock: str, fraction: str | None, year: str) -> Decimal:
    second = calendar.timegm(time.strptime(f"{year} {month} {day} {clock}", "%Y %b %d %H:%M:%S"))
    return Decimal(second) + Decimal(f"0.{fraction or 0}")


def read(text: str) -> Archives | None:
    """The script's account of one host's archives (pmrep.script's `archives`): per archive an "archive NAME"
    line, pmdumplog -L's "commencing" and "ending" lines, and its <mark> records' lines or "marks unknown".
    None where any of that is missing: then no window of the host is cut."""
    spans, marks = [], []
    for block in text.split("archive ")[1:]:
        found = {key: re.search(f"{key} +{STAMP}", block) for key in ("commencing", "ending")}
        if None in found.values() or "marks unknown" in block:
            return None
        try:
            spans.append((*(_epoch(*found[key].groups()) for key in ("commencing", "ending")),
                          PurePosixPath(block.split("\n", 1)[0].strip()).name))
            marks.extend(_epoch(*match.groups()) for match in re.finditer(f"{STAMP} +<mark>", block))
        except ValueError:
            return None
    if not spans:
        return None
    spans.sort()
    # A window ending before the first archive's end lies in it: the second one starts after that.
    ends = [spans[0][1]] if len(spans) > 1 else []
    return Archives(spans[0][0], min([*ends, *marks], default=None),
                    tuple((name, first, last) for first, last, name in spans))
