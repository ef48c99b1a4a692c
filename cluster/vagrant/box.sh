#!/usr/bin/env bash
# make vagrant-box: a Debian 12 (bookworm) Vagrant box for the libvirt provider, built here from Debian's own
# packages, for machines and labs that cannot download one. It is added to Vagrant as debian/bookworm64, the
# box the Vagrantfile names, only when Vagrant has no libvirt box of that name yet (a downloaded official box
# is never replaced); VAGRANT_BOX_NAME= adds it under another name.
#
# What is in it: debootstrap's minimal Debian plus systemd, the kernel and its initramfs, OpenSSH, sudo,
# ifupdown with DHCP (vagrant-libvirt configures private networks the Debian way, in /etc/network/interfaces)
# and rsync (the Vagrantfile syncs the checkout with it). The user vagrant has no password, passwordless sudo
# and Vagrant's published insecure key, which `vagrant up` replaces with a key of its own. Each VM makes its own
# SSH host keys and machine-id at first boot.
#
# How it boots without mounting anything (no loop devices needed): a raw disk with an MBR partition table;
# partition 1 is FAT with SYSLINUX, the kernel and the initramfs (written with mtools), partition 2 the root
# file system (mke2fs -d fills ext4 from a folder, at the partition's offset in the disk file). Needs root,
# debootstrap, fdisk (sfdisk), dosfstools, mtools, syslinux and qemu-utils (installed where missing).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=cluster/debian.sh
source "$root/cluster/debian.sh"

name=${VAGRANT_BOX_NAME:-debian/bookworm64}
box=$root/.capbench/vagrant/debian12-libvirt.box
disk_gb=${VAGRANT_BOX_DISK_GB:-20}
boot_mb=128

say() { echo "capbench: $*" >&2; }

box_added() { vagrant box list 2>/dev/null | grep -qE "^$name +\(libvirt,"; }

[[ $disk_gb =~ ^[0-9]+$ ]] && [ "$disk_gb" -ge 4 ] && [ "$disk_gb" -le 500 ] \
    || { say "VAGRANT_BOX_DISK_GB='$disk_gb' is not allowed: a whole number of GiB from 4 to 500"; exit 2; }
command -v vagrant >/dev/null || { say "Vagrant is missing: make vagrant-setup installs it (Debian: vagrant, vagrant-libvirt)"; exit 1; }
if box_added; then
    say "Vagrant already has the libvirt box $name: nothing to build (vagrant box remove $name to rebuild)"
    exit 0
fi

