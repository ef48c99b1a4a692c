"""The direct check of the testbed's ceiling (capbench/analysis/testbed_ceiling.py): what the generator and HAProxy carry,
and what each request costs them, when the backend costs nothing: requests balanced as the bench's are, to HAProxy
itself answering on loopback (its ceiling backend, haproxy/haproxy.cfg), every node idle. Steps at DIRECT_RATES, each a step long (at least the driver's shortest), up to the
first that fails the SLO or that the generator could not keep; HAProxy's CPU is read from its host's /proc around
each step, the generators' from the load hosts' own accounting (no monitoring needed).

It is a fact of the machine, not of a run: measured once per machine and settings (KEY_SETTINGS: the machine, the
backend, the generator and its version, the load hosts, their threads), kept in .capbench/testbed-ceiling.json and
recorded in each run's run.json as the calibration is. HAProxy's answer on loopback stands in for a node's (it
parses a request and writes a short response where Tomcat's would be read): a run's own steps, on the real nodes,
give the figure its end uses, and the two are printed side by side."""
from __future__ import annotations

import time

from capbench.analysis.testbed_ceiling import HarnessMachines, on_machines
from capbench.engine.calibration_probe import machine
from capbench.engine.measuring import StepRunner
from capbench.engine.progress import say
from capbench.hosts import process_cpu, topology
from capbench.hosts.backend import ClusterError, backend
from capbench.hosts.balancer_address import own_answer_url, passed_through
from capbench.hosts.shared_cores import machines as shared_machines
from capbench.rundata import jsonl
from capbench.rundata.layout import testbed_ceiling_path
from capbench.rundata.run import node_numbers

DIRECT_RATES = (1000.0, 2000.0, 4000.0, 8000.0, 16000.0)
PHASE = "ceiling"


def url() -> str:
    """The balancer's ceiling backend (haproxy/haproxy.cfg), over the client's TLS where the balancer ends it."""
    return own_answer_url("/capbench-ceiling")


def not_checked() -> str | None:
    """Why the direct check cannot stand for this run's harness, or None where it can: where TLS=node the balancer
    passes the client's TLS through to the nodes and cannot answer a request over it, and a check in clear text
    would leave out what the generator's TLS costs. The run's own steps still price the harness where monitored."""
    if passed_through():
        return ("not checked with TLS=node: the balancer passes the client's TLS through to the nodes and answers no "
                "request over it itself")
    return None


def harness() -> tuple[str, ...]:
    return ("lb", *topology.LOAD_HOSTS)


def key(bench, machines: list[dict] | None) -> str:
    """What the check depends on: another machine, backend, generator, number of load hosts or placement of the
    balancer and the load hosts measures anew; so do HTTP/2 on the client's leg and connections that do not last
    the step (HTTP/1.1's key over kept connections is as before)."""
    placed = ("; ".join(f"{m['name']} {m['cpus']:g} cpus: {', '.join(h for h in m['hosts'] if h in harness())}"
                        for m in machines if any(h in harness() for h in m["hosts"])) if machines else "not counted")
    return " | ".join([url(), machine(), backend().name, f"{bench.driver.name} {bench.version}",
                       f"load hosts {len(bench.loads.hosts)}", f"threads {bench.settings.threads}",
                       f"harness on {placed}", *([f"HTTP {bench.settings.http}"] if bench.settings.http != "1.1" else []),
                       *([f"connections {bench.settings.connection_life}"]
                         if bench.settings.connection_life != "keep" else [])])


def cached(wanted: str) -> dict | None:
    path = testbed_ceiling_path()
    checks = jsonl.read_json(path) if path.exists() else {}
    return (checks or {}).get(wanted)


def keep(wanted: str, check: dict) -> None:
    path = testbed_ceiling_path()
    checks = (jsonl.read_json(path) if path.exists() else None) or {}
    checks[wanted] = check
    path.parent.mkdir(parents=True, exist_ok=True)
    jsonl.write_json(path, checks)


