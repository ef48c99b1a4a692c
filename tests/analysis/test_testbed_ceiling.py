"""The testbed's ceiling from the harness's own CPU per request, and the testbed-bound mark: on unsaturated nodes of
a busy machine, or near the ceiling; never where a node was saturated."""
from __future__ import annotations

from pathlib import Path

from capbench.analysis import testbed_ceiling
from capbench.analysis.testbed_ceiling import Ceiling
from capbench.rundata.records import read_steps
from step_records import a_step

DATA = Path(__file__).parent / "data"
QUOTAS = {"node1": 0.5, "node2": 0.4, "node3": 0.3}


def node(cpu: float, rps: float, quota: float = 0.5, throttled: float = 5.0) -> dict:
    return {"cpu_pct_of_quota": cpu, "cpu_quota": quota, "throttled_pct": throttled, "busy_threads_mean": 2.0,
            "gc_time_pct": 1.0, "alloc_mb_per_s": 100.0, "app_requests_per_s": rps,
            "grind_requests_per_s": None}  # a JAR: no Grinder to count


def cluster_step(rate: float, cpus: tuple[float, float, float], busy: float, passed: bool = True,
                 haproxy: float = 0.35, generator: float = 0.26):
    """A step of the cluster as the issue's trial recorded it: PCP's figures of every node, the balancer, the
    load host (its machine's CPU)."""
    metrics = {name: node(cpu, rate / 3, QUOTAS[name]) for name, cpu in zip(QUOTAS, cpus)}
    metrics |= {"lb": {"haproxy_cpu_cores": haproxy, "servers": {n: {"responses_per_s": rate / 3, "queue_max": 0}
                                                                for n in QUOTAS}},
                "load": {"generator_cpu_cores": generator, "machine_cpu_busy_pct": busy}}
    return a_step(10, "cluster", rate, passed, label="cluster", host_metrics=metrics)


def test_the_harness_cost_is_the_median_of_the_upper_half_of_the_rates():
    steps = [cluster_step(500, (20, 20, 20), 30, haproxy=0.1, generator=0.1),  # fixed costs weigh: left out
             cluster_step(3000, (40, 40, 40), 60, haproxy=0.27, generator=0.18),
             cluster_step(4000, (50, 55, 60), 75, haproxy=0.35, generator=0.25),
             cluster_step(5000, (60, 60, 60), 90, passed=False)]  # failed: not a rate the harness carried
    ms, used = testbed_ceiling.ms_per_request(steps)
    assert used == 2 and ms == 0.15  # (0.45/3000 + 0.6/4000) / 2 ms
    # Far below what the direct check carried, the run's steps do not price a request: the direct check does.
    assert testbed_ceiling.ms_per_request(steps, direct_rps=8000) == (0.15, 2)
    assert testbed_ceiling.ms_per_request(steps[:1], direct_rps=8000) == (None, 0)


def test_the_ceiling_is_the_cores_the_quotas_leave_over_the_cost_per_request():
    ceiling = Ceiling(2, QUOTAS, 0.15, "this run's 2 steps")
    assert ceiling.cores_left == 0.8 and ceiling.rps == 5333.3
    assert ceiling.beside(("node1",)).rps == 10000.0  # a node alone: the others idle
    assert "about 5333.3/s beside the nodes" in ceiling.sentence() and "leave 0.8 of 2 cores" in ceiling.sentence()
    assert Ceiling(2, {**QUOTAS, "node3": 0.0}, 0.15, "").rps is None  # a node without a quota may take it all
    assert Ceiling(None, QUOTAS, 0.15, "").rps is None  # the machine's cores unknown (not one machine)
    assert "no one machine's cores are counted" in Ceiling(None, QUOTAS, 0.15, "").sentence()
    assert "MONITOR=on" in Ceiling(2, QUOTAS, None, "").sentence()
    # The direct check carried 7998/s with the nodes idle and failed above: no ceiling beside them is higher.
    capped = Ceiling(2, QUOTAS, 0.1, "x", carried_rps=7998.2)
    assert capped.by_cpu_rps == 8000.0 and capped.rps == 7998.2
    assert "no more than the direct check carried with the nodes idle, 7998.2/s" in capped.sentence()


