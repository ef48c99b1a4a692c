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

# ensure_user NAME HOME: a system account with no login shell, created once.
ensure_user() {
    if ! id -u "$1" >/dev/null 2>&1; then
        useradd --system --user-group --home-dir "$2" --no-create-home --shell /usr/sbin/nologin "$1"
    fi
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
