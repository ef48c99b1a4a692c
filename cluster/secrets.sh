#!/usr/bin/env bash
# Creates the checkout's generated secrets once, random per checkout and ignored by git, so no password is ever
# in the repository:
#   .capbench/secrets.env          the HAProxy stats/metrics credentials, readable only by its owner
#   .capbench/secrets/db_password  the database password of the nodes' role, handed to the database and the nodes
#                                  as a Compose secret (a file under /run/secrets, never in the environment or on a
#                                  command line); readable inside the containers' unprivileged users, on this
#                                  machine only through the owner's 700 folder.
#   .capbench/tls/                 the private certificate authority and the balancer's certificate (tls.sh)
# Prints the path of secrets.env.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
file=$root/.capbench/secrets.env
db_dir=$root/.capbench/secrets
# Letters, digits and '_' only (db/start admits A-Z a-z 0-9 _ -): one that began with '-' would read as an option
# to any tool handed it.
random_password() { head -c 18 /dev/urandom | base64 | tr '+/' '_z'; }
mkdir -p "$root/.capbench"
if [ ! -s "$file" ]; then
    (umask 077; printf 'STATS_USER=capbench\nSTATS_PASSWORD=%s\n' "$(random_password)" > "$file.tmp")
    mv "$file.tmp" "$file"
fi
if [ ! -s "$db_dir/db_password" ]; then
    install -d -m 700 "$db_dir"
    (umask 022; random_password > "$db_dir/db_password.tmp")
    mv "$db_dir/db_password.tmp" "$db_dir/db_password"
fi
"$root/cluster/tls.sh"
echo "$file"