def test_unsaturated_nodes_on_a_busy_machine_mark_the_cluster_testbed_bound():
    # The trial: the cluster at 4107/s with its nodes at 51-63 % of their quotas, the machine 76.6 % busy.
    at = cluster_step(4107, (51, 57, 63), 76.6)
    mark = testbed_ceiling.judge("cluster", 4107, at, Ceiling(2, QUOTAS, 0.3, "x"))  # a ceiling far above: 2666.7/s
    assert mark["rule"] == "ceiling" and mark["sentence"].startswith(
        "cluster's 4107/s is this machine's ceiling, not the application's: above this machine's ceiling")
    mark = testbed_ceiling.judge("cluster", 4107, at, Ceiling(2, QUOTAS, 0.1, "x"))  # one far below: 8000/s
    assert mark["rule"] == "unsaturated"
    assert mark["sentence"].startswith("cluster's 4107/s is this machine's ceiling, not the application's")
    assert "CPU 51–63 %" in mark["sentence"] and "76.6 % busy" in mark["sentence"]
    assert "0.61 core, 76 % of the 0.8 core the nodes' quotas leave" in mark["sentence"]
    assert "BACKEND=swarm" in mark["remedy"] and mark["figures"]["harness_cores"] == 0.61


def test_the_mark_names_the_balancer_where_haproxy_took_most_of_the_harness_s_cores():
    from capbench.analysis.hints import testbed_hint
    ceiling = Ceiling(2, QUOTAS, 0.15, "x")  # 5333.3/s
    at = cluster_step(4300, (60, 60, 60), 60, haproxy=0.5, generator=0.2)
    by_balancer = testbed_ceiling.judge("cluster", 4300, at, ceiling)
    assert by_balancer["figures"]["paced_by"] == "balancer"
    assert by_balancer["sentence"].endswith("HAProxy took 0.50 core of it, the generator 0.20: the balancer, more "
                                            "than the generator, sets this ceiling")
    assert testbed_hint(by_balancer).text.startswith("testbed-bound (the balancer pacing) — cluster's 4300/s")
    at = cluster_step(4300, (60, 60, 60), 60, haproxy=0.2, generator=0.5)
    by_generator = testbed_ceiling.judge("cluster", 4300, at, ceiling)
    assert by_generator["figures"]["paced_by"] == "generator" and "sets this ceiling" not in by_generator["sentence"]
    assert testbed_hint(by_generator).text.startswith("testbed-bound — ")


def test_a_saturated_node_is_the_application_s_limit_however_busy_the_machine():
    # The Grinder: node3 at its quota paces the cluster; the machine is busy with the nodes' own work.
    at = cluster_step(1115, (80, 82, 96), 78, haproxy=0.1, generator=0.07)
    assert testbed_ceiling.judge("cluster", 1115, at, Ceiling(2, QUOTAS, 0.15, "x")) is None
    # No rule fired on a busy machine, but the generator and HAProxy took a fifth of what the nodes leave: the
    # machine was busy with the nodes' work.
    at = cluster_step(1115, (80, 80, 80), 78, haproxy=0.1, generator=0.07)
    assert testbed_ceiling.judge("cluster", 1115, at, Ceiling(2, QUOTAS, 0.15, "x")) is None


def test_a_quiet_machine_with_unsaturated_nodes_is_not_marked():
    at = cluster_step(1000, (40, 40, 40), 45)  # e.g. a lock or an I/O wait no rule sees: not the testbed
    assert testbed_ceiling.judge("cluster", 1000, at, Ceiling(2, QUOTAS, 0.15, "x")) is None


