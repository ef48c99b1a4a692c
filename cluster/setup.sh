#!/usr/bin/env bash
# make setup: everything the testbed needs, idempotent (a second run only checks and finds the builds cached).
#   1. the Docker engine and Compose v2 (installed/started only where missing: see engine.sh)
#   2. the base image debian:bookworm-slim (pulled, or built with debootstrap where no registry answers)
#   3. the stats credentials (.capbench/secrets.env), the test tools (.venv) and headless Chromium (the report
#      test renders report.html in it)
#   4. the load generator oha (built from crates.io with cargo; the load image carries it)
#   5. the webapp WAR (Maven) and the four images
# Prerequisites it does not install: Java 17 + Maven (to build the WAR), Rust's cargo (to build oha) and
# Python 3 (the bench harness, status and tests).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

say() { echo "capbench: $*"; }
setup_started=$(date +%s)
step_started=
# Prints how long the previous step took, then the next step's name.
step() {
    local now
    now=$(date +%s)
    [ -z "$step_started" ] || echo "          ($(( now - step_started )) s)"
    step_started=$now
    say "$*"
}

missing=()
command -v java >/dev/null || missing+=("Java 17 (a JDK)")
command -v mvn >/dev/null || missing+=("Maven")
command -v python3 >/dev/null || missing+=("Python 3")
command -v cargo >/dev/null || missing+=("Rust (cargo)")
if [ ${#missing[@]} -gt 0 ]; then
    say "missing prerequisites: ${missing[*]}; install them and run make setup again" >&2
    exit 1
fi

step "[1/5] Docker engine and Compose"
cluster/engine.sh ensure
step "[2/5] base image debian:bookworm-slim"
cluster/base-image.sh
step "[3/5] stats credentials, the Python tools (.venv) and headless Chromium"
cluster/secrets.sh >/dev/null
make --no-print-directory --silent .venv/.installed
report/install-chromium.sh
step "[4/5] load generator oha"
load/install-oha.sh
step "[5/5] webapp and images"
make --no-print-directory images
step "done in $(( $(date +%s) - setup_started )) s: next, make up"
