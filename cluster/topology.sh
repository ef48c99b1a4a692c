# shellcheck shell=bash
# The hosts of a bench for the shell scripts, from cluster/topology.env (the one place): CAPBENCH_NODES, the
# nodes (node1 … nodeN, N from NODES in the environment or the file's default); CAPBENCH_LOADS, the load hosts
# (load, load2 … loadN, from LOAD_HOSTS the same way); CAPBENCH_HOSTS, every host; CAPBENCH_MONITORED, the hosts
# the controller logs. Sourced; a bad NODES or LOAD_HOSTS stops the script (exit 2).
_topology_file="$(dirname "${BASH_SOURCE[0]}")/topology.env"

# _topology_count KEY WHAT: the count KEY sets (environment, else the file), checked against MAX_KEY.
_topology_count() {
    local count most
    most=$(sed -n "s/^MAX_$1=//p" "$_topology_file")
    count=${!1:-$(sed -n "s/^$1=//p" "$_topology_file")}
    if ! [[ $count =~ ^[1-9][0-9]*$ ]] || [ "$count" -gt "$most" ]; then
        echo "capbench: $1='$count' is not allowed: use a number of $2 from 1 to $most" >&2
        exit 2
    fi
    echo "$count"
}
_topology_nodes=$(_topology_count NODES nodes) || exit 2
_topology_loads=$(_topology_count LOAD_HOSTS "load hosts") || exit 2
CAPBENCH_NODES=()
for ((_topology_i = 1; _topology_i <= _topology_nodes; _topology_i++)); do
    CAPBENCH_NODES+=("node$_topology_i")
done
CAPBENCH_LOADS=(load)
for ((_topology_i = 2; _topology_i <= _topology_loads; _topology_i++)); do
    CAPBENCH_LOADS+=("load$_topology_i")
done
CAPBENCH_HOSTS=("${CAPBENCH_NODES[@]}" lb "${CAPBENCH_LOADS[@]}" controller)
CAPBENCH_MONITORED=("${CAPBENCH_NODES[@]}" lb "${CAPBENCH_LOADS[@]}")
unset -f _topology_count
unset _topology_file _topology_nodes _topology_loads _topology_i
