#!/usr/bin/env bash
# The cluster's settings, resolved by one rule: a value in the environment (e.g. `make up TOMCAT_MAX_THREADS=16`)
# wins over the profile (cluster/profiles/$PROFILE.env, PROFILE=small by default), which wins over the Tomcat
# tunables (tomcat-conf/tunables.env) and the application (cluster/app.env), which win over the stats
# credentials (.capbench/secrets.env). Every
# value is checked (cluster/settings.sh), so a bad one stops here with a message, exit 2, instead of
# half-starting the cluster.
#   source cluster/load-settings.sh     puts them into the environment (cluster/compose/compose.sh, vagrant/up.sh)
#   cluster/load-settings.sh print      prints the profile's, the tunables' and the application's keys as KEY=value
#                                       lines, resolved, and GRINDER_PATH
#                                       (the harness reads the cluster's settings this way: capbench/hosts/cluster_settings.py);
#                                       never the credentials
#   cluster/load-settings.sh environment
#                                       prints the environment it resolved, NUL-separated, never the credentials:
#                                       a command resolves once and runs every process in that environment
#                                       (capbench/hosts/cluster_settings.py's resolved_environment), marked with
#                                       CAPBENCH_RESOLVED, which this script then finds and does not resolve again
#   CAPBENCH_SETTINGS_TRACE=FILE        appends a line to FILE for each resolution ("resolved") and each reuse
#                                       ("reused"): how many a command made (tests/config/test_resolved_once.py)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=cluster/settings.sh
source "$root/cluster/settings.sh"
# shellcheck source=cluster/topology.sh
source "$root/cluster/topology.sh"

PROFILE=${PROFILE:-small}
profile_file=$root/cluster/profiles/$PROFILE.env
if [[ ! $PROFILE =~ ^[a-z0-9_-]+$ ]] || [ ! -f "$profile_file" ]; then
    allowed=$(find "$root/cluster/profiles" -name '*.env' -printf '%f\n' | sed 's/\.env$//' | sort | paste -sd, - \
        | sed 's/,/, /g')
    echo "capbench: PROFILE='$PROFILE' is not a profile: use one of $allowed (files in cluster/profiles/)" >&2
    exit 2
fi
# Created once (idempotent): a checkout from before the database gets its password here.
secrets_file=$("$root/cluster/secrets.sh")
# The credentials' keys, as a pattern: never in the mark below, nor in the environment printed.
secret_keys=$(settings_keys "$secrets_file" | paste -sd'|' -)

# The mark of an environment this script resolved (capbench/hosts/cluster_settings.py's mark computes the same):
# the sha256 of its variables as sorted KEY=VALUE lines, NUL-separated, but for those a shell or make sets on its
# own, the mark's own and the credentials.
settings_mark() {
    env -0 | grep -zvE "^(PWD|OLDPWD|SHLVL|_|MAKELEVEL|MAKEFLAGS|MFLAGS|MAKEOVERRIDES|MAKE_TERMOUT|MAKE_TERMERR|CAPBENCH_RESOLVED|CAPBENCH_RESOLVED_ADDED|CAPBENCH_SETTINGS_TRACE|BASH_FUNC_[^=]*${secret_keys:+|$secret_keys})=" \
        | LC_ALL=C sort -z | sha256sum | cut -d' ' -f1
}

if [ -n "${CAPBENCH_RESOLVED-}" ] && [ "$(settings_mark)" = "$CAPBENCH_RESOLVED" ]; then
    # Resolved and checked already for this very environment by the command that runs this script: only the
    # credentials, which that environment never holds, are read.
    settings_load_file "$secrets_file"
    [ -z "${CAPBENCH_SETTINGS_TRACE-}" ] || echo "reused $$ ${0##*/}" >>"$CAPBENCH_SETTINGS_TRACE"
else
    [ -z "${CAPBENCH_SETTINGS_TRACE-}" ] || echo "resolved $$ ${0##*/}" >>"$CAPBENCH_SETTINGS_TRACE"
    settings_load_file "$profile_file"
    settings_load_file "$root/tomcat-conf/tunables.env"
    settings_load_file "$root/cluster/app.env"
    settings_load_file "$secrets_file"
    settings_fill_nodes "${CAPBENCH_NODES[@]}"
    # BENCH_NET_PREFIX: the bench network is $BENCH_NET_PREFIX.0/24, fixed so that each host's pmcd can admit
    # exactly that network (the controller) and nothing else. Compose's is 10.89.0, the Vagrantfile's 10.89.2.
    export PROFILE STATS_PORT=${STATS_PORT:-8404} BENCH_NET_PREFIX=${BENCH_NET_PREFIX:-10.89.0}
    # DATA_NET_PREFIX: the nodes' network to the database, beside the bench network (10.89.0 → 10.90.0), so each
    # cluster's pair of networks differs from another's as their bench networks do.
    if [ -z "${DATA_NET_PREFIX:-}" ] && [[ $BENCH_NET_PREFIX =~ ^([0-9]+)\.([0-9]+)\.([0-9]+)$ ]]; then
        DATA_NET_PREFIX=${BASH_REMATCH[1]}.$(( (BASH_REMATCH[2] + 1) % 256 )).${BASH_REMATCH[3]}
