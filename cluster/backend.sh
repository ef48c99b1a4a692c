#!/usr/bin/env bash
# Prints the backend the cluster runs on: BACKEND if set (compose or vagrant), else vagrant when a machine of
# the Vagrantfile is running, else compose. The Makefile asks once and passes BACKEND to everything it runs.
set -euo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
case ${BACKEND:-} in
    compose | vagrant) echo "$BACKEND" ;;
    "") if "$here/vagrant/vm.sh" running; then echo vagrant; else echo compose; fi ;;
    *) echo "capbench: BACKEND='$BACKEND' is not allowed: use compose or vagrant (or leave it unset)" >&2; exit 2 ;;
esac
