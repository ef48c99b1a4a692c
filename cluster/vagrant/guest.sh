#!/usr/bin/env bash
# Runs inside a VM at `vagrant up` (the Vagrantfile's shell provisioner), as root:
#   guest.sh ROLE ADDRESS=NAME...
# 1. the role's own provisioning script, cluster/provision/ROLE.sh — the same one its container image runs;
# 2. what a VM needs beyond it: the role's processes as systemd units (a container's entrypoint; Debian's own
#    pcp and haproxy services, which would run as root with Debian's configs, are masked), capbench-apply
#    (which `make up` calls to apply a run's settings), and the bench's host names in /etc/hosts.
# Idempotent: `vagrant provision` runs it again after a change in the checkout.
set -euo pipefail
src=/opt/capbench/src
role=${1:-}
shift || true
case $role in
    node | lb | load | controller) ;;
    *) echo "guest.sh: ROLE '$role' is not one of node, lb, load, controller" >&2; exit 2 ;;
esac

# Installing a package must not start its service: the role's unit runs what this host runs.
printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
chmod 755 /usr/sbin/policy-rc.d
trap 'rm -f /usr/sbin/policy-rc.d' EXIT
# Debian's pcp ignores policy-rc.d: its postinst runs `systemctl start pmcd pmlogger` itself, under `sh -e`.
# On an emulated CPU pmlogger's start timed out and failed the install (node2 and node3 of a six-VM `vagrant
# up`). A condition that never holds makes those starts succeed without starting anything; the units are
# masked below anyway (the role's unit starts pmcd itself, as the image's entrypoint does).
for unit in pmcd pmlogger pmie pmproxy pmlogger_farm pmie_farm; do
    install -d "/etc/systemd/system/$unit.service.d"
    printf '[Unit]\nConditionPathExists=/nonexistent/capbench-starts-its-own-pcp\n' \
        >"/etc/systemd/system/$unit.service.d/capbench-not-at-install.conf"
done
systemctl daemon-reload
"$src/cluster/provision/$role.sh" all "$src"
# One systemctl call for all (each call costs seconds on an emulated CPU).
mapfile -t packaged < <(systemctl list-unit-files --no-legend 'pm*' 'haproxy*' | awk '$2 != "masked" {print $1}')
if [ ${#packaged[@]} -gt 0 ]; then
    systemctl stop "${packaged[@]}" >/dev/null 2>&1 || true
    systemctl mask "${packaged[@]}" >/dev/null
fi

# The bench's names, as Compose's DNS gives them to containers.
sed -i '/ # capbench bench$/d' /etc/hosts
for pair in "$@"; do
    [[ $pair =~ ^([0-9.]+)=([a-z0-9]+)$ ]] || { echo "guest.sh: '$pair' is not ADDRESS=NAME" >&2; exit 2; }
    echo "${BASH_REMATCH[1]} ${BASH_REMATCH[2]} # capbench bench" >>/etc/hosts
done

install -m 755 "$src/cluster/vagrant/capbench-apply" /opt/capbench/bin/capbench-apply
install -d -m 755 /etc/capbench
if [ -f "$src/cluster/vagrant/units/capbench-$role.service" ]; then
    install -m 644 "$src/cluster/vagrant/units/capbench-$role.service" /etc/systemd/system/
    systemctl daemon-reload
    # Started by capbench-apply once it has the run's settings; from then on at every boot.
    systemctl enable "capbench-$role.service" >/dev/null 2>&1
    # `vagrant provision` after a change: a running role takes the new files now (a first provisioning has
    # nothing running, so nothing restarts).
    systemctl try-restart "capbench-$role.service"
fi
echo "capbench: $(hostname) provisioned as $role"
