#!/usr/bin/env bash
# Makes sure the image every capbench image builds FROM, debian:bookworm-slim, exists locally: present →
# nothing to do; else pull it; where no registry answers (an air-gapped lab, our CI), build an equivalent
# from Debian's own packages with debootstrap and import it under that tag, so the Dockerfiles build unchanged.
set -euo pipefail
image=debian:bookworm-slim

say() { echo "capbench: $*" >&2; }

docker image inspect "$image" >/dev/null 2>&1 && exit 0

say "pulling $image"
if timeout 120 docker pull -q "$image" >/dev/null 2>&1; then
    exit 0
fi

say "no registry answered: building $image from Debian packages with debootstrap"
if ! command -v debootstrap >/dev/null; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
        apt-get update -q >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null
    else
        say "cannot pull $image and debootstrap is missing: install debootstrap (as root) or load the image with docker load"
        exit 1
    fi
fi
[ "$(id -u)" -eq 0 ] || { say "debootstrap needs root: run make setup as root, or load $image with docker load"; exit 1; }

# The mirror this host already uses (plain http works inside containers), unless DEBIAN_MIRROR is given.
mirror=${DEBIAN_MIRROR:-$(grep -rhE '^[[:space:]]*(URIs:|deb )' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null \
    | grep -oE 'https?://[^ ]+/debian/?( |$)' | head -n 1 | tr -d ' ' || true)}
mirror=${mirror:-http://deb.debian.org/debian}
mirror=${mirror%/}
security=${DEBIAN_SECURITY_MIRROR:-${mirror}-security}

rootfs=$(mktemp -d /tmp/capbench-rootfs.XXXXXX)
trap 'rm -rf "$rootfs"' EXIT
debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$rootfs.log" 2>&1 \
    || { say "debootstrap failed; its log: $rootfs.log"; exit 1; }
# The same apt sources as Docker's official image: the release, its updates, and security fixes.
rm -f "$rootfs/etc/apt/sources.list"
cat >"$rootfs/etc/apt/sources.list.d/debian.sources" <<SOURCES
Types: deb
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
tar -C "$rootfs" -c . | docker import -c 'CMD ["bash"]' - "$image" >/dev/null
rm -f "$rootfs.log"
say "imported $image ($(docker image inspect -f '{{.Size}}' "$image" | awk '{printf "%d MB", $1/1e6}'))"
