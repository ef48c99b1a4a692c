# shellcheck shell=bash
# Helpers for the per-role provisioning scripts. The same scripts set up a container image (Dockerfile RUN)
# and, later, a VM, so everything here is idempotent and works as root on plain Debian 12.

# apt_install PACKAGE...: installs without recommends, then drops the package lists.
apt_install() {
    export DEBIAN_FRONTEND=noninteractive
    # Slim images exclude man pages, but openjdk's postinst links into man1 and fails without the folder.
    mkdir -p /usr/share/man/man1
    apt-get update -q
    apt-get install -y -q --no-install-recommends "$@"
    apt-get clean
    rm -rf /var/lib/apt/lists/*
}

# ensure_user NAME HOME [ID]: a system account with no login shell, created once; with ID, its uid and its
# group's gid are ID (a host's TLS key on the machine that starts it is owned by that number: cluster/tls.sh).
ensure_user() {
    local name=$1 home=$2 id=${3-}
    id -u "$name" >/dev/null 2>&1 && return 0
    if [ -z "$id" ]; then
        useradd --system --user-group --home-dir "$home" --no-create-home --shell /usr/sbin/nologin "$name"
        return 0
    fi
    getent group "$name" >/dev/null || groupadd --system --gid "$id" "$name"
    useradd --system --uid "$id" --gid "$name" --home-dir "$home" --no-create-home --shell /usr/sbin/nologin "$name"
}

# install_healthy SRC: the roles' health check, which compose.yaml's healthchecks and the VMs run.
install_healthy() {
    install -D -m 755 "$1/cluster/provision/healthy" /opt/capbench/bin/healthy
}

# Runs the role's step named by $1: packages (slow, rarely changes), install SRC (config and artifacts from a
# capbench checkout at SRC), or all SRC.
provision_main() {
    case ${1:-} in
        packages) packages ;;
        install) install_files "${2:?usage: $0 install SRC}" ;;
        all) packages; install_files "${2:?usage: $0 all SRC}" ;;
        *) echo "usage: $0 packages | install SRC | all SRC" >&2; return 2 ;;
    esac
}

# The hosts that run our own tools (load, controller): tini, CA certificates and the packages the role names,
# and the unprivileged user capbench with a home.
tool_host_packages() {
    apt_install ca-certificates tini "$@"
    ensure_user capbench /home/capbench
    install -d -m 750 -o capbench -g capbench /home/capbench
}

# PCP for a monitored host (node, lb, load, db): Debian's pcp and, for its openmetrics agent, python3-requests.
PCP_PACKAGES=(pcp python3-requests)

# install_pcp_host ROLE USER SRC: the role's pmcd agents, hotproc predicate and openmetrics sources from
# SRC/metrics/hosts/ROLE, the with-pmcd entrypoint, and the names pmcd serves. pmcd and its agents run as
# USER, which joins group pcp to write PCP's log and state directories.
install_pcp_host() {
    local role=$1 user=$2 src=$3 hosts=$3/metrics/hosts/$1 dir=/opt/capbench/pcp
    install -d -m 755 "$dir" /opt/capbench/bin
    install -m 644 "$hosts/pmcd.conf" "$dir/pmcd.conf"
    install -m 644 "$hosts/hotproc.conf" /var/lib/pcp/pmdas/proc/hotproc.conf
    install -m 755 "$src/metrics/with-pmcd" /opt/capbench/bin/with-pmcd
    local namespaces=(/usr/lib/pcp/pmns/root_pmcd /usr/lib/pcp/pmns/root_linux /usr/lib/pcp/pmns/root_proc)
    if [ -d "$hosts/openmetrics" ]; then
        install -d -m 755 "$dir/openmetrics"
        # A .url file names an endpoint; an executable is a script whose output the agent reads (its mode kept).
        local source
        for source in "$hosts"/openmetrics/*; do
            install -m "$([ -x "$source" ] && echo 755 || echo 644)" "$source" "$dir/openmetrics/"
        done
        # The openmetrics agent's names are dynamic: the whole subtree belongs to its domain (144).
        printf 'root {\n\topenmetrics\t144:*:*\n}\n' > "$dir/root_openmetrics"
        namespaces+=("$dir/root_openmetrics")
    fi
    /usr/lib/pcp/bin/pmnsmerge -f "${namespaces[@]}" /var/lib/pcp/pmns/root
    usermod -a -G pcp "$user"
    install -d -m 775 -o pcp -g pcp /run/pcp
}
