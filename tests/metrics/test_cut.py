"""Each window's CSVs cut from the whole run's pmrep export (capbench/metrics/cut.py), what the host's archives say about
where a cut is exact (capbench/metrics/archives.py), and the choice between a cut and pmrep over the window alone
(capbench/metrics/pmrep.py), on small hand-made exports; the export of real archives is test_export.py's."""
from __future__ import annotations

from decimal import Decimal

from capbench.metrics import archives, cut, pmrep

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
    assert two.holding(T, T + 5) == "db" and two.holding(T + 340, T + 360) == "db-2"
    assert two.holding(T + 320, T + 340) is None  # across the two archives: neither holds it
    marked = archives.read(LABELS + "Thu Nov 26 06:45:00.001000 2026  <mark>\n")
    assert marked.clean_until == Decimal("1795675500.001")
    assert archives.read(LABELS + "marks unknown\n") is None
    assert archives.read(LABELS.replace("    ending     Thu Nov 26 06:48:57.369289 2026\n", "")) is None
    assert archives.read("") is None


def test_what_is_cut_and_what_is_exported_on_its_own():
    window = pmrep.Window("step-001", T + 1, T + 3, T + 0.7, T + 3.2, None)  # raw samples from T - 3
    export = cut.read_export(WHOLE, PMINFO)
    clean = archives.Archives(Decimal(T - 10), None)
    assert pmrep._cut(export, window, False, clean)[0] == cut.window_rows(export, T + 1, T + 3)
    # After a discontinuity (a later archive, a <mark>), pmrep alone may interpolate otherwise.
    assert pmrep._cut(export, window, False, archives.Archives(Decimal(T - 10), Decimal(T + 3)))[0] is None
    assert pmrep._cut(export, window, False, None)[0] is None
    raw = cut.read_export(RAW, COUNTS_PMINFO)
    assert pmrep._cut(raw, window, True, clean)[0] == cut.raw_rows(raw, T - 3, T + 7)
    # Archives starting after raw_from: pmrep alone would count its samples from their start.
    assert pmrep._cut(raw, window, True, archives.Archives(Decimal(T - 2.5), None))[0] is None


def test_windows_not_cut_are_listed_and_said_in_the_log(tmp_path):
    whole, out = tmp_path / "whole", tmp_path / "out"
    whole.mkdir()
    (whole / "load.csv").write_text(WHOLE)
    (whole / "load.pminfo").write_text(PMINFO)
    (whole / "load.archives").write_text(LABELS)  # clean until 06:47:54: both windows are in it
    (whole / "db.archives").write_text(LABELS)  # db's whole-run pmrep failed: no db.pminfo
    out.mkdir()
    windows = [pmrep.Window("step-001", T + 1, T + 3, T + 0.7, T + 3.2, T + 3.5),
               pmrep.Window("step-002", T + 4, T + 6, T + 3.5, T + 6.1, None)]  # 06:42:35.. not in the whole run
    jobs = pmrep.cut_windows(whole, out, windows, ["load", "db"])
    # db's folder could not be read as one context: each window from the archive that holds it
    assert jobs == [(windows[1], "load", False, None), (windows[0], "db", False, "db"), (windows[1], "db", False, "db")]
    assert (out / "step-001" / "load.csv").read_text().splitlines()[1] == "2026-11-26 06:42:31,,217048,2"
    assert not (out / "step-002" / "load.csv").exists() and (out / "step-002").is_dir()
    log = (out / "pmrep.log").read_text().splitlines()
    assert log[0].startswith("step-002/load.csv: not cut from the whole run (its seconds are not all in")
    assert log[1].startswith("step-001/db.csv: not cut from the whole run (the whole run's pmrep failed)")
