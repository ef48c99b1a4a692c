"""summary.json's common part, for every kind: each search label's capacities, HAProxy's DOWN/UP events during
the run and the searches they disturbed, skipped searches, monitoring and the host figures at each capacity.
The kind's findings follow under its name (Kind.findings, completed by Kind.summarize)."""
from __future__ import annotations

import time

from capbench.analysis import memory_capacity, state_drift, testbed_ceiling, tls_share
from capbench.engine import ceiling_probe
from capbench.engine.profile_step import brief
from capbench.engine.progress import say
from capbench.engine.searcher import DOWN_WAIT_S
from capbench.hosts import topology
from capbench.rundata import jsonl
from capbench.rundata.generators import load_hosts
from capbench.rundata.records import SEARCH_PHASES, StepRecord, read_steps
from capbench.rundata.run import RunRecord, node_numbers
from capbench.rundata.summary import (
    HELD_SHORT,
    SUMMARY_SCHEMA,
    client_leg_at,
    metrics_at,
    of_label,
    steps_at,
    target_summary,
)


def summarize(bench, status: str, error: str | None, started: float) -> dict:
    targets = {label: target_summary(searches) for label, searches in bench.searcher.searches.items()}
    summary = {"schema": SUMMARY_SCHEMA, "run_id": bench.run_id, "kind": bench.kind.name, "status": status,
               "error": error, "driver": {"name": bench.driver.name, "version": bench.version},
               "slo": vars(bench.settings.slo), "smoke": bench.settings.smoke, "calibration": bench.calibration,
               "targets": targets,
               "steps": bench.steps.step_number,
               "lb_events": [{**e, "t_s": round(e["epoch"] - started, 3)} for e in bench.lb_events.events]}
    if bench.searcher.losses.events:
        summary["events"] = bench.searcher.losses.as_json(started, bench.lb_events.events)
    if bench.steps.warmups:
        summary["warmups"] = bench.steps.warmups
    if bench.searcher.skipped:
        summary["skipped"] = bench.searcher.skipped
    records = jsonl.read(bench.paths.steps)
    if bench.kind.needs.flags_disturbances:
        disturbed, flaps = disturbances(records, bench.lb_events.events, time.time())
        if flaps:
            summary["lb_flaps"] = flaps
        if disturbed:
            summary["disturbed"] = disturbed
            for label, why in disturbed.items():
                say(f"warning: {label}'s steps ran while {'; '.join(why)}: its capacity is not that of healthy nodes")
    steps = read_steps(bench.paths.steps)
    if bench.monitoring.monitor is not None:
        summary["monitoring"] = bench.monitoring.monitor.summary()
        for label, target in targets.items():
            target["metrics_at_capacity"] = metrics_at(steps, label, target["capacity_rps"])
    cost = (bench.tls or {}).get("handshake_cost")
    for label, target in targets.items():
        if leg := client_leg_at(steps, label, target["capacity_rps"]):
            target["client_leg_at_capacity"] = leg
            if share := tls_share.at_capacity(cost, leg, target.get("metrics_at_capacity")):
                target["tls_cpu_share"] = share
                if share["tls_bound"]:
                    say(f"{label}: TLS-bound: {share['sentence']}")
    state_findings(summary, steps, bench.paths.run_json)
    if bench.kind.needs.reports:
        testbed_findings(summary, steps, bench.ceiling_check, bench.cluster_settings())
    shares = load_hosts(steps, targets)
    if shares:
        summary["load_hosts"] = shares
    try:
        bench.kind.summarize(bench, summary, bench.found)
    except Exception as problem:  # noqa: BLE001 — what was measured is kept; the kind's analysis says it failed
        summary["summary_error"] = f"{type(problem).__name__}: {problem}"
        say(f"warning: the {bench.kind.name} analysis failed ({summary['summary_error']}); the steps are kept")
    if bench.found is not None:  # what it found, however far it got
        summary[bench.kind.name] = bench.found.to_json()
    if bench.profiles:  # whole in profiles.json; the summary says where each profile is and what it cost
        jsonl.write_json(bench.paths.analysis("profiles"), bench.profiles)
        summary["profiles"] = brief(bench.profiles)
    summary["elapsed_s"] = round(time.time() - started, 1)
    return summary


def state_findings(summary: dict, steps: list, run_json) -> None:
    """Each target's status (found, degraded, none) with what degraded it, and each node's memory capacity
    where its steps held sessions; said on the console as they are found."""
    nodes = RunRecord.read(run_json).nodes if run_json.exists() else {}
    heap_mb = {node: (info or {}).get("heap_max_bytes", 0) / 2**20 or None for node, info in (nodes or {}).items()}
    for label, target in summary["targets"].items():
        own = [r for r in steps if of_label(r, label)]
        served = {node for r in own for node in topology.IN_ROTATION.get(r.target, ())}
        found = state_drift.diagnose(label, own, heap_mb, tuple(served) or None)
        if found is not None and found["cause"] not in ("unexplained", "unknown"):
            target["status"], target["degraded"] = "degraded", found
            say(found["sentence"])
        else:
            if found is not None:
                say(f"warning: {found['sentence']}")
            target["status"] = "found" if target["capacity_rps"] is not None else "none"
        short = [s for s in target["searches"] if s.get("status") == HELD_SHORT]
        if short:  # a figure within the precision, not held for the whole hold
            target["held_short"] = "; ".join(f"repeat {s.get('repeat')}: {s.get('capacity_rps'):g}/s held "
                                             f"{s.get('held_s') or 0:g} s of the hold, out of steps (MAX_STEPS)"
                                             for s in short)
            if target["status"] == "found":
                target["status"] = HELD_SHORT
    timeouts = session_timeouts(summary["targets"])
    capacities = {node: memory_capacity.of_node(steps, node, heap_mb.get(node), timeouts.get(node),
                                                memory_capacity.collections_of(summary["targets"], node))
                  for node in topology.NODES}
    capacities = {node: m for node, m in capacities.items() if m is not None}
    if capacities:
        summary["memory_capacity"] = capacities
        for node, m in capacities.items():
            say(f"memory capacity: {memory_capacity.sentence(node, m)}")
    for label, target in summary["targets"].items():
        short = memory_capacity.unsustained(label, target.get("metrics_at_capacity"), capacities)
        if short is not None:
            target["memory_unsustained"] = short
            say(f"warning: {short['sentence']}")


