"""pmrep over a run's archives, for each step window: for each step (its record's start and end epochs, taken on
the load host) and each host archived, one CSV of that host's metric set (pmrep.conf's section for its role)
every second over the whole seconds inside the step (the same -S/-T/-t for every host, so rows line up;
counters as rates per second), and for nodes and the balancer the request counters as recorded around the
step (<host>-counts.csv, every sample, for the exact counts of capbench/metrics/counts.py). Run where PCP's tools are,
through the backend.

One pmrep per host and metric set over the whole run, each window's CSV cut from it (capbench/metrics/cut.py): a pmrep
per window and host is a Python start and an archive opening each, hundreds per bench (126 s of export for a
56-step bench of 6 hosts on 2 cores). A window that cannot be cut exactly is exported on its own, as all were."""
from __future__ import annotations

import math
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from capbench.hosts import topology
from capbench.hosts.backend import backend
from capbench.hosts.topology import role
from capbench.metrics import archives, cut
from capbench.metrics.series import RAW_TIME_FORMAT

PMREP_CONF = "/opt/capbench/pcp/pmrep.conf"  # in the controller image and on the controller VM
PCP, OUT = '"$1"/pcp', '"$1"/out'  # in the scripts: the archives, and the folder whose files land in out_dir
WHOLE_RUN = ".whole-run"  # under out_dir: the whole run's exports, removed once cut
# As many pmreps at a time as there are CPUs (each is a short Python process).
PROLOGUE = ("set -u", 'throttle() { while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n; done; }')
# The raw samples exported around each step for its counts: enough seconds on each side to hold the last
# sample before the step (and the one before it, for its rate) and the first after it (loggers sample each 1 s).
COUNT_MARGIN_S = 3
COUNTED_ROLES = ("node", "lb")


@dataclass(frozen=True)
class Window:
    label: str
    start: int  # whole seconds inside the step: rates are for (start, end]
    end: int
    step_start: float  # the step's own epochs, for the request counts
    step_end: float
    next_start: float | None  # when the next recorded step started (None: the last one)

    @property
    def raw_from(self) -> int:
        """The span whose raw samples are exported for the counts."""
        return math.floor(self.step_start) - COUNT_MARGIN_S

    @property
    def raw_to(self) -> int:
        return math.ceil(self.step_end) + COUNT_MARGIN_S


# A window exported on its own: (window, host, raw counts or not, the one archive to read: None for the folder).
Job = tuple[Window, str, bool, str | None]

def windows_for(records: list[dict]) -> list[Window]:
    """Records in the order they ran."""
    windows = []
    for record, following in zip(records, [*records[1:], None]):
        start, end = math.ceil(record["start_epoch"]), math.floor(record["end_epoch"])
        if end - start >= 2:
            windows.append(Window(f"step-{record['step']:03d}", start, end, record["start_epoch"],
                                  record["end_epoch"], following["start_epoch"] if following else None))
    return windows


def _utc(epoch: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(epoch))


