#!/usr/bin/env bash
# Provisions the controller host, which logs every host's metrics for each run: PCP's pmlogger (one per host,
# started and stopped by metrics/pcp-loggers), the pmlogger configs per role and the pmrep export config
# (metrics/), and curl to check that it reaches every host. Runs as the unprivileged user capbench.
set -euo pipefail
# shellcheck source=cluster/provision/lib.sh
source "$(dirname "$0")/lib.sh"

packages() {
    tool_host_packages curl pcp
}

install_files() {
    local src=$1 dir=/opt/capbench/pcp
    install_healthy "$src"
    install -d -m 755 "$dir/pmlogger" /opt/capbench/bin
    install -m 644 "$src"/metrics/pmlogger/*.conf "$dir/pmlogger/"
    install -m 644 "$src/metrics/pmrep.conf" "$dir/"
    install -m 755 "$src/metrics/pcp-loggers" /opt/capbench/bin/
    # pmlogger registers itself under PCP's state directory, writable by group pcp.
    usermod -a -G pcp capbench
}

provision_main "$@"
