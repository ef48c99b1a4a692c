"""PCP during a run: the controller's loggers started once the hosts' metrics exist, paused around a re-created
balancer or node, and at the end the archives brought home and each step's window exported into its record
(metrics/). Part of the Bench (capbench/engine/runner.py)."""
from __future__ import annotations

import time

from capbench.engine.progress import say
from capbench.hosts.balancer_address import PASSED_THROUGH
from capbench.metrics import export
from capbench.metrics.monitor import Monitor
from capbench.rundata import jsonl
from capbench.rundata.layout import RunPaths
from capbench.rundata.run import RunRecord, db_cpus, node_cpus


class Monitoring:
    """The run's PCP loggers (`monitor`; None: MONITOR=off), whose figures go into the records under `paths`."""

    def __init__(self, monitor: Monitor | None, paths: RunPaths):
        self.monitor = monitor
        self.paths = paths

    def start(self) -> None:
        say("monitoring: starting a pmlogger per host on the controller once its metrics exist")
        for line in self.monitor.start():
            say(f"monitoring: {line}")

    def stop(self) -> None:
        self.monitor.stop()

    def paused(self, action) -> None:
        """Runs `action` with the loggers stopped, if they were logging, and started again after it."""
        logging = self.monitor is not None and self.monitor.logging
        if logging:
            self.monitor.stop()
        action()
        if logging:
            self.start()

    def finish(self) -> None:
        """Stops the loggers, brings their archives home and adds each step's host figures to its record."""
        if self.monitor is None or not self.monitor.sessions:
            return
        self.monitor.stop()
        self.monitor.collect()
        say(f"monitoring: archives in {self.monitor.pcp_dir}; exporting each step's window with pmrep")
        records = jsonl.read(self.paths.steps)
        sessions = [(s["started_epoch"], s.get("ended_epoch", time.time())) for s in self.monitor.sessions]
        logged = [r for r in records if any(a <= r["start_epoch"] and r["end_epoch"] <= b for a, b in sessions)]
        try:
            run = RunRecord.read(self.paths.run_json)
            exported = export.export_run(self.monitor.pcp_dir, self.paths.pcp_export, logged,
                                         {**node_cpus(run), **db_cpus(run)},
                                         (run.tls or {}).get("terminates") not in PASSED_THROUGH)
            enriched = {r["step"]: r for r in exported}
        except export.ExportError as problem:
            say(f"warning: the step figures could not be exported: {problem} (the archives are kept)")
            return
        jsonl.write_all(self.paths.steps, [enriched.get(r["step"], r) for r in records])
