# shellcheck shell=bash
# The hosts of a bench for the shell scripts, from cluster/topology.env (the one list): CAPBENCH_NODES, the
# nodes; CAPBENCH_HOSTS, every host; CAPBENCH_MONITORED, the hosts the controller logs. Sourced.
mapfile -t CAPBENCH_NODES < <(sed -n 's/^NODES=//p' "$(dirname "${BASH_SOURCE[0]}")/topology.env" | tr ' ' '\n' | sed '/^$/d')
CAPBENCH_HOSTS=("${CAPBENCH_NODES[@]}" lb load controller)
CAPBENCH_MONITORED=("${CAPBENCH_NODES[@]}" lb load)
