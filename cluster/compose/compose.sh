#!/usr/bin/env bash
# Runs `docker compose` on compose.yaml with the capbench settings in its environment (cluster/load-settings.sh:
# the profile, the Tomcat tunables and the stats credentials, all validated first), and with the nodes: compose.yaml
# describes one (service `node`), rendered here once per node of NODES into .capbench/compose/nodes-N-load-L.yaml
# (each node's own hostname and profile values; the balancer's list of servers, their weights and maxconn, and
# its wait for every node), with the load hosts beyond the first (load2 … loadL of LOAD_HOSTS, as `load` is).
#   cluster/compose/compose.sh ps       cluster/compose/compose.sh exec load curl -s http://lb:8080/grind
set -euo pipefail
# shellcheck source=cluster/load-settings.sh
source "$(dirname "${BASH_SOURCE[0]}")/../load-settings.sh"

# The nodes' file refers to the values by name (Compose fills them in from the environment), so it depends on
# the numbers of nodes and load hosts alone. The nodes' image too: capbench-node, or with a user's application
# capbench-node-app (CAPBENCH_NODE_IMAGE, cluster/load-settings.sh), which the Swarm stack takes from here as well
# (capbench/hosts/stack.py reads this file's resolved form); a duet's slot may run another build of the application
# (NODE1_IMAGE, NODE2_IMAGE: capbench/duet/builds.py, cluster/app.sh build). `make images` builds with no application, so
# Compose's build of the node (compose.yaml) is always capbench-node's; cluster/app.sh builds the others.
render_nodes() {
    local node upper load key tunable_keys
    mapfile -t tunable_keys < <(settings_keys "$root/tomcat-conf/tunables.env")
    echo "# Rendered by cluster/compose/compose.sh from compose.yaml's service node: do not edit."
    echo "services:"
    for node in "${CAPBENCH_NODES[@]}"; do
        upper=${node^^}
        cat <<NODE
  $node:
    extends: {file: $root/compose.yaml, service: node}
    profiles: !reset []
    image: \${${upper}_IMAGE:-\${CAPBENCH_NODE_IMAGE:?}}
    hostname: $node
    cpus: \${${upper}_CPUS:?}
    mem_limit: \${${upper}_MEM:?}
    healthcheck:
      # Its start window (cluster/settings.sh's export_start_windows): Docker counts no failed check before it.
      start_period: \${${upper}_START_S:?}s
    # Its own TLS certificate and key (cluster/tls.sh), read by its tomcat user alone where TLS=both.
    secrets: [db_password, {source: ${node}_tls, target: node_tls}]
    environment:
      NODE_NAME: $node
      JVM_HEAP: \${${upper}_HEAP:?}
      JVM_GC: \${${upper}_GC:?}
NODE
        # The Tomcat tunables are every node's (compose.yaml), unless a duet's build gives its slot its own
        # (NODE1_TOMCAT_MAX_THREADS: capbench/duet/builds.py).
        for key in "${tunable_keys[@]}"; do
            echo "      $key: \${${upper}_$key:-\${$key-}}"
        done
    done
    echo "  lb:"
    echo "    environment:"
    echo "      LB_NODES: ${CAPBENCH_NODES[*]}"
    for node in "${CAPBENCH_NODES[@]}"; do
        upper=${node^^}
        echo "      ${upper}_WEIGHT: \${${upper}_WEIGHT:?}"
        echo "      ${upper}_MAXCONN: \${${upper}_MAXCONN:?}"
    done
    echo "    depends_on:"
    for node in "${CAPBENCH_NODES[@]}"; do
        echo "      $node: {condition: service_healthy}"
    done
    for load in "${CAPBENCH_LOADS[@]:1}"; do
        echo "  $load:"
        echo "    extends: {file: $root/compose.yaml, service: load}"
        echo "    hostname: $load"
    done
    echo "secrets:"
    for node in "${CAPBENCH_NODES[@]}"; do
        echo "  ${node}_tls:"
        echo "    file: $root/.capbench/tls/$node.pem"
    done
}

# Each node's certificate, made where it is missing (a checkout's first cluster of this many nodes).
"$root/cluster/tls.sh" "${CAPBENCH_NODES[@]}"

nodes_file=$root/.capbench/compose/nodes-${#CAPBENCH_NODES[@]}-load-${#CAPBENCH_LOADS[@]}.yaml
mkdir -p "$(dirname "$nodes_file")"
rendered=$(render_nodes)
# Written only when it changes, and whole (several commands may run at once: tests, make status).
if [ ! -f "$nodes_file" ] || [ "$(cat "$nodes_file")" != "$rendered" ]; then
    tmp=$(mktemp "$nodes_file.XXXXXX")
    printf '%s\n' "$rendered" >"$tmp"
    mv "$tmp" "$nodes_file"
fi

exec docker compose --project-directory "$root" -f "$root/compose.yaml" -f "$nodes_file" "$@"