def measure(bench) -> dict:
    """The steps on HAProxy's own answer, from the lowest rate up; what they carried and cost. They are recorded in
    the run's ceiling-check/ folder, numbered apart from the run's own steps."""
    own = StepRunner(bench.settings, bench.driver, bench.loads, bench.run_id, f"{bench.steps.work_dir}/{PHASE}",
                     bench.paths.ceiling_check, bench.steps.progress)
    steps, duration = [], max(bench.settings.step_s, bench.driver.min_step_s)
    for rate in DIRECT_RATES:
        before = process_cpu.cpu_seconds("lb", "haproxy")
        record = own.measure("lb", 1, rate, PHASE, label=PHASE, url=url(), duration_s=duration, settle=False)
        after = process_cpu.cpu_seconds("lb", "haproxy")
        r = record.result
        usages = [g.loadhost for g in r.generators if g.loadhost] or ([r.loadhost] if r.loadhost else [])
        usage = usages[0] if usages else None
        haproxy = round((after - before) / duration, 3) if before is not None and after is not None else None
        generator = (round(sum(u.cpu_seconds / u.wall_seconds for u in usages), 3)
                     if usages and all(u.wall_seconds > 0 for u in usages) else None)
        steps.append({"step": record.step, "rate": rate, "achieved_rps": r.achieved_rps, "passed": record.passed,
                      "valid": record.valid, "p99_ms": r.latency_ms.get("p99"), "haproxy_cores": haproxy,
                      "generator_cores": generator, "cpus": usage.cpus_available if usage else None})
        time.sleep(own.SETTLE_AFTER_PASS_S)
        if not (record.passed and record.valid):
            break
    held = [s for s in steps if s["passed"] and s["valid"]]
    top = held[-1] if held else None
    cost = None
    if top and top["haproxy_cores"] is not None and top["generator_cores"] is not None and top["achieved_rps"]:
        cost = round(1000 * (top["haproxy_cores"] + top["generator_cores"]) / top["achieved_rps"], 4)
    return {"url": url(), "measured": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "run_id": bench.run_id,
            "steps": steps, "carried_rps": top["achieved_rps"] if top else None,
            "carried_all": bool(top) and top is steps[-1] and len(steps) == len(DIRECT_RATES),
            "harness_ms_per_request": cost, "machine_cpus": (top or steps[-1])["cpus"] if steps else None}


def price(check: dict | None, hosts: tuple[str, ...] | None) -> float | None:
    """The direct check's CPU a request (ms) of `hosts` (the balancer, "lb", and load hosts; None: all): from its
    highest step that held; the load hosts share the generators' CPU as they share the rate, evenly."""
    check = check or {}
    if hosts is None:
        return check.get("harness_ms_per_request")
    held = [s for s in check.get("steps") or [] if s["passed"] and s["valid"]]
    top = held[-1] if held else None
    if not top or not top["achieved_rps"] or top["haproxy_cores"] is None or top["generator_cores"] is None:
        return None
    share = sum(h in topology.LOAD_HOSTS for h in hosts) / len(topology.LOAD_HOSTS)
    cores = (top["haproxy_cores"] if "lb" in hosts else 0.0) + top["generator_cores"] * share
    return round(1000 * cores / top["achieved_rps"], 4)


def machines_of(check: dict | None) -> list[dict] | None:
    """The machines the run's hosts were found on (capbench/hosts/shared_cores.py), as ensure recorded them."""
    return (check or {}).get("machines")


def ceiling(check: dict | None, settings: dict[str, str]) -> HarnessMachines:
    """The ceilings beside the nodes by the direct check's cost per request, on the machines of the balancer and
    the load hosts."""
    return on_machines(machines_of(check), node_numbers(settings, "CPUS", topology.NODES), harness(),
                       lambda hosts: price(check, hosts), "the direct check on HAProxy's own answer", carried(check))


def carried(check: dict | None) -> float | None:
    """What the direct check carried at most with the nodes idle; None where it carried every rate it tried (the
    machine may carry more) or did not run."""
    check = check or {}
    return None if check.get("carried_all") else check.get("carried_rps")


def ensure(bench) -> dict | None:
    """This machine's direct check: kept from an earlier run, else measured now; said in the run's first lines."""
    found = shared_machines()
    machines = [m.as_json() for m in found] if found is not None else None
    wanted = key(bench, machines)
    if (reason := not_checked()) is not None:
        say(f"testbed ceiling: {reason}")
        return {"key": wanted, "machines": machines, "error": reason}
    check = cached(wanted)
    if check is None:
        say(f"testbed ceiling: checking what the generator and HAProxy carry on HAProxy's own answer ({url()}), once "
            "for this machine and settings")
        try:
            check = measure(bench)
        except ClusterError as problem:
            say(f"warning: the testbed's ceiling could not be checked: {problem}")
            return {"key": wanted, "machines": machines, "error": str(problem)}
        keep(wanted, check)
    check = {**check, "key": wanted, "machines": machines}
    carried = check.get("carried_rps")
    alone = (f"with the nodes idle they carried {'at least ' if check.get('carried_all') else ''}{carried:g}/s"
             if carried else "with the nodes idle not even the lowest rate passed")
    everyone = ceiling(check, bench.cluster_settings()).beside(topology.NODES)
    say(f"testbed ceiling: {everyone.sentence()}; {alone} "
        f"(checked {check.get('measured')})")
    return check
