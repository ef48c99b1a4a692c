#!/usr/bin/env bash
# What the host needs to run the VMs, for a machine that may have none of it:
#   host.sh ensure   on Debian as root: install Vagrant, vagrant-libvirt, libvirt and QEMU/KVM where missing,
#                    and start libvirtd (and virtlogd) where no init system manages them; elsewhere, say what
#                    to do. A machine with a running libvirt and Vagrant's libvirt plugin is left unchanged.
#   host.sh driver   which libvirt driver the VMs use: boots the box debian/bookworm64 under KVM for up to 90 s
#                    (on a throw-away snapshot); kvm if it reaches its login prompt, else qemu (software
#                    emulation: nested KVM in some clouds starts a guest and then fails in its boot code).
#                    Prints it and writes it to .capbench/vagrant/libvirt-driver, which the Vagrantfile reads.
#   host.sh stop     stop the libvirtd and virtlogd that `ensure` started (recorded in .capbench/), nothing else
# VirtualBox users install VirtualBox and Vagrant themselves (docs/guides/vagrant.md) and need none of this.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
state=$root/.capbench/vagrant
PACKAGES=(vagrant vagrant-libvirt libvirt-daemon-system libvirt-clients qemu-system-x86 qemu-utils dnsmasq-base
    iptables ebtables rsync openssh-client)

say() { echo "capbench: $*" >&2; }
libvirt_up() { virsh -c qemu:///system version >/dev/null 2>&1; }
plugin_ok() { vagrant plugin list 2>/dev/null | grep -q '^vagrant-libvirt '; }
systemd_is_init() { [ "$(cat /proc/1/comm 2>/dev/null)" = systemd ]; }

install_packages() {
    command -v vagrant >/dev/null && command -v virsh >/dev/null && plugin_ok && return 0
    if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
        say "install Vagrant, the vagrant-libvirt plugin and libvirt with QEMU/KVM (docs/guides/vagrant.md), then run this again"
        return 1
    fi
    say "installing Debian's ${PACKAGES[*]}"
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${PACKAGES[@]}" >/dev/null
}

start_libvirt() {
    libvirt_up && return 0
    [ -e /dev/kvm ] || say "warning: no /dev/kvm: the VMs will run under software emulation, far slower"
    if systemd_is_init; then
        [ "$(id -u)" -eq 0 ] || { say "libvirtd is not running: sudo systemctl start libvirtd"; return 1; }
        systemctl start libvirtd
    else
        [ "$(id -u)" -eq 0 ] || { say "libvirtd is not running: start virtlogd and libvirtd (as root)"; return 1; }
        # No init system manages services here (a container or CI sandbox): start them ourselves and remember
        # their pids, so `host.sh stop` stops exactly what was started.
        mkdir -p "$state"
        say "starting virtlogd and libvirtd (logs: .capbench/vagrant/)"
        pgrep -x virtlogd >/dev/null || { virtlogd >"$state/virtlogd.log" 2>&1 & echo $! >"$state/virtlogd.pid"; }
        libvirtd >"$state/libvirtd.log" 2>&1 &
        echo $! >"$state/libvirtd.pid"
    fi
    for _ in $(seq 30); do libvirt_up && return 0; sleep 1; done
    say "libvirtd did not answer within 30 s; last lines of its log:"
    tail -n 20 "$state/libvirtd.log" >&2 2>/dev/null || true
    return 1
}

driver() {
    local box driver=qemu log
    box=$(ls "${VAGRANT_HOME:-$HOME/.vagrant.d}"/boxes/debian-VAGRANTSLASH-bookworm64/*/libvirt/box.img 2>/dev/null \
        | tail -n 1 || true)
    [ -n "$box" ] || { say "no libvirt box debian/bookworm64 to boot: make vagrant-box"; return 1; }
    mkdir -p "$state"
    log=$state/kvm-probe.log
    if [ -e /dev/kvm ]; then
        rm -f "$log.serial"
        timeout 90 qemu-system-x86_64 -enable-kvm -cpu host,-arch-capabilities -m 512 -display none -monitor none \
            -no-reboot -serial "file:$log.serial" -drive "file=$box,if=virtio,snapshot=on" >"$log" 2>&1 &
        local qemu=$!
        for _ in $(seq 90); do
            grep -aq 'login:' "$log.serial" 2>/dev/null && { driver=kvm; break; }
            # QEMU stays up, paused, after KVM gives up on the guest's code.
            grep -aq 'KVM internal error' "$log" && break
            kill -0 "$qemu" 2>/dev/null || break
            sleep 1
        done
        kill "$qemu" 2>/dev/null || true
        wait "$qemu" 2>/dev/null || true
    fi
    if [ $driver = qemu ]; then
        say "KVM cannot boot the box here ($(grep -m1 -aE 'error|failure' "$log" 2>/dev/null || echo 'no /dev/kvm or no login prompt in 90 s')):"
        say "the VMs run under QEMU's software emulation (driver qemu), many times slower than KVM"
    fi
    echo "$driver" >"$state/libvirt-driver"
    echo "$driver"
}

stop() {
    local name pid
    for name in libvirtd virtlogd; do
        [ -f "$state/$name.pid" ] || continue
        pid=$(cat "$state/$name.pid")
        if kill -0 "$pid" 2>/dev/null; then
            say "stopping the $name that capbench started (pid $pid)"
            kill "$pid"
        fi
        rm -f "$state/$name.pid"
    done
}

case ${1:-} in
    ensure) install_packages && start_libvirt ;;
    driver) driver ;;
    stop) stop ;;
    *) echo "usage: $0 ensure | driver | stop" >&2; exit 2 ;;
esac
