"""The load hosts of a run (LOAD_HOSTS: load, load2 …): each gets the tool and the scenario's files, and each step
is sent from all of them together: the step's plan split into their shares (rate and connections), one start
instant handed to every host (run-step waits for it), the tools run side by side, and their parts merged into
the step's one result exactly (capbench/load/drivers/merge.py). With one load host a step is sent as it always was: at
once, the whole plan, no instant."""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from capbench.hosts import topology
from capbench.load.drivers import GeneratorRun, StepPlan
from capbench.load.drivers.latency import StepLatency
from capbench.load.drivers.merge import combine, shares
from capbench.load.loadhost import LoadHost
from capbench.rundata.records import StepResult

# From choosing the start instant to the instant itself: every host's command must have reached it by then (an
# exec takes a fraction of a second here; through an engine on another machine, more). Each generator's start
# after the instant is recorded (its start_skew_ms).
START_MARGIN_S = 2.0


@dataclass
class SentStep:
    """A step as the load hosts sent it: the merged result, the files each host's tool left, and the latency
    books (each host's, and the step's: the hosts' added up) where the tool gave its histogram."""
    result: StepResult
    files: dict[str, dict[str, bytes]]
    books: dict[str, StepLatency]
    book: StepLatency | None


class LoadHosts:
    def __init__(self, names: tuple[str, ...] | None = None):  # None: the bench's load hosts
        self.hosts = [LoadHost(name) for name in (topology.LOAD_HOSTS if names is None else names)]
        self.versions: dict[tuple[str, str], str] = {}  # each tool's version on each host, by (tool, host)

    @property
    def first(self) -> LoadHost:
        """The host that also makes the harness's small checks (calibration, who answers)."""
        return self.hosts[0]

    @property
    def names(self) -> list[str]:
        return [host.name for host in self.hosts]

    def put(self, path: str, data: bytes) -> None:
        for host in self.hosts:
            host.put(path, data)

    def put_binary(self, local: Path, path: str) -> None:
        for host in self.hosts:
            host.put_binary(local, path)

    def versions_of(self, driver) -> dict[str, str]:
        """A tool's version on each host, by host (run.json's record of the run's driver)."""
        return {host: version for (tool, host), version in self.versions.items() if tool == driver.name}

    def record_versions(self, driver) -> str:
        """The tool's version on each host; returns the first's (they come from one image or one binary)."""
        for host in self.hosts:
            self.versions[driver.name, host.name] = " ".join(host.exec(driver.version_argv()).decode().split())
        return self.versions[driver.name, self.first.name]

    def send(self, driver, plan: StepPlan, step_dir: str, timeout: float,
             start_at: float | None = None) -> SentStep:
        """One step from every load host. On an interrupt or a failure every host's tool is stopped before it propagates. start_at: the
        instant to start at, shared with another step sent beside this one (a duet's); by default one of its
        own with several load hosts, none with one."""
        plans = shares(plan, len(self.hosts), driver.whole_rates)
        if (driver.name, self.first.name) not in self.versions:  # a tool other than the run's, first used here
            self.record_versions(driver)
        if start_at is None and len(self.hosts) > 1:
            start_at = time.time() + START_MARGIN_S

        def one(host: LoadHost, share: StepPlan) -> tuple[dict[str, bytes], GeneratorRun]:
            files, envelope = host.run_step(step_dir, driver.argv(share), timeout, start_at)
            return files, driver.parse(files, share, envelope, self.versions.get((driver.name, host.name), "unknown"))

        pool = ThreadPoolExecutor(len(self.hosts)) if len(self.hosts) > 1 else None
        try:
            if pool is None:
                outcomes = [one(self.first, plans[0])]
            else:
                futures = [pool.submit(one, host, share) for host, share in zip(self.hosts, plans)]
                outcomes = [future.result() for future in futures]
        except BaseException:
            self.stop(step_dir)
            raise
        finally:
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)
        runs = [run for _, run in outcomes]
        result, book = combine(self.names, runs, plan.rate, start_at)
        return SentStep(result, {host.name: files for host, (files, _) in zip(self.hosts, outcomes)},
                        {host.name: run.book for host, run in zip(self.hosts, runs) if run.book is not None}, book)

    def stop(self, step_dir: str) -> None:
        for host in self.hosts:
            host.stop_step(step_dir)
