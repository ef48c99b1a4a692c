# shellcheck shell=bash
# Debian's archive for images built here from Debian packages (the base image, the Vagrant box): which mirror
# to use and the apt sources to leave inside. Sourced by cluster/base-image.sh and cluster/vagrant/box.sh.

# debian_mirror: the mirror this host already uses (plain http works inside containers and VMs), unless
# DEBIAN_MIRROR is given; Debian's redirector where the host names none.
debian_mirror() {
    local mirror=${DEBIAN_MIRROR:-$(grep -rhE '^[[:space:]]*(URIs:|deb )' /etc/apt/sources.list \
        /etc/apt/sources.list.d/ 2>/dev/null | grep -oE 'https?://[^ ]+/debian/?( |$)' | head -n 1 | tr -d ' ' || true)}
    mirror=${mirror:-http://deb.debian.org/debian}
    echo "${mirror%/}"
}

# write_apt_sources ROOTFS MIRROR: the same apt sources as Debian's official images: the release, its updates,
# and security fixes (DEBIAN_SECURITY_MIRROR, else MIRROR-security).
write_apt_sources() {
    local rootfs=$1 mirror=$2
    local security=${DEBIAN_SECURITY_MIRROR:-${mirror}-security}
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
}

# ensure_debootstrap: installs Debian's debootstrap where it is missing (root on Debian), else says what to do.
ensure_debootstrap() {
    command -v debootstrap >/dev/null && return 0
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
        apt-get -o DPkg::Lock::Timeout=300 update -q >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -q debootstrap >/dev/null
    else
        echo "capbench: debootstrap is missing: install it (as root: apt-get install debootstrap)" >&2
        return 1
    fi
}