fi
# Empty only when BENCH_NET_PREFIX is wrong, which its own check reports.
export DATA_NET_PREFIX=${DATA_NET_PREFIX-}
# With an application (APP_WAR) the nodes run an image of their own, built from the node image with the
# application in it (cluster/app.sh), and the Grinder moves from / to /capbench (cluster/provision/node.sh): where
# the harness finds its /info, /health and /grind is GRINDER_PATH. With an executable JAR (APP_JAR) the nodes run it
# instead of Tomcat, and there is no Grinder (GRINDER_PATH=none). What the health checks ask: APP_HEALTH, by
# default the Grinder's /health without an application and the application's root with one.
# Each cluster (a Compose project; the Swarm stack and the VMs are named as one) stages its application and
# tags its node image apart (APP_STAGED, capbench-node-app:PROJECT), so two clusters on one machine never run
# each other's application.
APP_PROJECT=${COMPOSE_PROJECT_NAME:-capbench}
export APP_STAGED=$root/.capbench/app/$APP_PROJECT
if [ -n "${APP_WAR-}" ]; then
    CAPBENCH_NODE_IMAGE=capbench-node-app:$APP_PROJECT GRINDER_PATH=/$APP_CONTEXT_RESERVED
    [ "${APP_CONTEXT-}" = ROOT ] && app_root=/ || app_root=/${APP_CONTEXT-}/
    APP_HEALTH=${APP_HEALTH:-$app_root}
elif [ -n "${APP_JAR-}" ]; then
    CAPBENCH_NODE_IMAGE=capbench-node-app:$APP_PROJECT GRINDER_PATH=none
    APP_HEALTH=${APP_HEALTH:-/}
else
    CAPBENCH_NODE_IMAGE=capbench-node:latest GRINDER_PATH=
    APP_HEALTH=${APP_HEALTH:-/health}
fi
export CAPBENCH_NODE_IMAGE GRINDER_PATH APP_HEALTH
# Whether the nodes open their TLS connector (TLS=both: the balancer re-encrypts to it; node: the client's TLS is
# passed through to it). A setting of its own, so that TLS=off ↔ lb, and both ↔ node, re-create the balancer
# alone, not the nodes.
case ${TLS-} in both | node) NODE_TLS=1 ;; *) NODE_TLS=0 ;; esac
export NODE_TLS
# The hosts, for the controller's health check (compose.yaml).
export CAPBENCH_NODES_LIST="${CAPBENCH_NODES[*]}" CAPBENCH_MONITORED_LIST="${CAPBENCH_MONITORED[*]}"

check_profile "${CAPBENCH_NODES[@]}"
check_tunables
check_app
check_int STATS_PORT 0 65535
check_net_prefix BENCH_NET_PREFIX
[ -z "$DATA_NET_PREFIX" ] || check_net_prefix DATA_NET_PREFIX
if [ "$DATA_NET_PREFIX" = "$BENCH_NET_PREFIX" ]; then
    settings_error "DATA_NET_PREFIX='$DATA_NET_PREFIX' is not allowed: the data network must differ from the bench network"
fi
# The database admits every node's whole pool: one PostgreSQL process per connection, within compose.yaml's
# pids_limit (1024) with room for PostgreSQL's own and pmcd's. With an application a node has two pools of
# DB_POOL_SIZE: the Grinder's (HikariCP, which opens its connections when the node starts) and the DataSource
# Tomcat offers the application (tomcat-conf/render-config.sh). A JAR (APP_JAR) has its own pool alone, counted
# as one of DB_POOL_SIZE (HikariCP's default size, as DB_POOL_SIZE's).
DB_MAX_CONNECTIONS=0 pools_per_node=1
[ -z "${APP_WAR-}" ] || pools_per_node=2
[[ ${DB_POOL_SIZE-} =~ ^[1-9][0-9]{0,2}$ ]] \
    && DB_MAX_CONNECTIONS=$(( ${#CAPBENCH_NODES[@]} * DB_POOL_SIZE * pools_per_node ))
export DB_MAX_CONNECTIONS
if [ "$DB_MAX_CONNECTIONS" -gt 960 ]; then
    settings_error "DB_POOL_SIZE='$DB_POOL_SIZE' is not allowed with ${#CAPBENCH_NODES[@]} nodes and $pools_per_node" \
        "pool(s) each: the database would hold $DB_MAX_CONNECTIONS connections, a process each; at most 960 in all"
fi
settings_report || exit 2
export_start_windows "${CAPBENCH_NODES[@]}"
fi

if [ "${BASH_SOURCE[0]}" = "$0" ] && [ "${1:-}" = environment ]; then
    env -0 | grep -zvE "^(${secret_keys:-CAPBENCH_NO_SECRET})="
    exit 0
fi
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    [ "${1:-}" = print ] || { echo "usage: $0 print|environment  (or source it)" >&2; exit 2; }
    # The nodes' keys for the nodes there are (not the profile's NODE_CPUS … defaults, nor its other nodes'), the
    # rest as the files name them (NODE_HTTP among them; run.json lists the nodes).
    for key in $(settings_keys "$profile_file" "$root/tomcat-conf/tunables.env" "$root/cluster/app.env" \
            | grep -Ev "^NODE[0-9]*_($(IFS='|'; echo "${NODE_FIELDS[*]}"))\$") GRINDER_PATH; do
        printf '%s=%s\n' "$key" "${!key-}"
    done
    for node in "${CAPBENCH_NODES[@]}"; do
        for field in "${NODE_FIELDS[@]}"; do
            key=${node^^}_$field
            printf '%s=%s\n' "$key" "${!key-}"
        done
    done
fi
