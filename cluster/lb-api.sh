#!/usr/bin/env bash
# Sends one command to HAProxy's runtime API inside the lb host (container or VM) and prints the answer, e.g.
#   cluster/lb-api.sh "set server nodes/node2 state maint"     cluster/lb-api.sh "show servers state nodes"
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ $# -eq 1 ] || { echo "usage: $0 'COMMAND'" >&2; exit 2; }
if [ "$("$root/cluster/backend.sh")" = vagrant ]; then
    exec "$root/cluster/vagrant/vm.sh" exec lb haproxy /opt/capbench/bin/lb-api "$1"
fi
exec "$root/cluster/compose.sh" exec -T lb /opt/capbench/bin/lb-api "$1"