def test_near_the_ceiling_is_testbed_bound_unless_the_state_bound_it():
    ceiling = Ceiling(2, QUOTAS, 0.15, "x")  # 5333.3/s
    at = cluster_step(4300, (60, 60, 60), 60)  # within 25 % of the ceiling, the machine not yet busy
    mark = testbed_ceiling.judge("cluster", 4300, at, ceiling)
    assert mark["rule"] == "ceiling" and "within 25 % of this machine's ceiling" in mark["sentence"]
    assert testbed_ceiling.judge("cluster", 3900, at, ceiling) is None  # further below it: not near
    assert testbed_ceiling.judge("cluster", 4300, at, ceiling, state_bound=True) is None


def test_e_not_measured_says_what_the_sum_needs_and_what_is_left():
    mark = {"cluster": {"figures": {"capacity_rps": 4107}}}
    text = testbed_ceiling.efficiency_not_measured(7550, 4107, Ceiling(2, QUOTAS, 0.15, "x"), mark)
    assert text == ("not measured: cluster's 4107/s is this machine's ceiling, not the application's; ΣX_i 7550/s "
                    "needs about 1.13 cores of balancer and generator, 0.8 are left (the figures would give E 0.544)")


def test_a_recorded_run_marks_its_cluster_and_none_of_its_saturated_nodes():
    # WireMock's JAR, make bench-cluster QUICK=1 on 2026-12-01: each step at a target's capacity, as steps.jsonl
    # kept it. Alone each node used 93-98 % of its quota; the cluster's 8132/s left them at 66-78 % while the
    # generator and HAProxy took 0.73 core on a machine 89 % busy. The run's steps gave 0.1316 ms a request.
    steps = {r.label: r for r in read_steps(DATA / "wiremock-cluster-steps.jsonl")}
    ceiling = Ceiling(2, QUOTAS, 0.1316, "this run's 17 steps")
    for node in QUOTAS:
        at = steps[node]
        assert testbed_ceiling.judge(node, at.result.offered_rps, at, ceiling.beside((node,))) is None, node
    mark = testbed_ceiling.judge("cluster", 8132.0, steps["cluster"], ceiling)
    assert mark["rule"] == "ceiling" and mark["figures"]["harness_cores"] == 0.728
    assert mark["sentence"] == ("cluster's 8132/s is this machine's ceiling, not the application's: above this "
                                "machine's ceiling beside its nodes, about 6079/s (the generator and HAProxy took "
                                "0.73 core; the nodes' quotas leave 0.8 core; the machine was 89.1 % busy); HAProxy "
                                "took 0.42 core of it, the generator 0.31: the balancer, more than the generator, "
                                "sets this ceiling")
    assert mark["figures"]["paced_by"] == "balancer"


def machine(name: str, cpus: float, *hosts: str) -> dict:
    return {"name": name, "cpus": cpus, "hosts": list(hosts)}


HARNESS = ("lb", "load")
ONE_MACHINE = [machine("this machine", 2, "node1", "node2", "node3", "lb", "load", "controller")]


def test_on_one_machine_every_host_shares_its_cores():
    """Compose, or the swarm lab's engines under one kernel: the ceiling of Ceiling's own figures."""
    steps = [cluster_step(3000, (40, 40, 40), 60, haproxy=0.27, generator=0.18),
             cluster_step(4000, (50, 55, 60), 75, haproxy=0.35, generator=0.25)]

    def price(hosts):
        return testbed_ceiling.ms_per_request(steps, None, hosts)[0]
    found = testbed_ceiling.on_machines(ONE_MACHINE, QUOTAS, HARNESS, price, "x", None)
    assert [c.rps for c in found.machines] == [Ceiling(2, QUOTAS, 0.15, "x").rps] == [5333.3]
    assert found.beside(("node1",)).rps == 10000.0
    assert found.beside(("node1", "node2", "node3")).sentence().startswith("this machine can send and balance")