build() {
    [ "$(id -u)" -eq 0 ] || { say "building the box needs root (debootstrap, device nodes in the image)"; return 1; }
    local tools=(sfdisk mkfs.fat mcopy mmd syslinux qemu-img)
    local missing=()
    for tool in "${tools[@]}"; do command -v "$tool" >/dev/null || missing+=("$tool"); done
    if [ ${#missing[@]} -gt 0 ]; then
        say "installing what the box build needs (missing: ${missing[*]})"
        apt-get update -q >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends fdisk dosfstools mtools \
            syslinux syslinux-common qemu-utils >/dev/null
    fi
    ensure_debootstrap

    local work mirror
    work=$(mktemp -d /var/tmp/capbench-box.XXXXXX)
    # shellcheck disable=SC2064  # the folder is known now
    trap "rm -rf '$work'" RETURN
    mirror=$(debian_mirror)
    local rootfs=$work/rootfs
    say "debootstrap bookworm from $mirror (a few minutes; log: $work/debootstrap.log)"
    debootstrap --variant=minbase \
        --include=systemd-sysv,udev,kmod,linux-image-amd64,initramfs-tools,openssh-server,sudo,ifupdown,isc-dhcp-client,iproute2,netbase,rsync,ca-certificates,procps,less \
        bookworm "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 \
        || { tail -n 20 "$work/debootstrap.log" >&2; say "debootstrap failed"; return 1; }
    write_apt_sources "$rootfs" "$mirror"

    local uuid
    uuid=$(cat /proc/sys/kernel/random/uuid)
    configure_guest "$rootfs" "$uuid"

    say "writing the disk image (${disk_gb} GiB, sparse)"
    local disk=$work/disk.raw first=2048 boot_sectors=$((boot_mb * 2048))
    local root_start=$((first + boot_sectors))
    truncate -s "${disk_gb}G" "$disk"
    sfdisk --quiet "$disk" <<PARTITIONS
label: dos
start=$first, size=$boot_sectors, type=c, bootable
start=$root_start, type=83
PARTITIONS
    dd if=/usr/lib/syslinux/mbr/mbr.bin of="$disk" bs=440 count=1 conv=notrunc status=none

    # Partition 1: FAT with SYSLINUX, the kernel and its initramfs.
    local fat=$work/boot.fat
    mkfs.fat -n BOOT -C "$fat" $((boot_mb * 1024)) >/dev/null
    mmd -i "$fat" ::/syslinux
    syslinux --install --directory /syslinux "$fat"
    cat >"$work/syslinux.cfg" <<CFG
DEFAULT debian
TIMEOUT 0
LABEL debian
    KERNEL /vmlinuz
    INITRD /initrd.img
    APPEND root=UUID=$uuid ro net.ifnames=0 biosdevname=0 console=tty0 console=ttyS0,115200n8 quiet
CFG
    mcopy -i "$fat" "$work/syslinux.cfg" ::/syslinux/syslinux.cfg
    mcopy -i "$fat" "$(ls "$rootfs"/boot/vmlinuz-* | sort -V | tail -n 1)" ::/vmlinuz
    mcopy -i "$fat" "$(ls "$rootfs"/boot/initrd.img-* | sort -V | tail -n 1)" ::/initrd.img
    dd if="$fat" of="$disk" bs=512 seek="$first" conv=notrunc,sparse status=none

    # Partition 2: the root file system, filled from the folder at its offset in the disk file.
    local root_bytes=$(( disk_gb * 1024 * 1024 * 1024 - root_start * 512 ))
    mke2fs -q -t ext4 -L root -U "$uuid" -d "$rootfs" -E offset=$((root_start * 512)) "$disk" \
        "$((root_bytes / 1024))k"

    say "converting to qcow2 and packing the box"
    qemu-img convert -O qcow2 "$disk" "$work/box.img"
    rm -f "$disk"
    printf '{"provider": "libvirt", "format": "qcow2", "virtual_size": %d}\n' "$disk_gb" >"$work/metadata.json"
    cat >"$work/Vagrantfile" <<'VAGRANTFILE'
# The box's defaults: KVM, and the disk as a virtio block device (/dev/vda), as the image expects.
Vagrant.configure("2") do |config|
  config.vm.provider :libvirt do |libvirt|
    libvirt.driver = "kvm"
    libvirt.disk_bus = "virtio"
  end
end
VAGRANTFILE
    mkdir -p "$(dirname "$box")"
    tar -C "$work" -czf "$box.partial" metadata.json Vagrantfile box.img
    mv "$box.partial" "$box"
    say "built $box ($(du -h "$box" | cut -f1))"
}

# configure_guest ROOTFS UUID: what a Vagrant box needs inside.
configure_guest() {
    local rootfs=$1 uuid=$2
    echo "UUID=$uuid / ext4 errors=remount-ro 0 1" >"$rootfs/etc/fstab"
    echo debian12 >"$rootfs/etc/hostname"
    printf '127.0.0.1\tlocalhost\n127.0.1.1\tdebian12\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$rootfs/etc/hosts"
    cat >"$rootfs/etc/network/interfaces" <<'INTERFACES'
# The first NIC is Vagrant's management network (DHCP); vagrant-libvirt adds private networks below.
source /etc/network/interfaces.d/*

auto lo
iface lo inet loopback

allow-hotplug eth0
iface eth0 inet dhcp
INTERFACES
    # The user Vagrant logs in as: no password, sudo without one, Vagrant's published insecure key (replaced
    # by a generated key at the first `vagrant up`).
    chroot "$rootfs" useradd --create-home --shell /bin/bash --groups sudo vagrant
    chroot "$rootfs" usermod --password '*' vagrant
    echo 'vagrant ALL=(ALL) NOPASSWD:ALL' >"$rootfs/etc/sudoers.d/vagrant"
    chmod 440 "$rootfs/etc/sudoers.d/vagrant"
    local key
    # Debian's package, then HashiCorp's.
    key=$(ls /usr/share/rubygems-integration/all/gems/vagrant-*/keys/vagrant.pub \
        /opt/vagrant/embedded/gems/gems/vagrant-*/keys/vagrant.pub 2>/dev/null | head -n 1 || true)
    [ -n "$key" ] || { say "Vagrant's insecure public key (keys/vagrant.pub) was not found"; return 1; }
    install -d -m 700 -o 1000 -g 1000 "$rootfs/home/vagrant/.ssh"
    install -m 600 -o 1000 -g 1000 "$key" "$rootfs/home/vagrant/.ssh/authorized_keys"
    [ "$(chroot "$rootfs" id -u vagrant)" = 1000 ] || { say "the vagrant user is not uid 1000"; return 1; }
    # Every VM its own SSH host keys and machine-id, made at first boot.
    rm -f "$rootfs"/etc/ssh/ssh_host_*
    mkdir -p "$rootfs/etc/systemd/system/ssh.service.d"
    printf '[Service]\nExecStartPre=\nExecStartPre=/usr/bin/ssh-keygen -A\nExecStartPre=/usr/sbin/sshd -t\n' \
        >"$rootfs/etc/systemd/system/ssh.service.d/host-keys.conf"
    : >"$rootfs/etc/machine-id"
    rm -f "$rootfs/var/lib/dbus/machine-id"
    # Vagrant waits for SSH: no reverse DNS lookups of the client.
    echo 'UseDNS no' >"$rootfs/etc/ssh/sshd_config.d/vagrant.conf"
    chroot "$rootfs" apt-get clean
    rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/log/*.log
}

[ -f "$box" ] || build
say "adding $box to Vagrant as $name"
vagrant box add --name "$name" "$box" >/dev/null
vagrant box list | grep -E "^$name " >&2
