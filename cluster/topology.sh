# shellcheck shell=bash
# The hosts of a bench for the shell scripts, by the harness's one rule (capbench/hosts/topology.py, over
# cluster/topology.env): CAPBENCH_NODES, the nodes (node1 … nodeN, N from NODES in the environment or the file's
# default); CAPBENCH_LOADS, the load hosts (load, load2 … loadN, from LOAD_HOSTS the same way); CAPBENCH_HOSTS,
# every host; CAPBENCH_MONITORED, the hosts the controller logs. Sourced; a bad NODES or LOAD_HOSTS stops the
# script (exit 2) with the harness's line. The machine's own Python, standard library only, as make runs it.
_topology_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
_topology=$(PYTHONPATH="$_topology_root${PYTHONPATH:+:$PYTHONPATH}" python3 -s -m capbench.hosts.topology) || exit 2
read -r -a CAPBENCH_NODES <<<"${_topology%%$'\n'*}"
read -r -a CAPBENCH_LOADS <<<"${_topology#*$'\n'}"
CAPBENCH_HOSTS=("${CAPBENCH_NODES[@]}" lb "${CAPBENCH_LOADS[@]}" controller)
CAPBENCH_MONITORED=("${CAPBENCH_NODES[@]}" lb "${CAPBENCH_LOADS[@]}")
unset _topology_root _topology
