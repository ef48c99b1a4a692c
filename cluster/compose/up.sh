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
# The nodes may take their start windows (cluster/settings.sh's export_start_windows: APP_START_S for each quota),
# which their health checks honour as Compose's start period; and then the three failed checks (3 s apart) that
# make Docker call one unhealthy, so that Docker's verdict on a node that never answers comes first.
node_timeout=$(( CAPBENCH_START_S + 15 ))
[ "$node_timeout" -ge "$timeout" ] || node_timeout=$timeout

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
# While the nodes start, every 20 s: which are not healthy yet, and how long they have been
# waited for. Every node is waited for, whichever a bench measures: the first warm-up goes through all of them,
# and on one machine a node measured while the others still deploy would share the cores with their start.
say_starting() {
    local since=$1 starting
    while sleep 20 >/dev/null 2>&1 </dev/null; do
        starting=$("$compose" ps --all --format '{{.Service}} {{.Health}}' "${CAPBENCH_NODES[@]}" 2>/dev/null \
            | awk '$2 != "healthy" {print $1}' | paste -sd' ' -) || true
        [ -z "$starting" ] || echo "capbench: still starting: ${starting// /, } ($(( $(date +%s) - since )) s" \
            "waited, up to $node_timeout s)"
    done
}
wait_for_nodes() {
    local reporter code=0
    nodes_started=$(date +%s)
    say_starting "$nodes_started" &
    reporter=$!
    "$compose" up --detach --no-build --no-deps --wait --wait-timeout "$node_timeout" "${CAPBENCH_NODES[@]}" \
        || code=$?
    kill "$reporter" 2>/dev/null || true
    wait "$reporter" 2>/dev/null || true
    [ "$code" -eq 0 ] || waited=$(( $(date +%s) - nodes_started ))
    return "$code"
}
waited=
if "$compose" up --detach --no-build --no-deps db \
    && recreate_nodes \
    && wait_for_nodes \
    && "$compose" up --detach --no-build --remove-orphans --wait --wait-timeout "$timeout"; then
    echo "capbench: all services healthy in $(( $(date +%s) - started )) s"
    exit 0
fi

# What was waited for the nodes (from their start: their own step), else since the bring-up began.
waited=${waited:-$(( $(date +%s) - started ))}
starting=()
for service in $("$compose" ps --all --format '{{.Service}} {{.Health}} {{.State}}' \
        | awk '$2 != "healthy" {print $1}'); do
    echo "---- $service: last 30 log lines" >&2
    "$compose" logs --no-color --tail 30 "$service" >&2 || true
    if [[ " ${CAPBENCH_NODES[*]} " == *" $service "* ]]; then
        cpus_var=${service^^}_CPUS
        start_var=${service^^}_START_S
        starting+=("$service ($(tomcat_doing "$("$compose" logs --no-color "$service" 2>&1)" "$waited")," \
            "its CPU quota ${!cpus_var}, its start window ${!start_var} s)")
    fi
done
if [ ${#starting[@]} -gt 0 ]; then
    echo "capbench: not healthy after $waited s: ${starting[*]}; give the nodes longer with" \
        "APP_START_S (now ${APP_START_S:-90} s for half a core), then make up again" >&2
    exit 2
fi
echo "capbench: the cluster did not become healthy within $timeout s" >&2
exit 1