def script(windows: list[Window], hosts: list[str]) -> str:
    """The bash script of the whole run: per host one pmrep of its metric set over every window's seconds (and,
    for nodes and the balancer, one raw pmrep over every window's raw span), then pminfo's semantics of the
    metrics in its header (which columns are rates). Reads the archives under $1/pcp, writes under
    $1/out/WHOLE_RUN; a pmrep that fails leaves no .pminfo file (and a line in pmrep.log)."""
    first, last = min(w.start for w in windows), max(w.end for w in windows)
    raw_first, raw_last = min(w.raw_from for w in windows), max(w.raw_to for w in windows)
    whole = f'"$1"/out/{WHOLE_RUN}'
    lines = [*PROLOGUE, f"mkdir -p {whole}",
             # The metrics of a CSV header: "metric-instance" or "metric", quoted, after Time.
             "metrics_of() { head -n 1 \"$1\" | tr ',' '\\n' | tail -n +2 | sed -e 's/^\"//' -e 's/[-\"].*//'"
             " | sort -u; }",
             # Their semantics (counter: pmrep gave rates); pminfo's failure shows as metrics missing there.
             'semantics() { local m; m=$(metrics_of "$2"); [ -z "$m" ] || pminfo -d -a "$1" $m >"$3" 2>/dev/null;'
             ' [ -f "$3" ] || : >"$3"; }',
             # When each of the host's archives starts and ends, and its <mark> records (capbench/metrics/archives.py;
             # pmdumplog reads one archive at a time, and -M shows the marks among one metric's records: here
             # pmcd.pid, which pmlogger writes only as it starts and stops).
             'archives() { local m a marks; for m in "$1"/*.meta*; do a=${m%%.meta*}; echo "archive $a";'
             ' pmdumplog -Z UTC -L "$a" | grep -E "commencing|ending";'
             ' if marks=$(pmdumplog -x -Z UTC -M "$a" pmcd.pid); then grep "<mark>" <<<"$marks";'
             ' else echo "marks unknown"; fi; done >"$2" 2>/dev/null; }']
    for host in hosts:
        lines.append(f"throttle; archives {PCP}/{host} {whole}/{host}.archives &")
        sets = [(role(host), first, last, False)]
        if role(host) in COUNTED_ROLES:
            sets.append((f"{role(host)}-counts", raw_first, raw_last, True))
        for metric_set, start, end, raw in sets:
            out = f"{whole}/{_name(host, raw)}"
            # -f with microseconds even for the -t 1s export: they show every row is on the second (cut.py).
            # -s for the raw export: as many samples as the archive has to -T, not pmrep's one per second.
            export = _pmrep(host, start, end, f"{out}.csv", metric_set, raw, RAW_TIME_FORMAT, checked=False,
                            samples=raw_samples(windows) if raw else None)
            failed = f"{WHOLE_RUN}/{_name(host, raw)}.csv: pmrep failed (its windows exported on their own)"
            lines.append(f"throttle; {{ {export} && semantics {PCP}/{host} {out}.csv {out}.pminfo; }}"
                         f" || echo '{failed}' >>{OUT}/pmrep.log &")
    lines.append("wait")
    return "\n".join(lines) + "\n"


def window_script(jobs: list[Job]) -> str:
    """The bash script of the windows exported on their own, as they all were before: one pmrep per (window,
    host, metric set), writing each window's CSV under $1/out."""
    lines = list(PROLOGUE)
    for label in dict.fromkeys(window.label for window, _, _, _ in jobs):
        lines.append(f"mkdir -p {OUT}/{label}")
    for window, host, raw, archive in jobs:
        start, end = _span(window, raw)
        metric_set = f"{role(host)}-counts" if raw else role(host)
        lines.append("throttle; " + _pmrep(host, start, end, f"{OUT}/{window.label}/{_name(host, raw)}.csv",
                                           metric_set, raw, RAW_TIME_FORMAT if raw else None, archive=archive)
                     + " &")
    lines.append("wait")
    return "\n".join(lines) + "\n"


def _name(host: str, raw: bool) -> str:
    return f"{host}-counts" if raw else host


def _span(window: Window, raw: bool) -> tuple[int, int]:
    return (window.raw_from, window.raw_to) if raw else (window.start, window.end)


def raw_samples(windows: list[Window]) -> int:
    """A sample count the whole run's raw export cannot reach (the loggers sample each second): pmrep -u stops
    after (-T minus -S) + 1 samples unless told, and a logger's jitter puts more samples than that in a span.
    A whole-run raw export with this many rows may have been cut short: not cut from (cut_windows)."""
    return 10 * (max(w.raw_to for w in windows) - min(w.raw_from for w in windows) + 1)


def _pmrep(host: str, start: int, end: int, out: str, metric_set: str, raw: bool, time_format: str | None,
           checked: bool = True, samples: int | None = None, archive: str | None = None) -> str:
    # raw: every sample as the logger recorded it (-u, no interpolation), stamped to the microsecond.
    # --ignore-unknown: a metric the host's archive lacks (cgroup v1's throttling on a cgroup v2 host or a VM,
    # archives from before it was logged) is left out of the CSV instead of losing the host's whole CSV.
    sampling = ("-u" if raw else "-t 1s") + (f" -s {samples}" if samples else "")
    stamped = f" -f '{time_format}'" if time_format else ""
    command = (f"pmrep --ignore-unknown -c {PMREP_CONF} -Z UTC -a {PCP}/{host}{f'/{archive}' if archive else ''} "
               f"-S '@{_utc(start)}' "
               f"-T '@{_utc(end)}' {sampling}{stamped} -o csv -F {out} :{metric_set} 2>>{OUT}/pmrep.log")
    return f"{command} || echo '{out}: pmrep failed' >>{OUT}/pmrep.log" if checked else command