SAME_INSTANT_S = 1.0  # steps started this close together ran together (a duet's slots)


def testbed_findings(summary: dict, steps: list[StepRecord], check: dict | None, cluster: dict[str, str]) -> None:
    """The testbed's ceiling from the run's own steps (else the direct check's), and the mark of each capacity it
    touches (capbench/analysis/testbed_ceiling.py), said on the console as found. The cores are counted on each machine
    that runs the balancer or a load host, where the run found them (capbench/engine/ceiling_probe.py); elsewhere only the
    unsaturated-nodes rule can mark a figure."""
    searched = [r for r in steps if r.phase in SEARCH_PHASES]
    direct = (check or {}).get("carried_rps")
    ms, used = testbed_ceiling.ms_per_request(searched, direct)

    def price(hosts: tuple[str, ...] | None) -> float | None:
        return testbed_ceiling.ms_per_request(searched, direct, hosts)[0]

    quotas = node_numbers(cluster, "CPUS", topology.NODES)
    machines = (testbed_ceiling.on_machines(ceiling_probe.machines_of(check), quotas, ceiling_probe.harness(), price,
                                            f"this run's {used} steps", ceiling_probe.carried(check)) if ms
                else ceiling_probe.ceiling(check, cluster))
    ceiling = machines.beside(topology.NODES)
    beside = {}
    for label, target in summary["targets"].items():
        own = [r for r in searched if of_label(r, label)]
        capacity = target["capacity_rps"]
        at = [r for r in steps_at(own, label, capacity) if r.host_metrics is not None]
        # A duet's slots are stepped at the same instants: the harness carries both, beside both.
        together = [r for r in searched if at and r.label != label
                    and abs(r.result.start_epoch - at[-1].result.start_epoch) < SAME_INSTANT_S]
        nodes = tuple(dict.fromkeys(n for r in (own[:1] + together) for n in topology.IN_ROTATION.get(r.target, ())))
        here = machines.beside(nodes or topology.IN_ROTATION.get(label.split()[0], ()))
        beside[label] = here.rps
        mark = testbed_ceiling.judge(label, capacity, at[-1] if at else None, here,
                                     state_bound=target["status"] == "degraded",
                                     alongside={r.label: r.result.achieved_rps for r in together})
        if mark is not None:
            target["testbed_bound"] = mark
            if target["status"] in ("found", HELD_SHORT):
                target["status"] = "testbed-bound"
            say(f"testbed-bound: {mark['sentence']}")
    summary["testbed_ceiling"] = {**ceiling.as_json(), "steps_used": used, "beside_targets": beside,
                                  "machines": machines.as_json(), "direct_check": check}


def session_timeouts(targets: dict) -> dict[str, float]:
    """Per node, the session timeout (s) of the application that held the most sessions, as the searches read it
    before they started (capbench/engine/node_state.py)."""
    found: dict[str, tuple[int, float]] = {}
    for target in targets.values():
        for search in target.get("searches") or []:
            for node, state in ((search.get("state_before") or {}).get("nodes") or {}).items():
                for context, c in (state.get("contexts") or {}).items():
                    held = (c.get("active") or 0) + (c.get("expired") or 0)
                    if c.get("timeout_s") and held >= found.get(node, (-1, 0))[0]:
                        found[node] = (held, c["timeout_s"])
    timeouts = {node: timeout for node, (_, timeout) in found.items()}
    # Every node runs the same applications: a node whose state no search read (not a target's) has the timeout
    # the others read.
    everywhere = max(found.values(), default=(0, None))[1]
    return {node: timeouts.get(node, everywhere) for node in topology.NODES if timeouts.get(node, everywhere)}


def disturbances(records: list[dict], events: list[dict], until: float) -> tuple[dict, dict]:
    """Per label, the outages of its steps' nodes while those steps ran: a node DOWN for DOWN_WAIT_S or more
    (killed, crashed), or until `until`. A shorter DOWN is an overloaded node failing its health checks in a
    failed step (its /health waits behind the grinding threads): counted per label as a flap, no warning. Each
    step is judged with its own target's nodes: a duet's label moves between slots."""
    outages: dict[str, list[str]] = {}
    flaps: dict[str, int] = {}
    for event in events:
        if event["state"] != "DOWN":
            continue
        back = min((e["epoch"] for e in events if e["node"] == event["node"] and e["state"] == "UP"
                    and e["epoch"] > event["epoch"]), default=until)
        hit = {record.get("label") or record["target"] for record in records
               if event["node"] in topology.IN_ROTATION.get(record["target"], ())
               and record["start_epoch"] <= back and event["epoch"] <= record["end_epoch"]}
        for label in sorted(hit):
            if back - event["epoch"] >= DOWN_WAIT_S:
                at = time.strftime("%H:%M:%S", time.localtime(event["epoch"]))
                outages.setdefault(label, []).append(
                    f"{event['node']} went DOWN at {at} for {back - event['epoch']:.0f} s")
            else:
                flaps[label] = flaps.get(label, 0) + 1
    return outages, flaps
