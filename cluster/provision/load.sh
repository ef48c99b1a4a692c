#!/usr/bin/env bash
# Provisions the load host, from which all load is sent to the balancer: curl for checks, oha (the packaged
# constant-rate generator, built on the user's machine by load/install-oha.sh), capload (ours, for connections
# that come and go: load/install-capload.sh), our step wrapper and wrk2
# script (load/), libssl for a wrk2 binary the user may supply, and PCP's pmcd for the generator's CPU and the
# host's network (metrics/). Runs as the unprivileged user capbench.
set -euo pipefail
# shellcheck source=cluster/provision/lib.sh
source "$(dirname "$0")/lib.sh"

packages() {
    tool_host_packages curl libssl3 libsqlite3-0 "${PCP_PACKAGES[@]}"
}

# SRC is a capbench checkout with oha and capload built (.capbench/tools/{oha,capload}/bin/).
install_files() {
    local src=$1
    install_healthy "$src"
    install -m 755 "$src/.capbench/tools/oha/bin/oha" /usr/local/bin/oha
    install -m 755 "$src/.capbench/tools/capload/bin/capload" /usr/local/bin/capload
    install -D -m 755 "$src/load/run-step" /opt/capbench/bin/run-step
    install -D -m 644 "$src/load/wrk2/capbench.lua" /opt/capbench/load/wrk2/capbench.lua
    install_pcp_host load capbench "$src"
}

provision_main "$@"
