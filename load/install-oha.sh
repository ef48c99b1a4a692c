#!/usr/bin/env bash
# Builds oha, the packaged constant-rate load generator, from crates.io into .capbench/tools/oha/ (the load
# image copies it from there). Pinned version, locked dependencies; does nothing when that version is there.
# The build is kept in the user's cache (~/.cache/capbench/oha-VERSION-FEATURES), so another checkout on this machine
# copies it instead of building again. About 4 minutes on 2 cores the first time. Needs cargo (Rust), and
# OpenSSL's and SQLite's development files (installed from Debian's packages where missing, as root).
#
# Built against the system's OpenSSL and SQLite (oha's native-tls feature; libsqlite3-sys linked by pkg-config)
# rather than the C libraries oha bundles by default (aws-lc for rustls, and SQLite): those two C builds took a
# third of oha's build CPU (aws-lc-sys 75 s, libsqlite3-sys 49 s of 612 unit-seconds, cargo --timings on 2026-12-03),
# and make setup runs this beside Compose's build. OpenSSL is also the TLS that wrk2, HAProxy and Tomcat's
# OpenSSL implementation use, so every client and server of a TLS bench shares one library. The load hosts
# carry libssl3 and libsqlite3-0 for it (cluster/provision/load.sh).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OHA_VERSION=1.16.0
dest=$root/.capbench/tools/oha
OHA_FEATURES=native-tls
cache=${XDG_CACHE_HOME:-$HOME/.cache}/capbench/oha-$OHA_VERSION-$OHA_FEATURES

built() { [ -x "$1/bin/oha" ] && [ "$("$1/bin/oha" --version)" = "oha $OHA_VERSION" ]; }

built "$dest" && exit 0
if ! built "$cache"; then
    if ! command -v cargo >/dev/null; then
        echo "capbench: cargo (Rust) is needed to build the load generator oha $OHA_VERSION: install Rust" >&2
        exit 1
    fi
    if ! pkg-config --exists openssl sqlite3 2>/dev/null; then
        if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
            # Beside make setup's own apt-get (Docker's engine): wait for dpkg's lock rather than fail on it.
            apt-get -o DPkg::Lock::Timeout=300 update -q >/dev/null
            DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -q \
                pkg-config libssl-dev libsqlite3-dev >/dev/null
        else
            echo "capbench: oha $OHA_VERSION needs OpenSSL's and SQLite's development files:" \
                "install pkg-config, libssl-dev and libsqlite3-dev (Debian's names)" >&2
            exit 1
        fi
    fi
    echo "capbench: building oha $OHA_VERSION ($OHA_FEATURES) from crates.io (about 4 minutes the first time)"
    LIBSQLITE3_SYS_USE_PKG_CONFIG=1 cargo install --quiet --locked --version "$OHA_VERSION" --root "$cache" \
        --no-default-features --features "$OHA_FEATURES" oha
fi
install -D -m 755 "$cache/bin/oha" "$dest/bin/oha"
"$dest/bin/oha" --version
