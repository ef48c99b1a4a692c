#!/usr/bin/env bash
# make wrk2: builds wrk2 (Gil Tene's constant-throughput wrk) into .capbench/tools/wrk2/wrk2, where the harness
# finds it when WRK2 is unset and none is on PATH (capbench/load/drivers/__init__.py). wrk2 is packaged nowhere our
# machines reach, so its source comes from one pinned commit: downloaded from GitHub, or WRK2_SRC=folder (a copy
# of that commit's tree you have). Either way the tree's digest (the sha256 of every file's sha256 and path,
# sorted: independent of how it was packed) must be WRK2_TREE_SHA256 before anything is built. The build needs
# gcc, make and OpenSSL's headers (Debian's build-essential and libssl-dev, installed here where missing, as
# root); it builds wrk2's bundled LuaJIT too: about a minute on 2 cores. The binary runs in the load image
# (Debian 12, libssl3), so build it on Debian 12. Does nothing when the binary of this commit is there.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WRK2_COMMIT=44a94c17d8e6a0bac8559b53da76848e430cb7a7  # giltene/wrk2 master, 2019-09-23 (its last commit)
WRK2_TREE_SHA256=018f996a290e93f2bb649f8447230548fa4996cd290997953b348c5a3033b908
WRK2_URL=https://github.com/giltene/wrk2/archive/$WRK2_COMMIT.tar.gz
dest=$root/.capbench/tools/wrk2
say() { echo "capbench: $*" >&2; }

tree_sha256() { (cd "$1" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1); }

if [ -x "$dest/wrk2" ] && [ "$(cat "$dest/commit" 2>/dev/null)" = "$WRK2_COMMIT" ]; then
    say "wrk2 $WRK2_COMMIT is built: $dest/wrk2"
    exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -n "${WRK2_SRC:-}" ]; then
    [ -f "$WRK2_SRC/src/wrk.c" ] || { say "WRK2_SRC='$WRK2_SRC' is not wrk2's source: no src/wrk.c in it"; exit 2; }
    cp -a "$WRK2_SRC/." "$work/src"
    rm -rf "$work/src/.git"
else
    say "downloading wrk2 $WRK2_COMMIT"
    if ! curl -fsSL --max-time 120 "$WRK2_URL" -o "$work/wrk2.tar.gz"; then
        say "could not download wrk2's source ($WRK2_URL): give a copy of commit $WRK2_COMMIT with WRK2_SRC=folder"
        exit 1
    fi
    mkdir "$work/src"
    tar -xzf "$work/wrk2.tar.gz" -C "$work/src" --strip-components 1
fi
got=$(tree_sha256 "$work/src")
if [ "$got" != "$WRK2_TREE_SHA256" ]; then
    say "wrk2's source is not commit $WRK2_COMMIT: its tree's sha256 is $got, not $WRK2_TREE_SHA256; nothing built"
    exit 2
fi
missing=()
command -v gcc >/dev/null && command -v make >/dev/null || missing+=(build-essential)
[ -f /usr/include/openssl/ssl.h ] || missing+=(libssl-dev)
if [ ${#missing[@]} -gt 0 ]; then
    say "installing ${missing[*]} for wrk2's build"
    apt-get update -q >/dev/null && apt-get install -y -q "${missing[@]}" >/dev/null
fi
say "building wrk2 (and its bundled LuaJIT)"
make -C "$work/src" -j2 >"$work/build.log" 2>&1 || { tail -n 20 "$work/build.log" >&2; say "wrk2's build failed"; exit 1; }
install -D -m 755 "$work/src/wrk" "$dest/wrk2"
echo "$WRK2_COMMIT" >"$dest/commit"
say "built $dest/wrk2 ($("$dest/wrk2" -v 2>&1 | head -n 1 || true))"
