#!/usr/bin/env bash
# Builds oha, the packaged constant-rate load generator, from crates.io into .capbench/tools/oha/ (the load
# image copies it from there). Pinned version, locked dependencies; does nothing when that version is built.
# About 5 minutes on 2 cores the first time. Needs cargo (Rust).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OHA_VERSION=1.16.0
dest=$root/.capbench/tools/oha

if [ -x "$dest/bin/oha" ] && [ "$("$dest/bin/oha" --version)" = "oha $OHA_VERSION" ]; then
    exit 0
fi
if ! command -v cargo >/dev/null; then
    echo "capbench: cargo (Rust) is needed to build the load generator oha $OHA_VERSION: install Rust" >&2
    exit 1
fi
echo "capbench: building oha $OHA_VERSION from crates.io (about 5 minutes the first time)"
cargo install --quiet --locked --version "$OHA_VERSION" --root "$dest" oha
"$dest/bin/oha" --version
