"""A duet's builds and twin slots (load/duet.py): the words a build is made of, refused with what is allowed, and
the slots' nodes re-created only when a build needs other settings than they run with."""
from __future__ import annotations

import pytest

from load.duet import Twins, build, node_problems, parse_words

SMALL = {"NODE1_CPUS": "0.5", "NODE1_MEM": "768m", "NODE1_HEAP": "320m", "NODE1_GC": "auto", "NODE1_MAXCONN": "0",
         "NODE2_CPUS": "0.4", "NODE2_MEM": "640m", "NODE2_HEAP": "256m", "NODE2_GC": "auto", "NODE2_MAXCONN": "0"}


def test_a_build_is_a_variant_and_node_settings():
    made = build("B", "VARIANT=v1 CPUS=0.43 GC=zgc")
    assert (made.variant, made.node, made.describe()) == ("v1", {"CPUS": "0.43", "GC": "zgc"}, "VARIANT=v1 CPUS=0.43 GC=zgc")
    assert build("A", "").describe() == "as configured" and build("A", "").node == {}


@pytest.mark.parametrize("text, said", [
    ("VARIANT=v9", "VARIANT=v9: use one of v1, v1-nosync, v2, v3"),
    ("THREADS=4", "'THREADS=4' is not a build word: KEY=VALUE with KEY one of VARIANT, CPUS, MEM, HEAP, GC"),
    ("CPUS=0.4 CPUS=0.5", "'CPUS=0.5' is not a build word"),
    ("CPUS", "'CPUS' is not a build word")])
def test_bad_words_are_refused_with_what_is_allowed(text, said):
    with pytest.raises(ValueError, match=said.replace("(", r"\(")):
        parse_words(text)


def test_node_values_are_judged_by_the_clusters_own_rules():
    [problem] = node_problems(build("A", ""), build("B", "CPUS=lots"))
    assert problem.startswith("DUET_B: NODE1_CPUS='lots' is not allowed: use a CPU quota in cores")


def test_twins_take_node1s_settings_and_recreate_only_what_differs():
    made: list[tuple[tuple, dict]] = []
    twins = Twins(SMALL, lambda nodes, env: made.append((nodes, env)))
    a, b = build("A", ""), build("B", "CPUS=0.43")
    assert twins.place({"node1": a, "node2": b})  # node2 differs: both re-created at once, so both JVMs are as young
    assert made == [(("node1", "node2"), {
        "NODE1_CPUS": "0.5", "NODE1_MEM": "768m", "NODE1_HEAP": "320m", "NODE1_GC": "auto", "NODE1_MAXCONN": "0",
        "NODE2_CPUS": "0.43", "NODE2_MEM": "768m", "NODE2_HEAP": "320m", "NODE2_GC": "auto", "NODE2_MAXCONN": "0"})]
    made.clear()
    assert not twins.place({"node1": a, "node2": b})  # already so: nothing re-created
    assert twins.place({"node1": b, "node2": a})  # swapped: both
    assert [nodes for nodes, _ in made] == [("node1", "node2")] and made[0][1]["NODE1_CPUS"] == "0.43"
    made.clear()
    assert twins.place({"node1": a, "node2": b}) and len(made) == 1
    made.clear()
    assert not twins.place({"node1": a, "node2": b}) and twins.place({"node1": a, "node2": b}, fresh=True)
    assert [nodes for nodes, _ in made] == [("node1", "node2")]  # a duet's start: both anew, as young
    made.clear()
    twins.restore()  # node1 runs as the cluster says: only node2 goes back
    assert made == [(("node2",), {"NODE2_CPUS": "0.4", "NODE2_MEM": "640m", "NODE2_HEAP": "256m", "NODE2_GC": "auto",
                                  "NODE2_MAXCONN": "0"})]


def test_builds_that_differ_in_cpus_alone_swap_by_changing_the_running_quotas():
    made, set_live = [], []
    twins = Twins(SMALL, lambda nodes, env: made.extend(nodes),
                  lambda node, cpus: set_live.append((node, cpus)) is None)
    a, b = build("A", ""), build("B", "CPUS=0.43")
    assert twins.place({"node1": a, "node2": b}, fresh=True) and made == ["node1", "node2"]
    assert not twins.place({"node1": b, "node2": a})  # swapped: the quotas change, the JVMs stay
    assert set_live == [("node1", "0.43"), ("node2", "0.5")] and made == ["node1", "node2"]
    set_live.clear()
    twins.restore()  # node1 back to 0.5 while running; node2's memory and heap differ: re-created
    assert set_live == [("node1", "0.5")] and made == ["node1", "node2", "node2"]


def test_where_quotas_cannot_change_while_running_the_nodes_are_re_created():
    made = []
    twins = Twins(SMALL, lambda nodes, env: made.extend(nodes))
    twins.place({"node1": build("A", ""), "node2": build("B", "CPUS=0.43")}, fresh=True)
    assert twins.place({"node1": build("B", "CPUS=0.43"), "node2": build("A", "")})
    assert made == ["node1", "node2", "node1", "node2"]
