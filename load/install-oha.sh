#!/usr/bin/env bash
# Builds oha, the packaged constant-rate load generator, from crates.io into .capbench/tools/oha/ (the load
# image copies it from there). Pinned version, locked dependencies; does nothing when that version is there.
# The build is kept in the user's cache (~/.cache/capbench/oha-VERSION), so another checkout on this machine
# copies it instead of building again. About 5 minutes on 2 cores the first time. Needs cargo (Rust).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OHA_VERSION=1.16.0
dest=$root/.capbench/tools/oha
cache=${XDG_CACHE_HOME:-$HOME/.cache}/capbench/oha-$OHA_VERSION

built() { [ -x "$1/bin/oha" ] && [ "$("$1/bin/oha" --version)" = "oha $OHA_VERSION" ]; }

built "$dest" && exit 0
if ! built "$cache"; then
    if ! command -v cargo >/dev/null; then
        echo "capbench: cargo (Rust) is needed to build the load generator oha $OHA_VERSION: install Rust" >&2
        exit 1
    fi
    echo "capbench: building oha $OHA_VERSION from crates.io (about 5 minutes the first time)"
    cargo install --quiet --locked --version "$OHA_VERSION" --root "$cache" oha
fi
install -D -m 755 "$cache/bin/oha" "$dest/bin/oha"
"$dest/bin/oha" --version
