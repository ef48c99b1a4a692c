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
# shellcheck source=cluster/debian.sh
source "$(dirname "$0")/debian.sh"
ensure_debootstrap || { say "or load $image with docker load"; exit 1; }
[ "$(id -u)" -eq 0 ] || { say "debootstrap needs root: run make setup as root, or load $image with docker load"; exit 1; }

mirror=$(debian_mirror)
rootfs=$(mktemp -d /tmp/capbench-rootfs.XXXXXX)
trap 'rm -rf "$rootfs"' EXIT
debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$rootfs.log" 2>&1 \
    || { say "debootstrap failed; its log: $rootfs.log"; exit 1; }
write_apt_sources "$rootfs" "$mirror"
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
tar -C "$rootfs" -c . | docker import -c 'CMD ["bash"]' - "$image" >/dev/null
rm -f "$rootfs.log"
say "imported $image ($(docker image inspect -f '{{.Size}}' "$image" | awk '{printf "%d MB", $1/1e6}'))"
