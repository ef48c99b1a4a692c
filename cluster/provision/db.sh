#!/usr/bin/env bash
# Provisions the database host: PostgreSQL 15 from Debian, our start script and schema (db/), the role's health
# check, and PCP's pmcd with the database's own figures (metrics/hosts/db). PostgreSQL and pmcd run as the
# unprivileged user postgres (created by the package); the data lives in the container (a fresh database,
# seeded the same way, at every start).
set -euo pipefail
# shellcheck source=cluster/provision/lib.sh
source "$(dirname "$0")/lib.sh"

packages() {
    apt_install postgresql-15 tini "${PCP_PACKAGES[@]}"
    # Debian's package creates a cluster of its own (main); the host runs only ours (db/start).
    pg_dropcluster --stop 15 main 2>/dev/null || true
}

install_files() {
    local src=$1
    install_healthy "$src"
    install -d -m 755 /opt/capbench/bin /opt/capbench/db
    install -m 755 "$src/db/start" /opt/capbench/bin/db-start
    install -m 644 "$src/db/schema.sql" "$src/db/seed.sql" /opt/capbench/db/
    install -d -m 700 -o postgres -g postgres /var/lib/capbench-db
    # The socket's folder, where psql and the metrics script look by default.
    install -d -m 2775 -o postgres -g postgres /var/run/postgresql
    install_pcp_host db postgres "$src"
}

provision_main "$@"
