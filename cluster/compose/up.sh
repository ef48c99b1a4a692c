#!/usr/bin/env bash
# make up on the Compose backend: brings the containers up with the current settings and waits until every
# service is healthy. Services whose settings changed are re-created; images are not rebuilt (make setup
# builds them; the node image with a user's application is cluster/app.sh's); the balancer keeps running while nodes are re-created. On failure, prints the log tail of
# every service that is not healthy and exits non-zero.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
compose=$here/compose.sh
timeout=${UP_TIMEOUT:-300}
# shellcheck source=cluster/load-settings.sh
source "$here/../load-settings.sh"
# The nodes may take APP_START_S each, scaled for the smallest quota (cluster/settings.sh's start_s), if longer.
node_timeout=$timeout
for node in "${CAPBENCH_NODES[@]}"; do
    cpus_var=${node^^}_CPUS
    node_start=$(start_s "${!cpus_var}")
    [ "$node_start" -le "$node_timeout" ] || node_timeout=$node_start
done

# A user's application (APP_WAR): its node image built and tried on a trial node before any node is re-created
# with it; refused (exit 2) with its Tomcat log lines, the cluster untouched. Nothing without one.
"$here/../app.sh" image

missing=$("$compose" config --images | sort -u | while read -r image; do
    docker image inspect "$image" >/dev/null 2>&1 || echo -n "$image "
done)
if [ -n "$missing" ]; then
    echo "capbench: images not built: ${missing}— run make setup" >&2
    exit 1
fi

started=$(date +%s)
# The database (re-)created before the nodes, not waited for (its settings follow theirs: max_connections is
# NODES x DB_POOL_SIZE): new nodes started beside the database about to be re-created would fill their pools from
# it, then hold connections to a host that is gone (each costs a request a validation timeout) or lose one while
# HikariCP sets it up. A starting database refuses connections until it is seeded (db/start), which pools retry.
# The nodes, then, on their own (--no-deps): Compose would otherwise stop and restart the balancer around
# re-created nodes, and Compose 2.29 can crash doing that for several nodes at once (docker/compose#12186).
# This way HAProxy keeps running, with its counters and runtime state, and finds the new nodes by DNS. Each node
# is (re-)created on its own call: re-creating several in one call still failed now and then in 2.29.7 ("The
# container name /<id>_capbench-it-node2-1 is already in use", a tune point's bring-up in CI); one call each
# takes a second or two more, and then all are waited for together, their JVMs starting side by side. Nodes
# beyond NODES (a run with more before) are removed as orphans.
recreate_nodes() {
    local node
    for node in "${CAPBENCH_NODES[@]}"; do
        "$compose" up --detach --no-build --no-deps "$node" || return 1
    done
}
if "$compose" up --detach --no-build --no-deps db \
    && recreate_nodes \
    && "$compose" up --detach --no-build --no-deps --wait --wait-timeout "$node_timeout" "${CAPBENCH_NODES[@]}" \
    && "$compose" up --detach --no-build --remove-orphans --wait --wait-timeout "$timeout"; then
    echo "capbench: all services healthy in $(( $(date +%s) - started )) s"
    exit 0
fi

starting=()
for service in $("$compose" ps --all --format '{{.Service}} {{.Health}} {{.State}}' \
        | awk '$2 != "healthy" {print $1}'); do
    echo "---- $service: last 30 log lines" >&2
    "$compose" logs --no-color --tail 30 "$service" >&2 || true
    if [[ " ${CAPBENCH_NODES[*]} " == *" $service "* ]]; then
        cpus_var=${service^^}_CPUS
        starting+=("$service ($(tomcat_doing "$("$compose" logs --no-color "$service" 2>&1)" "$node_timeout"), its" \
            "CPU quota ${!cpus_var})")
    fi
done
if [ ${#starting[@]} -gt 0 ]; then
    echo "capbench: not healthy within $node_timeout s: ${starting[*]}; give the nodes longer with APP_START_S" \
        "(now $APP_START_S s for half a core), then make up again" >&2
    exit 2
fi
echo "capbench: the cluster did not become healthy within $timeout s" >&2
exit 1
