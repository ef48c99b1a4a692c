#!/usr/bin/env bash
# Builds capload (load/capload/: capbench's own constant-rate client, Go's standard library only) into
# .capbench/tools/capload/ (the load image copies it from there). A static binary (no cgo), so it runs on any
# load host; a few seconds on 2 cores. Needs Go (the version go.mod names, or newer); nothing is downloaded.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dest=$root/.capbench/tools/capload/bin/capload
if ! command -v go >/dev/null; then
    echo "capbench: Go is needed to build the load generator capload (load/capload/): install Go" >&2
    exit 1
fi
mkdir -p "$(dirname "$dest")"
cd "$root/load/capload"
CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -o "$dest.new" .
mv "$dest.new" "$dest"
"$dest" -version
