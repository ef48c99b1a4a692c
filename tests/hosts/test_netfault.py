"""The network faults' scripts (what nft and tc are asked), when they took effect, and why FAULT=delay is refused
where the kernel has no netem. The faults themselves run for real on Compose and Swarm (tests/integration)."""
from __future__ import annotations

import subprocess

import pytest

from capbench.hosts import netfault
from capbench.hosts.backend import ClusterError, Delay


def completed(code: int = 0, out: str = "", err: str = "") -> subprocess.CompletedProcess:
    return subprocess.CompletedProcess([], code, out.encode(), err.encode())


def test_a_partition_drops_both_directions_of_the_bench_address_and_is_undone_by_its_table():
    inject = netfault.script("partition", "inject", "10.89.0.2")
    assert "ip daddr 10.89.0.2 drop" in inject and "ip saddr 10.89.0.2 drop" in inject
    assert "hook input" in inject and "hook output" in inject
    assert f"table inet {netfault.TABLE}" in inject and inject.rstrip().endswith("date +%s.%N")
    assert f"nft delete table inet {netfault.TABLE}" in netfault.script("partition", "recover", "10.89.0.2")


def test_a_delay_adds_netem_to_the_interface_holding_the_address_and_removes_it():
    inject = netfault.script("delay", "inject", "10.89.0.2", Delay(250, 0.5))
    assert "ip -o -4 addr show to 10.89.0.2" in inject
    assert 'tc qdisc add dev "$dev" root netem delay 250ms loss 0.5%' in inject
    assert 'tc qdisc del dev "$dev" root' in netfault.script("delay", "recover", "10.89.0.2")
    with pytest.raises(ValueError, match="'reboot' is not a network fault"):
        netfault.script("reboot", "inject", "10.89.0.2")


def test_the_change_is_timed_by_the_script_s_own_clock_and_a_failure_says_what_the_tool_said():
    assert netfault.done(completed(out="1800000000.25\n"), "partition", "inject", "node1", 1.0, 2.0).at == 1800000000.25
    with pytest.raises(ClusterError, match="inject partition on node1 failed: Error: Could not process rule"):
        netfault.done(completed(1, err="x\nError: Could not process rule"), "partition", "inject", "node1", 1.0, 2.0)


def test_fault_delay_is_refused_in_one_line_where_the_kernel_has_no_netem():
    assert netfault.why_no_netem(completed(), "node1", "lab2") == ""
    why = netfault.why_no_netem(completed(2, err="Error: Specified qdisc kind is unknown."), "node1", "lab2")
    assert why.startswith("FAULT='delay' cannot run on node1's machine (lab2): its kernel has no netem")
    assert "use FAULT=partition, kill or freeze" in why and "\n" not in why


def test_the_bench_address_is_the_one_on_the_network_named_bench():
    inspected = {"Name": "/n1", "NetworkSettings": {"Networks": {
        "capbench_data": {"IPAddress": "10.90.0.2"}, "capbench_bench": {"IPAddress": "10.89.0.7"}}}}
    assert netfault.bench_address(inspected) == "10.89.0.7"
    with pytest.raises(ClusterError, match="no address on the bench network"):
        netfault.bench_address({"Name": "/n1", "NetworkSettings": {"Networks": {}}})
