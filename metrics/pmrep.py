"""pmrep over a run's archives, one step window at a time: for each step (its record's start and end epochs, taken
on the load host) and each host archived, one CSV of that host's metric set (pmrep.conf's section for its role)
every second over the whole seconds inside the step (the same -S/-T/-t for every host, so rows line up;
counters as rates per second), and for nodes and the balancer the request counters as recorded around the
step (<host>-counts.csv, every sample, for the exact counts of metrics/counts.py). Run where PCP's tools are,
through the backend."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path

from hosts.backend import backend
from hosts.topology import ARCHIVED, role
from metrics.series import RAW_TIME_FORMAT

PMREP_CONF = "/opt/capbench/pcp/pmrep.conf"  # in the controller image and on the controller VM
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
    """The bash script: one pmrep per (window, host), reading the archives under $1/pcp, writing CSV under $1/out,
    as many at a time as there are CPUs (each pmrep is a short Python process; a bench has hundreds)."""
    pcp, out = '"$1"/pcp', '"$1"/out'
    lines = ["set -u", 'throttle() { while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n; done; }']
    for window in windows:
        lines.append(f"mkdir -p {out}/{window.label}")
        for host in hosts:
            lines.append("throttle; " + _pmrep(pcp, out, host, window.start, window.end,
                                               f"{out}/{window.label}/{host}.csv", role(host)) + " &")
            if role(host) in COUNTED_ROLES:
                lines.append("throttle; " + _pmrep(pcp, out, host, window.raw_from, window.raw_to,
                                                   f"{out}/{window.label}/{host}-counts.csv", f"{role(host)}-counts",
                                                   raw=True) + " &")
    lines.append("wait")
    return "\n".join(lines) + "\n"


def _pmrep(pcp: str, out_dir: str, host: str, start: int, end: int, out: str, metric_set: str,
           raw: bool = False) -> str:
    # raw: every sample as the logger recorded it (-u, no interpolation), stamped to the microsecond.
    # --ignore-unknown: a metric the host's archive lacks (cgroup v1's throttling on a cgroup v2 host or a VM,
    # archives from before it was logged) is left out of the CSV instead of losing the host's whole CSV.
    sampling = f"-u -f '{RAW_TIME_FORMAT}'" if raw else "-t 1s"
    return (f"pmrep --ignore-unknown -c {PMREP_CONF} -Z UTC -a {pcp}/{host} -S '@{_utc(start)}' "
            f"-T '@{_utc(end)}' {sampling} -o csv -F {out} :{metric_set} 2>>{out_dir}/pmrep.log"
            f" || echo '{out}: pmrep failed' >>{out_dir}/pmrep.log")


def run(pcp_dir: Path, out_dir: Path, windows: list[Window]) -> list[str]:
    """Exports every window of every host archived in pcp_dir; returns the hosts exported."""
    hosts = [h for h in ARCHIVED if (pcp_dir / h).is_dir()]
    if not hosts or not windows:
        return []
    out_dir.mkdir(parents=True, exist_ok=True)
    backend().pcp_tools(script(windows, hosts), pcp_dir, out_dir)
    return hosts
