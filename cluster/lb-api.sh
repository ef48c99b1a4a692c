#!/usr/bin/env bash
# Sends one command to HAProxy's runtime API on the lb host (container or VM) and prints the answer, e.g.
#   cluster/lb-api.sh "set server nodes/node2 state maint"     cluster/lb-api.sh "show servers state nodes"
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 'COMMAND'" >&2; exit 2; }
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec python3 -m capbench.hosts lb-api "$1"