def test_on_machines_of_their_own_the_balancer_and_load_host_count_their_cores_and_their_share():
    """The issue's item 5: the load host and the balancer on machines of their own, the nodes elsewhere. Each
    machine's ceiling is its cores over the CPU a request of the harness's hosts on it; the lowest binds."""
    steps = [cluster_step(3000, (40, 40, 40), 60, haproxy=0.27, generator=0.18),
             cluster_step(4000, (50, 55, 60), 75, haproxy=0.35, generator=0.25)]
    machines = [machine("m1", 2, "controller"), machine("m2", 1, "node1"), machine("m3", 1, "node2", "node3"),
                machine("m4", 2, "lb"), machine("m5", 2, "load")]

    def price(hosts):
        return testbed_ceiling.ms_per_request(steps, None, hosts)[0]
    found = testbed_ceiling.on_machines(machines, QUOTAS, HARNESS, price, "x", None)
    by_name = {c.machine: c for c in found.machines}
    assert set(by_name) == {"m4", "m5"}  # the others run neither the balancer nor a load host
    # HAProxy: 0.27/3000 and 0.35/4000 cores → 0.0887 ms a request (the median); 2 cores of its own: 22547.9/s.
    assert by_name["m4"].ms_per_request == 0.0887 and by_name["m4"].rps == 22547.9 and by_name["m4"].quotas == {}
    assert by_name["m5"].ms_per_request == 0.0612 and by_name["m5"].rps == 32679.7
    cluster = found.beside(("node1", "node2", "node3"))
    assert cluster.machine == "m4" and "m4 can send and balance about 22547.9/s" in cluster.sentence()
    # The cluster's 4000/s on unsaturated nodes, a machine of 60 % busy: no longer the testbed's ceiling.
    at = cluster_step(4000, (50, 55, 60), 60, haproxy=0.35, generator=0.25)
    assert testbed_ceiling.judge("cluster", 4000, at, cluster) is None


def test_a_lab_on_one_kernel_keeps_the_ceiling_of_this_machine():
    """The swarm lab's engines are containers here: one kernel, so one machine, and the mark stays where the nodes
    still share the cores with the harness."""
    lab = [machine("the machine under lab1, lab2, lab3, lab4, lab5, lab6, lab7", 2, "controller", "node1",
                   "node2", "node3", "load", "lb")]
    found = testbed_ceiling.on_machines(lab, QUOTAS, HARNESS, lambda hosts: 0.15, "x", None)
    cluster = found.beside(("node1", "node2", "node3"))
    assert cluster.rps == 5333.3 and cluster.cores_left == 0.8
    at = cluster_step(4107, (51, 57, 63), 76.6)
    assert testbed_ceiling.judge("cluster", 4107, at, cluster)["rule"] == "ceiling"


def test_cores_not_counted_where_the_machines_are_not_known():
    found = testbed_ceiling.on_machines(None, QUOTAS, HARNESS, lambda hosts: 0.15, "x", None)
    assert found.beside(("node1",)).rps is None
    assert testbed_ceiling.on_machines(ONE_MACHINE, {}, HARNESS, lambda hosts: 0.15, "x", None).beside(
        ("node1",)).rps is None  # the nodes' quotas not read: what they leave is not known either
    assert testbed_ceiling.on_machines([machine("m1", 2, "node1")], QUOTAS, HARNESS, lambda hosts: 0.15, "x",
                                       None).beside(("node1",)).rps is None  # no harness host found on any machine
    assert "no one machine's cores are counted" in found.beside(("node1",)).sentence()


def test_a_duets_slots_stepped_together_are_judged_by_what_the_harness_carried_for_both():
    """A's 2300/s alone is far from a ceiling of 5333.3/s beside the nodes; with B's 2300/s at the same instants
    the generator and HAProxy carried 4600/s, within 25 % of it."""
    at = cluster_step(2300, (50, 55, 60), 60)
    ceiling = Ceiling(2, QUOTAS, 0.15, "x")
    assert testbed_ceiling.judge("A", 2300, at, ceiling) is None
    mark = testbed_ceiling.judge("A", 2300, at, ceiling, alongside={"B": 2300.0})
    assert mark["rule"] == "ceiling" and mark["figures"]["alongside_rps"] == {"B": 2300.0}
    assert "A's 2300/s is this machine's ceiling, not the application's: with B's 2300/s at the same instants, " \
           "within 25 % of this machine's ceiling" in mark["sentence"]
