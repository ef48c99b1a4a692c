# shellcheck shell=bash
# The hosts of a bench for the shell scripts, from cluster/topology.env (the one place): CAPBENCH_NODES, the
# nodes (node1 … nodeN, N from NODES in the environment or the file's default); CAPBENCH_HOSTS, every host;
# CAPBENCH_MONITORED, the hosts the controller logs. Sourced; a bad NODES stops the script (exit 2).
_topology_file="$(dirname "${BASH_SOURCE[0]}")/topology.env"
_topology_max=$(sed -n 's/^MAX_NODES=//p' "$_topology_file")
_topology_count=${NODES:-$(sed -n 's/^NODES=//p' "$_topology_file")}
if ! [[ $_topology_count =~ ^[1-9][0-9]*$ ]] || [ "$_topology_count" -gt "$_topology_max" ]; then
    echo "capbench: NODES='$_topology_count' is not allowed: use a number of nodes from 1 to $_topology_max" >&2
    exit 2
fi
CAPBENCH_NODES=()
for ((_topology_i = 1; _topology_i <= _topology_count; _topology_i++)); do
    CAPBENCH_NODES+=("node$_topology_i")
done
CAPBENCH_HOSTS=("${CAPBENCH_NODES[@]}" lb load controller)
CAPBENCH_MONITORED=("${CAPBENCH_NODES[@]}" lb load)
unset _topology_file _topology_max _topology_count _topology_i
