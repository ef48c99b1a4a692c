"""python -m capbench.commands.bench KIND (make bench-KIND): a capacity bench from the load host, through HAProxy, with every
host logged by PCP (MONITOR=on, the default). The kinds are in kinds/ (--help lists them).

Everything is checked first (the bench settings: capbench/settings/bench.py and each kind's own, the cluster's settings, the driver) and the
cluster's one-bench lock taken; a bad value or a running bench is refused before anything starts. Every run
writes results/<run-id>/ as it goes; interrupted or failed runs keep their steps and are marked partial.
Exit status: 0 done, 1 failed, 2 bad settings or cluster not up, 130 interrupted."""
from __future__ import annotations

import argparse
import os
import sys

from capbench.engine.progress import say
from capbench.engine.runner import Bench
from capbench.engine.session import in_session, measured, refuse
from capbench.hosts import topology
from capbench.hosts.backend import backend
from capbench.hosts.balancer_address import PASSED_THROUGH, refused_on
from capbench.hosts.cluster_settings import NO_GRINDER, SettingsRefused, cluster_settings
from capbench.kinds import KINDS, read_settings
from capbench.load.drivers import find_wrk2
from capbench.load.drivers.capload import CaploadDriver
from capbench.load.drivers.oha import OhaDriver
from capbench.load.drivers.wrk2 import Wrk2Driver
from capbench.load.scenario import workload_name
from capbench.rundata.layout import RunPaths, new_run
from capbench.settings.bench import SettingsError, check_for_driver


def choose_driver(settings, environ: dict[str, str], closed_loop: bool = False, tls: str = "off"):
    """The driver LOADGEN asks for, and the user's wrk2 binary when that is the one; SettingsError if absent.
    A closed loop (bench-usl) needs oha: wrk2 always paces its requests at a rate; so do TLS (auto takes oha,
    which verifies the certificate; wrk2 never does), HTTP/2 (wrk2 speaks HTTP/1.1 only) and a connection per request
    (wrk2 keeps its connections); a connection per user's session, and per request over HTTP/2, take capload."""
    if closed_loop:
        if settings.loadgen in ("wrk2", "capload"):
            raise SettingsError(f"LOADGEN='{settings.loadgen}' cannot run make bench-usl: its steps are closed loops "
                                f"(each connection sends when answered) and {settings.loadgen} always paces at a "
                                "rate; use LOADGEN=oha or auto")
        levels = settings.kinds["usl"].usl_levels
        if len(topology.LOAD_HOSTS) > min(levels):
            raise SettingsError(f"LOAD_HOSTS='{len(topology.LOAD_HOSTS)}' cannot run make bench-usl with USL_LEVELS "
                                f"starting at {min(levels)}: each load host needs a connection of "
                                f"every level; use LOAD_HOSTS=1, or levels of at least {len(topology.LOAD_HOSTS)} connections")
        return OhaDriver(), None
    if settings.loadgen == "capload" or (settings.loadgen == "auto" and (
            settings.connection_life == "per-user"
            or (settings.connection_life == "per-request" and settings.http == "2"))):
        return CaploadDriver(), None
    wrk2 = find_wrk2(environ.get("WRK2"), built=settings.loadgen == "wrk2")
    if environ.get("WRK2") and not (wrk2.is_file() and os.access(wrk2, os.X_OK)):
        raise SettingsError(f"WRK2='{environ['WRK2']}' is not an executable file: give the path of a wrk2 "
                            "binary (DEVELOPERS.md says how to build one), or unset it to use oha")
    if settings.loadgen == "wrk2" and wrk2 is None:
        raise SettingsError("LOADGEN='wrk2' but no wrk2 binary: run make wrk2, set WRK2=/path/to/wrk2 or put "
                            "wrk2 on PATH (DEVELOPERS.md), or use LOADGEN=oha or auto")
    if settings.loadgen == "wrk2" or (settings.loadgen == "auto" and wrk2 is not None and tls == "off"
                                     and settings.http == "1.1" and settings.connection_life == "keep"):
        return Wrk2Driver(), wrk2
    return OhaDriver(), None


def refuse_what_the_kind_cannot_run(kind, settings) -> None:
    """A kind bound to one WORKLOAD runs no other, and no SCENARIO_FILE unless it takes one in its place."""
    if kind.workload is None or (kind.needs.takes_scenario_file and settings.user_scenario is not None):
        return
    if settings.workload != kind.workload:
        raise SettingsError(f"WORKLOAD='{settings.workload}' cannot run make bench-{kind.name}: it {kind.compares}; "
                            f"use WORKLOAD={kind.workload}"
                            + (" or a SCENARIO_FILE of your application's requests" if kind.needs.takes_scenario_file else ""))
    if settings.user_scenario is not None:
        raise SettingsError(f"SCENARIO_FILE='{settings.scenario_file}' cannot run make bench-{kind.name}: it "
                            f"{kind.compares} on WORKLOAD={kind.workload}'s requests; leave SCENARIO_FILE empty")


# The benches that read the balancer's log of every request (capbench/engine/balancing.py's with_request_log).
REQUEST_LOGGING_KINDS = ("failover", "stress")


