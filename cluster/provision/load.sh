#!/usr/bin/env bash
# Provisions the load host, from which all load is sent to the balancer or a node. For now it carries curl
# for checks; the load generators arrive with the load issue. Runs as the unprivileged user capbench.
set -euo pipefail
# shellcheck source=cluster/provision/lib.sh
source "$(dirname "$0")/lib.sh"

packages() {
    tool_host_packages curl
}

install_files() {
    :
}

provision_main "$@"
