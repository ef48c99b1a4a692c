#!/usr/bin/env bash
# The Vagrant machines, seen from the host, without `vagrant ssh`'s second of Ruby per command:
#   vm.sh running                 exit 0 if a machine of this Vagrantfile is running
#   vm.sh ssh-config              (re)writes .vagrant/capbench-ssh-config from `vagrant ssh-config`
#   vm.sh exec HOST USER CMD...   runs CMD on HOST as USER (sudo -u) over plain ssh; stdin passes through
#   vm.sh unhealthy [HOST...]     prints the hosts (default: all) that fail their role's health check (the
#                                 one compose.yaml's healthchecks run: cluster/provision/healthy); exit 1 when
#                                 there is any
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# Vagrant's state for this checkout (VAGRANT_DOTFILE_PATH moves it, as the integration test does).
dotfile=${VAGRANT_DOTFILE_PATH:-$root/.vagrant}
config=$dotfile/capbench-ssh-config
# shellcheck source=cluster/topology.sh
source "$root/cluster/topology.sh"

running() {
    [ -d "$dotfile/machines" ] && command -v vagrant >/dev/null || return 1
    (cd "$root" && vagrant status --machine-readable 2>/dev/null) | grep -q ',state,running$'
}

ssh_config() {
    # The machines created so far (a provider id each): ssh-config fails on a name not yet created.
    local created=() host
    for host in "${CAPBENCH_HOSTS[@]}"; do
        compgen -G "$dotfile/machines/$host/*/id" >/dev/null && created+=("$host")
    done
    [ ${#created[@]} -gt 0 ] || { echo "capbench: no Vagrant machine of this checkout exists: vagrant up" >&2; return 1; }
    mkdir -p "$(dirname "$config")"
    (cd "$root" && vagrant ssh-config "${created[@]}") >"$config.partial" \
        || { rm -f "$config.partial"; echo "capbench: vagrant ssh-config failed: are the machines up (vagrant up)?" >&2; return 1; }
    mv "$config.partial" "$config"
}

exec_on() {
    local host=$1 user=$2
    shift 2
    # Written at the first use, and again after `vagrant up` has made a machine anew (new key and address).
    if [ ! -f "$config" ] || [ -n "$(find "$dotfile/machines" -name id -newer "$config" 2>/dev/null)" ]; then
        ssh_config
    fi
    # The remote side is a shell: quote every word.
    exec ssh -F "$config" -o BatchMode=yes -o LogLevel=ERROR -T "$host" -- sudo -n -u "$user" -- "$(printf '%q ' "$@")"
}

# healthy HOST: its role's health check, as compose.yaml's healthcheck runs it in a container.
healthy() {
    local role=$1
    [[ $1 == node* ]] && role=node
    "$0" exec "$1" root env CAPBENCH_NODES="${CAPBENCH_NODES[*]}" CAPBENCH_MONITORED="${CAPBENCH_MONITORED[*]}" \
        APP_HEALTH="$APP_HEALTH" /opt/capbench/bin/healthy "$role"
}

unhealthy() {
    local hosts=("$@") failing=() host
    # The path the nodes' checks ask (cluster/app.env), resolved as make up resolved it (up.sh exports it).
    if [ -z "${APP_HEALTH-}" ]; then
        APP_HEALTH=$("$root/cluster/load-settings.sh" print | sed -n 's/^APP_HEALTH=//p')
    fi
    [ ${#hosts[@]} -gt 0 ] || hosts=("${CAPBENCH_HOSTS[@]}")
    for host in "${hosts[@]}"; do healthy "$host" >/dev/null 2>&1 || failing+=("$host"); done
    [ ${#failing[@]} -eq 0 ] && return 0
    echo "${failing[*]}"
    return 1
}

case ${1:-} in
    running) running ;;
    unhealthy) shift; unhealthy "$@" ;;
    ssh-config) ssh_config ;;
    exec) [ $# -ge 4 ] || { echo "usage: $0 exec HOST USER CMD..." >&2; exit 2; }; shift; exec_on "$@" ;;
    *) echo "usage: $0 running | ssh-config | exec HOST USER CMD... | unhealthy [HOST...]" >&2; exit 2 ;;
esac