def refuse_what_tls_cannot_run(kind, driver_name: str, cluster: dict[str, str], http: str = "1.1") -> None:
    """TLS runs on Compose's cluster, with oha, through the balancer's bench port (docs/guides/tls.md); where it is
    passed through to the nodes (TLS=node), not for a bench that reads the balancer's log of every request."""
    where = cluster.get("TLS", "off")
    if where == "off":
        return
    if refusal := refused_on(backend().name, where):
        raise SettingsError(refusal)
    if driver_name == "wrk2":
        raise SettingsError(f"TLS='{where}' cannot run with LOADGEN=wrk2: wrk2 never verifies the certificate it is "
                            "shown, and capbench measures only a balancer whose certificate was verified; use "
                            "LOADGEN=oha, or TLS=off")
    if kind is not None and kind.name == "duet":
        raise SettingsError(f"TLS='{where}' cannot run make bench-duet yet: a duet measures through each node's own "
                            "port on the balancer, which is clear text; use TLS=off")
    if where in PASSED_THROUGH and http != "1.1" and cluster.get("NODE_HTTP", "1.1") != http:
        raise SettingsError(f"HTTP={http} cannot run with TLS='{where}' and NODE_HTTP={cluster.get('NODE_HTTP', '1.1')}: "
                            "the client's TLS ends at the nodes' connector, which then speaks HTTP/1.1 alone; use "
                            f"NODE_HTTP={http} (the nodes take HTTP/2 too), HTTP=1.1, or TLS=lb or both (HTTP/2 ends at "
                            "the balancer)")
    if where in PASSED_THROUGH and kind is not None and kind.name in REQUEST_LOGGING_KINDS:
        raise SettingsError(f"TLS='{where}' cannot run make bench-{kind.name}: it reads the balancer's log of every "
                            "request, and the balancer passes TLS through unread; use TLS=lb or both")


def checked(closed_loop: bool = False, environ: dict[str, str] | None = None, kind=None):
    """The bench settings, the driver and the user's wrk2 binary, every setting checked (the cluster's too, and
    what the kind allows); SettingsError or SettingsRefused naming each problem."""
    environ = dict(os.environ) if environ is None else environ
    settings = read_settings(environ)
    if kind is not None:
        refuse_what_the_kind_cannot_run(kind, settings)
    cluster = cluster_settings()
    if cluster.get("GRINDER_PATH") == NO_GRINDER and settings.user_scenario is None:
        raise SettingsError(f"WORKLOAD='{settings.workload}' cannot run on nodes that run an executable JAR "
                            f"(APP_JAR='{cluster.get('APP_JAR')}'): its requests ask the Grinder, which they do not "
                            "have; give your application's requests in a SCENARIO_FILE")
    driver, wrk2_local = choose_driver(settings, environ, closed_loop, cluster.get("TLS", "off"))
    refuse_what_tls_cannot_run(kind, driver.name, cluster, settings.http)
    return check_for_driver(settings, driver.name), driver, wrk2_local


def run(kind, settings, driver, wrk2_local, command: str, check_only: bool = False,
        after=None) -> tuple[int, RunPaths | None]:
    """The kind's run on the cluster in a bench session (capbench/engine/session.py), to the end (tables, history line,
    report): its exit status and results folder (none with check_only: the lock is only tried). `after(bench)`
    measures more once the kind's run is done (make gate's thresholds), inside the same run."""
    def bench_run() -> tuple[int, RunPaths]:
        run_id, paths = new_run(kind.name)
        bench = Bench(kind, settings, driver, wrk2_local, run_id, paths)
        say(f"run {run_id}: {kind.name} with {driver.name}, {workload_name(settings)}, "
            f"{settings.scenario} scenario, steps of {settings.step_s} s → {paths.root}")

        def body():
            outcome = kind.run(bench, bench.found)
            if after is not None:
                after(bench)
            return outcome
        return measured(bench, body)[1], paths
    return in_session(command, check_only, bench_run, lambda: kind.refusal(settings))


def prepared(kind_name: str, environ: dict[str, str] | None = None):
    """(kind, settings, driver, wrk2) for `make bench-KIND`, every setting checked (read from environ, by default
    the process's); else the refusal's exit status. The capbench command checks with it once, with its
    configuration's environment, then runs what it returned (capbench/commands/cli.py)."""
    if kind_name not in KINDS:
        return refuse(ValueError(f"'bench-{kind_name}' is not a bench: use one of "
                                 + ", ".join(f"bench-{name}" for name in KINDS)))
    kind = KINDS[kind_name]
    try:
        return (kind, *checked(kind.needs.closed_loop, environ, kind=kind))
    except (SettingsError, SettingsRefused) as problem:
        return refuse(problem)


def main(argv: list[str] | None = None) -> int:
    kinds = "\n".join(f"  {kind.name:<10} {kind.description}" for kind in KINDS.values())
    parser = argparse.ArgumentParser(prog="python -m capbench.commands.bench", description=__doc__.split("\n\n")[0],
                                     epilog=f"kinds:\n{kinds}", formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kind", help="what to measure (see below)")
    parser.add_argument("--check-only", action="store_true", help="check the settings and the driver, run nothing")
    args = parser.parse_args(argv)
    ready = prepared(args.kind)
    if isinstance(ready, int):
        return ready
    kind, settings, driver, wrk2_local = ready
    return run(kind, settings, driver, wrk2_local, f"make bench-{kind.name}", args.check_only)[0]


if __name__ == "__main__":
    sys.exit(main())
