#!/usr/bin/env bash
# make up on the Vagrant backend: applies the current settings to the running VMs, as cluster/compose/up.sh has
# Compose do for containers, and waits until every host is healthy. Each role unit whose settings changed is
# restarted (capbench-apply); the others keep running. The checks are the roles' own (vm.sh unhealthy).
#   cluster/vagrant/up.sh            all hosts          cluster/vagrant/up.sh lb      the balancer only
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export BENCH_NET_PREFIX=${BENCH_NET_PREFIX:-${VAGRANT_BENCH_NET:-10.89.2}}
# shellcheck source=cluster/load-settings.sh
source "$here/../load-settings.sh"
# An emulated CPU (the qemu driver, where KVM cannot boot guests) starts a JVM in a 0.3-CPU quota in minutes.
driver=${VAGRANT_LIBVIRT_DRIVER:-$(cat "$here/../../.capbench/vagrant/libvirt-driver" 2>/dev/null || echo kvm)}
timeout=${UP_TIMEOUT:-$([ "$driver" = qemu ] && echo 1200 || echo 300)}
# At least the nodes' longest start window (cluster/settings.sh's export_start_windows: APP_START_S for each quota).
[ "$timeout" -ge "$CAPBENCH_START_S" ] || timeout=$CAPBENCH_START_S
vm() { "$here/vm.sh" exec "$@"; }
say() { echo "capbench: $*" >&2; }

# The hosts with settings to apply: every host but the controller (load-settings.sh read cluster/topology.sh).
applied=("${CAPBENCH_MONITORED[@]}")
hosts=("$@")
[ ${#hosts[@]} -gt 0 ] || hosts=("${applied[@]}")
# Every name checked before any VM is touched.
for host in "${hosts[@]}"; do
    [[ " ${applied[*]} " == *" $host "* ]] || { say "'$host' has no settings to apply: use one of ${applied[*]}"; exit 2; }
done
if ! "$here/vm.sh" running; then
    say "no Vagrant machine is running: vagrant up (or BACKEND=compose)"
    exit 1
fi

# settings_of HOST: the KEY=VALUE lines its unit runs with (compose.yaml's environment for that service).
settings_of() {
    local host=$1 upper=${1^^} key
    echo "PCP_ALLOW_HOSTS=$BENCH_NET_PREFIX.*"
    case $host in
        node*)
            # Every tunable (tomcat-conf/tunables.env names them), as compose.yaml's x-tunables passes them.
            for key in $(settings_keys "$root/tomcat-conf/tunables.env"); do
                echo "$key=${!key-}"
            done
            local heap=${upper}_HEAP gc=${upper}_GC
            echo "NODE_NAME=$host"
            # The session replication's static members (tomcat-conf/render-config.sh).
            echo "CAPBENCH_NODES_LIST=${CAPBENCH_NODES[*]}"
            echo "JVM_HEAP=${!heap}"
            echo "JVM_GC=${!gc}"
            # A user's application (cluster/app.env): its JVM options and health path, and which WAR it is, so
            # that a new WAR (put in place by push_app) restarts the node as a changed setting does.
            for key in APP_CONTEXT APP_JAVA_OPTS APP_JAR_ARGS APP_HEALTH; do echo "$key=${!key-}"; done
            echo "APP_SHA256=$([ -z "$APP_WAR$APP_JAR" ] || cat "$APP_STAGED/sha256")"
            ;;
        lb)
            # The nodes' addresses are fixed on VMs (haproxy.cfg reads them once from /etc/hosts).
            echo "LB_FIXED_ADDRESSES=1"
            echo "LB_LOG_REQUESTS=${LB_LOG_REQUESTS:-0}"
            local node
            for key in LB_BALANCE LB_STICKY NODE_HTTP STATS_USER STATS_PASSWORD APP_HEALTH; do echo "$key=${!key}"; done
            echo "LB_NODES=${CAPBENCH_NODES[*]}"
            for node in "${CAPBENCH_NODES[@]}"; do
                for key in "${node^^}_WEIGHT" "${node^^}_MAXCONN"; do echo "$key=${!key}"; done
            done
            ;;
    esac
}

# limits_of HOST: its CPU quota (% of one CPU, or -) and memory limit (MiB with M) from the profile.
limits_of() {
    local upper=${1^^} cpus mem
    case $1 in
        node*) cpus=${upper}_CPUS mem=${upper}_MEM
            # A quota of 0 is none: the node gets its VM's every CPU.
            echo "$(awk -v c="${!cpus}" 'BEGIN {if (c == 0) print "-"; else printf "%d", c * 100 + 0.5}') $(size_mib "${!mem}")M" ;;
        lb) echo "- $(size_mib "$LB_MEM")M" ;;
        load) echo "- $(size_mib "$LOAD_MEM")M" ;;
    esac
}

# push_app NODE: the node's webapps as the settings want them, by the node's own provisioning step
# (cluster/provision/node.sh app), as the node image with an application is built: the staged WAR and context, or
# JAR and its kind (cluster/app.sh stage), or none (the Grinder back at /). The unit restarts with the settings below.
push_app() {
    if [ -n "$APP_WAR" ]; then
        tar -C "$APP_STAGED" -c -f - app.war context sha256
    elif [ -n "$APP_JAR" ]; then
        tar -C "$APP_STAGED" -c -f - app.jar kind sha256
    else
        tar -c -f - -T /dev/null
    fi | vm "$1" root bash -c \
        'rm -rf /opt/capbench/src/.capbench/app && install -d /opt/capbench/src/.capbench/app &&
         tar -x -f - -C /opt/capbench/src/.capbench/app && /opt/capbench/src/cluster/provision/node.sh app /opt/capbench/src'
}
"$here/../app.sh" stage

started=$(date +%s)
for host in "${hosts[@]}"; do
    role=${host%[0-9]}
    [ "$role" != node ] || push_app "$host" >&2
    # shellcheck disable=SC2046  # two words: quota and memory
    answer=$(settings_of "$host" | vm "$host" root /opt/capbench/bin/capbench-apply "$role" $(limits_of "$host"))
    say "$host: $answer"
done

# The hosts applied to, and with all of them the controller (which checks that it reaches every host).
waiting=("${hosts[@]}")
[ $# -gt 0 ] || waiting+=(controller)
while ! left=$("$here/vm.sh" unhealthy "${waiting[@]}"); do
    if [ $(( $(date +%s) - started )) -ge "$timeout" ]; then
        say "not healthy after $(( $(date +%s) - started )) s (the wait: $timeout s): $left"
        for host in $left; do
            [ "$host" = controller ] && continue
            echo "---- $host: last 30 lines of capbench-${host%[0-9]}" >&2
            vm "$host" root journalctl -u "capbench-${host%[0-9]}" -n 30 --no-pager >&2 || true
        done
        exit 1
    fi
    read -r -a waiting <<<"$left"
    sleep 2
done
say "all hosts healthy in $(( $(date +%s) - started )) s"
