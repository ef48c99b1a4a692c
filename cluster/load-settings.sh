# shellcheck shell=bash
# Sourced by cluster/compose.sh and cluster/vagrant/up.sh: puts the capbench settings into the environment —
# the profile (PROFILE=small by default), the Tomcat tunables and the stats credentials — and checks them all,
# so a bad value stops here with a message instead of half-starting the cluster. Exits 2 on a bad setting.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=cluster/settings.sh
source "$root/cluster/settings.sh"

PROFILE=${PROFILE:-small}
profile_file=$root/cluster/profiles/$PROFILE.env
if [[ ! $PROFILE =~ ^[a-z0-9_-]+$ ]] || [ ! -f "$profile_file" ]; then
    allowed=$(find "$root/cluster/profiles" -name '*.env' -printf '%f\n' | sed 's/\.env$//' | sort | paste -sd, - \
        | sed 's/,/, /g')
    echo "capbench: PROFILE='$PROFILE' is not a profile: use one of $allowed (files in cluster/profiles/)" >&2
    exit 2
fi
secrets_file=$root/.capbench/secrets.env
if [ ! -f "$secrets_file" ]; then
    "$root/cluster/secrets.sh" >/dev/null
fi

settings_load_file "$profile_file"
settings_load_file "$root/tomcat-conf/tunables.env"
settings_load_file "$secrets_file"
# BENCH_NET_PREFIX: the bench network is $BENCH_NET_PREFIX.0/24, fixed so that each host's pmcd can admit
# exactly that network (the controller) and nothing else. Compose's is 10.89.0, the Vagrantfile's 10.89.2.
export PROFILE STATS_PORT=${STATS_PORT:-8404} BENCH_NET_PREFIX=${BENCH_NET_PREFIX:-10.89.0}

check_profile
check_tunables
check_int STATS_PORT 0 65535
check_net_prefix BENCH_NET_PREFIX
settings_report || exit 2
