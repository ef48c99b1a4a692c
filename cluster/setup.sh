#!/usr/bin/env bash
# make setup: everything the Compose backend and the tests need, idempotent (a second run only checks and finds
# the builds cached). The load generator oha, the longest build (cargo: 3 minutes alone on 2 cores, about 6
# beside the rest), runs in the background from the start:
#   1. the Docker engine (installed/started only where missing: see engine.sh); Compose v2 built meanwhile
#   2. the base image debian:bookworm-slim (pulled, or built with debootstrap where no registry answers)
#   3. the generated secrets (.capbench/secrets.env, .capbench/secrets/) and the harness (.venv: the capbench
#      package and its libraries; what only the tests use, make test installs)
#   4. the webapp WAR, the JMX exporter agent and the images that do not carry oha (node, lb, db, controller)
#   5. oha (waited for) and the load image
# What another backend needs beyond this only when that backend is asked for: BACKEND=vagrant adds the Vagrant
# backend's tools (Vagrant, libvirt, QEMU and the box; or make vagrant-setup; docs/guides/vagrant.md).
# Prerequisites it does not install: Java 17 + Maven (to build the WAR), Rust's cargo (to build oha) and
# Python 3 (the bench harness, status and tests). The Compose plugin's Go build (where it is missing) runs from the
# start too, beside Debian's docker.io install and the base image, which mostly wait on downloads.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
compose=cluster/compose/compose.sh
# shellcheck source=cluster/topology.sh
source cluster/topology.sh

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
command -v go >/dev/null || missing+=("Go (the load generator capload)")
command -v openssl >/dev/null || missing+=("OpenSSL (openssl: the balancer's certificate, cluster/tls.sh)")
if [ ${#missing[@]} -gt 0 ]; then
    say "missing prerequisites: ${missing[*]}; install them and run make setup again" >&2
    exit 1
fi

mkdir -p .capbench
oha_log=.capbench/oha-build.log
# At a lower priority: Compose's build, beside it, is on the path to the images (step 4), oha only to the
# load image (step 5), and takes the cores the image builds leave while they wait on apt.
nice -n 10 load/install-oha.sh >"$oha_log" 2>&1 &
oha_build=$!
# The harness's venv (downloads, mostly) beside the engine's install and Compose's build, waited for at step 3.
venv_log=.capbench/venv-build.log
make --no-print-directory --silent .venv/.installed >"$venv_log" 2>&1 &
venv_build=$!
compose_log=.capbench/compose-build.log
cluster/engine.sh compose >"$compose_log" 2>&1 &
compose_build=$!
# A failed or interrupted setup does not leave the builds running behind it.
trap 'kill "$oha_build" "$venv_build" "$compose_build" 2>/dev/null || true' EXIT

step "[1/5] Docker engine (oha, the venv and Compose build meanwhile: $oha_log, $venv_log, $compose_log)"
cluster/engine.sh ensure-engine
step "[2/5] base image debian:bookworm-slim, and Compose"
cluster/base-image.sh
if ! wait "$compose_build"; then
    say "building the Docker Compose plugin failed; its log ($compose_log) ends:" >&2
    tail -n 20 "$compose_log" >&2
    exit 1
fi
cluster/engine.sh ensure
step "[3/5] generated secrets and the harness (.venv)"
cluster/secrets.sh >/dev/null
if ! wait "$venv_build"; then
    say "installing the harness into .venv failed; its log ($venv_log) ends:" >&2
    sed 's/\x1b\[0m//g' "$venv_log" | tail -n 20 >&2
    exit 1
fi
step "[4/5] webapp, JMX agent and the node, lb, db and controller images"
# (Debian's Maven 3.8 prints colour resets on both streams even when quiet: dropped, its messages kept.)
make --no-print-directory --silent webapp/target/grinder.war .capbench/tools/jmx-exporter/jmx_prometheus_javaagent.jar \
    .capbench/tools/async-profiler/libasyncProfiler.so \
    2>&1 | sed 's/\x1b\[0m//g'
# The nodes share one image: building the first node's builds it.
"$compose" --progress quiet build "${CAPBENCH_NODES[0]}" lb db controller
step "[5/5] load generators oha and capload, and the load image"
if ! wait "$oha_build"; then
    say "building oha failed; its log ($oha_log) ends:" >&2
    tail -n 20 "$oha_log" >&2
    exit 1
fi
trap - EXIT
make --no-print-directory --silent .capbench/tools/capload/bin/capload  # capbench's own client, a few seconds
"$compose" --progress quiet build load
# What the chosen backend needs beyond this (BACKEND=vagrant: Vagrant, libvirt, QEMU and the box).
extra=$(python3 -m capbench.hosts setup)
if [ -n "$extra" ]; then
    step "what the $BACKEND backend needs beyond this: make $extra"
    make --no-print-directory "$extra"
fi
step "done in $(( $(date +%s) - setup_started )) s: next, make up (or make bench-cluster)"
