"""Each window's CSVs cut from the whole run's pmrep export (metrics/cut.py) and what the host's archives say
about where a cut is exact (metrics/archives.py), on small hand-made exports; the export of real archives is
test_export.py's."""
from __future__ import annotations

from decimal import Decimal

from metrics import archives, cut

# 2026-11-26 06:42:30 UTC
T = 1795675350
PMINFO = """
hotproc.psinfo.utime
    Data Type: 64-bit unsigned int  InDom: 3.9 0xc00009
    Semantics: counter  Units: millisec

hotproc.psinfo.rss
    Data Type: 64-bit unsigned int  InDom: 3.9 0xc00009
    Semantics: instant  Units: Kbyte

hinv.ncpu
    Data Type: 32-bit unsigned int  InDom: PM_INDOM_NULL 0xffffffff
    Semantics: discrete  Units: none
"""
HEADER = ('Time,"hotproc.psinfo.utime-000007 /usr/bin/java","hotproc.psinfo.rss-000007 /usr/bin/java",'
          '"hinv.ncpu"')
WHOLE = f"""{HEADER}
2026-11-26 06:42:30.000000,,216536,2
2026-11-26 06:42:31.000000,248.000,217048,2
2026-11-26 06:42:32.000000,250.000,217048,2
2026-11-26 06:42:33.000000,,217100,2
2026-11-26 06:42:34.000000,120.500,217200,2
"""


def test_a_windows_first_row_loses_its_counters_rates_and_keeps_its_values():
    export = cut.read_export(WHOLE, PMINFO)
    assert export.counters == {0}  # utime only: rss is instant, ncpu discrete
    assert cut.window_rows(export, T + 1, T + 3) == [
        HEADER,
        "2026-11-26 06:42:31,,217048,2",  # alone, pmrep has no row before 06:42:31: no rate
        "2026-11-26 06:42:32,250.000,217048,2",
        "2026-11-26 06:42:33,,217100,2"]  # empty in the whole run too: kept empty


def test_a_window_needs_each_of_its_seconds_on_the_second():
    export = cut.read_export(WHOLE, PMINFO)
    assert cut.window_rows(export, T + 3, T + 5) is None  # 06:42:35 is not in the whole run
    # pmrep started at the archive's first sample (-S before it): rows off the second.
    late = cut.read_export(WHOLE.replace(".000000,", ".457906,"), PMINFO)
    assert cut.window_rows(late, T + 1, T + 3) is None


def test_an_export_whose_columns_cannot_be_told_is_not_cut_from():
    assert cut.read_export(WHOLE, PMINFO.replace("counter", "")) is None  # utime's semantics unknown
    assert cut.read_export(WHOLE + HEADER + "\n", PMINFO) is None  # a second header (--dynamic-header's)
    assert cut.read_export(WHOLE.replace("217048,2\n", "217048\n", 1), PMINFO) is None  # a column short
    assert cut.read_export("", PMINFO) is None
    assert cut.semantics(PMINFO) == {"hotproc.psinfo.utime": "counter", "hotproc.psinfo.rss": "instant",
                                     "hinv.ncpu": "discrete"}


RAW_HEADER = 'Time,"openmetrics.jvm.tomcat_servlet_requestcount_total-0 servlet:grind"'
RAW = f"""{RAW_HEADER}
2026-11-26 06:42:29.980000,300.000
2026-11-26 06:42:30.683762,231.606
2026-11-26 06:42:31.552879,0.000
2026-11-26 06:42:32.400000,186.108
2026-11-26 06:42:32.990000,368.749
2026-11-26 06:42:33.999999,344.969
2026-11-26 06:42:34.000001,358.121
"""
COUNTS_PMINFO = "openmetrics.jvm.tomcat_servlet_requestcount_total\n    Semantics: counter  Units: count\n"


def test_raw_samples_are_sliced_by_time_as_pmrep_u_gives_them():
    export = cut.read_export(RAW, COUNTS_PMINFO)
    # From 06:42:30 to 06:42:33: samples at or after 06:42:30 whose whole seconds are not after 06:42:33 (so
    # 06:42:33.999999 is in), the first without its rate (pmrep had no sample before it).
    assert cut.raw_rows(export, T, T + 3) == [RAW_HEADER, "2026-11-26 06:42:30.683762,",
                                              "2026-11-26 06:42:31.552879,0.000",
                                              "2026-11-26 06:42:32.400000,186.108",
                                              "2026-11-26 06:42:32.990000,368.749"]  # 4 samples: pmrep's -T - -S + 1
    assert cut.raw_rows(export, T + 4, T + 9) == [RAW_HEADER, "2026-11-26 06:42:34.000001,"]
    assert cut.raw_rows(export, T + 5, T + 9) == [RAW_HEADER]  # after the archive's end: the header only


LABELS = """archive /work/pcp/db/db-2
    commencing Thu Nov 26 06:47:59.745393 2026
    ending     Thu Nov 26 06:48:57.369289 2026
archive /work/pcp/db/db
    commencing Thu Nov 26 06:42:26.963634 2026
    ending     Thu Nov 26 06:47:54.128390 2026
"""


def test_the_archives_start_and_first_discontinuity():
    two = archives.read(LABELS)
    assert two == archives.Archives(Decimal("1795675346.963634"), Decimal("1795675674.128390"))
    one = archives.read(LABELS.split("archive /work/pcp/db/db\n")[0])
    assert one == archives.Archives(Decimal("1795675679.745393"), None)
    marked = archives.read(LABELS + "Thu Nov 26 06:45:00.001000 2026  <mark>\n")
    assert marked.clean_until == Decimal("1795675500.001")
    assert archives.read(LABELS + "marks unknown\n") is None
    assert archives.read(LABELS.replace("    ending     Thu Nov 26 06:48:57.369289 2026\n", "")) is None
    assert archives.read("") is None
