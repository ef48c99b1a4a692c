#!/usr/bin/env bash
# Provisions the controller host, which will log every host's metrics (PCP) for each run. For now it carries
# curl to check that it reaches every host. Runs as the unprivileged user capbench.
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
