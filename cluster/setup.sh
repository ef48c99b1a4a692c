#!/usr/bin/env bash
# make setup: everything the testbed needs, idempotent (a second run only checks and finds the builds cached).
#   1. the Docker engine and Compose v2 (installed/started only where missing: see engine.sh)
#   2. the base image debian:bookworm-slim (pulled, or built with debootstrap where no registry answers)
#   3. the stats credentials (.capbench/secrets.env), the test tools (.venv) and headless Chromium (the report
#      test renders report.html in it)
#   4. the load generator oha (built from crates.io with cargo; the load image carries it)
#   5. the webapp WAR (Maven) and the four images
#   6. for the Vagrant backend: Vagrant, vagrant-libvirt, libvirt and QEMU/KVM (Debian's packages), libvirtd
#      started, and the box debian/bookworm64 built from Debian packages where Vagrant has none (a few
#      minutes, once). Optional: where this cannot be done (not Debian, not root) it says why and goes on.
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

step "[1/6] Docker engine and Compose"
cluster/engine.sh ensure
step "[2/6] base image debian:bookworm-slim"
cluster/base-image.sh
step "[3/6] stats credentials, the Python tools (.venv) and headless Chromium"
cluster/secrets.sh >/dev/null
make --no-print-directory --silent .venv/.installed
report/install-chromium.sh
step "[4/6] load generator oha"
load/install-oha.sh
step "[5/6] webapp and images"
make --no-print-directory images
step "[6/6] VMs: Vagrant with libvirt, and the box debian/bookworm64"
if cluster/vagrant/host.sh ensure; then
    cluster/vagrant/box.sh
    say "VMs: libvirt driver $(cluster/vagrant/host.sh driver)"
else
    say "VMs skipped (the Compose backend is ready); README.md, 'On virtual machines', says what Vagrant needs"
fi
step "done in $(( $(date +%s) - setup_started )) s: next, make up"