def run(pcp_dir: Path, out_dir: Path, windows: list[Window]) -> list[str]:
    """Exports every window of every host archived in pcp_dir; returns the hosts exported. Each host's archive
    once over the whole run, each window cut from that (capbench/metrics/cut.py), and the windows that cannot be cut
    exactly exported on their own; the whole run's files are removed after."""
    hosts = [h for h in topology.ARCHIVED if (pcp_dir / h).is_dir()]
    if not hosts or not windows:
        return []
    out_dir.mkdir(parents=True, exist_ok=True)
    whole = out_dir / WHOLE_RUN
    try:
        backend().pcp_tools(script(windows, hosts), pcp_dir, out_dir)
        jobs = cut_windows(whole, out_dir, windows, hosts)
        if jobs:
            backend().pcp_tools(window_script(jobs), pcp_dir, out_dir)
    finally:
        shutil.rmtree(whole, ignore_errors=True)
    return hosts


def cut_windows(whole: Path, out_dir: Path, windows: list[Window], hosts: list[str]) -> list[Job]:
    """Writes each window's CSVs cut from the whole run's; returns those that could not be cut (each said in
    pmrep.log), to be exported on their own."""
    jobs: list[Job] = []
    notes = []
    for window in windows:
        (out_dir / window.label).mkdir(exist_ok=True)
    for host in hosts:
        known = archives.read(_text(whole / f"{host}.archives"))
        for raw in (False, True) if role(host) in COUNTED_ROLES else (False,):
            export, why = _read(whole, host, raw, windows)
            for window in windows:
                path = out_dir / window.label / f"{_name(host, raw)}.csv"
                lines, why_not = (None, why) if export is None else _cut(export, window, raw, known)
                if lines is None:
                    # The folder as one context failed: the archive that holds the window, where one does.
                    archive = known.holding(*_span(window, raw)) if export is None and known else None
                    jobs.append((window, host, raw, archive))
                    notes.append(f"{path.relative_to(out_dir)}: not cut from the whole run ({why_not}), exported"
                                 " on its own\n")
                else:
                    path.write_text("\n".join(lines) + "\n")
    if notes:
        with (out_dir / "pmrep.log").open("a") as log:
            log.writelines(notes)
    return jobs


def _cut(export: cut.Export, window: Window, raw: bool, known: archives.Archives | None) \
        -> tuple[list[str] | None, str]:
    """A window's CSV lines cut from the whole run's export, or None and why (capbench/metrics/archives.py says why
    these are the conditions)."""
    if known is None:
        return None, "what the host's archives hold is unknown"
    if raw:
        if known.start > window.raw_from:
            return None, "it starts before the host's archives"
        return cut.raw_rows(export, window.raw_from, window.raw_to), ""
    if known.clean_until is not None and window.end >= known.clean_until:
        return None, "it lies after a discontinuity in the host's archives"
    return (cut.window_rows(export, window.start, window.end),
            "its seconds are not all in the whole run's rows, or not on the second")


def _text(path: Path) -> str:
    return path.read_text() if path.is_file() else ""


def _read(whole: Path, host: str, raw: bool, windows: list[Window]) -> tuple[cut.Export | None, str]:
    """The whole run's export of one host and metric set, or None and why."""
    stem = whole / _name(host, raw)
    if not stem.with_suffix(".pminfo").is_file():
        return None, "the whole run's pmrep failed"
    export = cut.read_export(_text(stem.with_suffix(".csv")), _text(stem.with_suffix(".pminfo")))
    if export is None:
        return None, "the whole run's columns cannot be told"
    if raw and len(export.rows) >= raw_samples(windows):
        return None, "the whole run's raw export may have stopped at its sample count"
    return export, ""
