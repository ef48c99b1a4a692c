#!/usr/bin/env bash
# Runs `docker compose` on compose.yaml with the capbench settings in its environment (cluster/load-settings.sh:
# the profile, the Tomcat tunables and the stats credentials, all validated first).
#   cluster/compose/compose.sh ps       cluster/compose/compose.sh exec load curl -s http://lb:8080/grind
set -euo pipefail
# shellcheck source=cluster/load-settings.sh
source "$(dirname "${BASH_SOURCE[0]}")/../load-settings.sh"

exec docker compose --project-directory "$root" -f "$root/compose.yaml" "$@"
