#!/usr/bin/env bash
# Provisions the load balancer host: Debian's HAProxy 2.6, our haproxy.cfg, and lb-api, a small client of
# HAProxy's runtime API socket; PCP's pmcd with HAProxy's per-server counters (metrics/). HAProxy and pmcd run
# as the unprivileged user haproxy (uid 443, created here before the package).
set -euo pipefail
# shellcheck source=cluster/provision/lib.sh
source "$(dirname "$0")/lib.sh"

# haproxy's uid and gid, fixed: the balancer's TLS key on the host is owned by this user (cluster/tls.sh), and the
# file is bound into the container with its owner. A system uid, so the package's postinst keeps the user.
HAPROXY_UID=443

packages() {
    ensure_user haproxy /var/lib/haproxy "$HAPROXY_UID"
    apt_install haproxy socat curl tini "${PCP_PACKAGES[@]}"
}

install_files() {
    local src=$1
    install_healthy "$src"
    install -d -m 755 /opt/capbench/bin
    install -m 644 "$src/haproxy/haproxy.cfg" /etc/haproxy/haproxy.cfg
    install -m 755 "$src/haproxy/lb-api" /opt/capbench/bin/lb-api
    install -m 755 "$src/haproxy/start" /opt/capbench/bin/haproxy-start
    # The runtime API socket lives here; only haproxy may open it (mode 600 in the config).
    install -d -m 750 -o haproxy -g haproxy /run/haproxy
    install_pcp_host lb haproxy "$src"
}

provision_main "$@"
