#!/usr/bin/env bash
# The Docker engine and Compose, for a machine that may have neither running.
#   engine.sh ensure    make it so: on Debian as root, install docker.io, start dockerd (when no init system
#                       manages it) and build the Compose v2 plugin with Go; elsewhere, say what to do
#   engine.sh ensure-engine
#                       the engine alone (installed, started)
#   engine.sh compose   only build the Compose plugin where it is missing (Go alone: make setup runs it from the
#                       start, beside the engine's install, which is mostly waiting on downloads)
#   engine.sh stop      stop a dockerd that `ensure` started (recorded in .capbench/dockerd.pid), nothing else
# On a machine that already has a running engine and Compose, `ensure` changes nothing.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
state=$root/.capbench
pidfile=$state/dockerd.pid
compose_version=v2.29.7

say() { echo "capbench: $*" >&2; }

engine_up() { docker info >/dev/null 2>&1; }
compose_ok() { docker compose version >/dev/null 2>&1; }
can_administer() { [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; }
systemd_is_init() { [ "$(cat /proc/1/comm 2>/dev/null)" = systemd ]; }

install_engine() {
    if ! command -v dockerd >/dev/null; then
        can_administer || { say "no Docker engine: install Docker Engine (docs.docker.com/engine/install) and start it"; return 1; }
        say "installing Debian's docker.io"
        apt-get -o DPkg::Lock::Timeout=300 update -q >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -q docker.io >/dev/null
    fi
    command -v docker >/dev/null || { say "the docker client is missing"; return 1; }
}

start_engine() {
    engine_up && return 0
    if systemd_is_init; then
        [ "$(id -u)" -eq 0 ] || { say "the Docker engine is not running: sudo systemctl start docker"; return 1; }
        say "starting docker.service"
        systemctl start docker
    else
        [ "$(id -u)" -eq 0 ] || { say "the Docker engine is not running: start dockerd (as root)"; return 1; }
        # No init system manages services here (a container or CI sandbox): run dockerd ourselves and
        # remember its pid, so `engine.sh stop` (CI's cleanup) stops exactly what was started.
        mkdir -p "$state"
        say "starting dockerd (log: .capbench/dockerd.log)"
        nohup dockerd >"$state/dockerd.log" 2>&1 &
        echo $! >"$pidfile"
    fi
    local waited=0
    until engine_up; do
        sleep 1
        waited=$((waited + 1))
        if [ "$waited" -ge 60 ]; then
            say "the Docker engine did not answer within 60 s; last lines of its log:"
            tail -n 20 "$state/dockerd.log" >&2 2>/dev/null || true
            return 1
        fi
    done
}

plugin=${DOCKER_CONFIG:-$HOME/.docker}/cli-plugins/docker-compose

# The plugin built where Docker's client finds none that works; it needs Go, not Docker.
build_compose() {
    compose_ok && return 0
    command -v go >/dev/null || { say "Docker Compose v2 is missing: install the docker-compose-plugin package (or Go, to build it)"; return 1; }
    local build=$state/compose-build
    say "building the Docker Compose $compose_version plugin with Go (about 2 minutes)"
    mkdir -p "$build" "$(dirname "$plugin")"
    # As Compose's own releases are built: no cgo (no C compiled beside Go's), no paths or symbol tables kept
    # (a shorter link). Less CPU taken from oha's build, which runs beside it in make setup.
    (cd "$build" && CGO_ENABLED=0 GOBIN="$build/bin" GOFLAGS=-mod=mod go install -trimpath \
        -ldflags "-s -w -X github.com/docker/compose/v2/internal.Version=$compose_version" \
        "github.com/docker/compose/v2/cmd@$compose_version")
    install -m 755 "$build/bin/cmd" "$plugin"
}

install_compose() {
    compose_ok && return 0
    build_compose || return 1
    compose_ok || { say "the Compose plugin was built but docker compose still fails"; return 1; }
}

stop() {
    [ -f "$pidfile" ] || return 0
    local pid
    pid=$(cat "$pidfile")
    if kill -0 "$pid" 2>/dev/null; then
        say "stopping the dockerd that capbench started (pid $pid)"
        kill "$pid"
        for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    fi
    rm -f "$pidfile"
}

case ${1:-} in
    ensure) install_engine && start_engine && install_compose ;;
    ensure-engine) install_engine && start_engine ;;
    compose) build_compose ;;
    stop) stop ;;
    *) echo "usage: $0 ensure | ensure-engine | compose | stop" >&2; exit 2 ;;
esac
