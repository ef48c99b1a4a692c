#!/usr/bin/env bash
# Provisions the database host: PostgreSQL 15 from Debian, our start script and schema (db/), and the role's
# health check. PostgreSQL runs as the unprivileged user postgres (created by the package); its data lives in
# the container (a fresh database, seeded the same way, at every start).
set -euo pipefail
# shellcheck source=cluster/provision/lib.sh
source "$(dirname "$0")/lib.sh"

packages() {
    apt_install postgresql-15 tini
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
}

provision_main "$@"
