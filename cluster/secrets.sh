#!/usr/bin/env bash
# Creates .capbench/secrets.env once: the HAProxy stats/metrics credentials, random per checkout, readable
# only by its owner and ignored by git, so no password is ever in the repository. Prints the file's path.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
file=$root/.capbench/secrets.env
if [ ! -s "$file" ]; then
    mkdir -p "$root/.capbench"
    umask 077
    password=$(head -c 18 /dev/urandom | base64 | tr '+/' '-_')
    printf 'STATS_USER=capbench\nSTATS_PASSWORD=%s\n' "$password" > "$file.tmp"
    mv "$file.tmp" "$file"
fi
echo "$file"
