# shellcheck shell=bash
# capbench settings: load the settings files into the environment and validate them. Sourced by
# cluster/compose.sh on the host and by the node's run-tomcat.sh inside the container, so one set of rules
# decides what is allowed, before anything starts.
#
# Sources, highest priority first: the environment (e.g. `make up TOMCAT_MAX_THREADS=16`), then
# cluster/profiles/$PROFILE.env (per-node sizes, GC, weights), tomcat-conf/tunables.env (connector and
# thread pool), and .capbench/secrets.env (generated stats credentials).

SETTINGS_ERRORS=()

# The check_* functions record what is wrong and always return 0, so callers under `set -e` see every error
# at once; settings_report then prints them and fails.

# Reads KEY=value lines; a key already in the environment keeps its value (the environment wins).
settings_load_file() {
    local file=$1 line key value
    while IFS= read -r line || [ -n "$line" ]; do
        [[ $line =~ ^([A-Z][A-Z0-9_]*)=(.*)$ ]] || continue
        key=${BASH_REMATCH[1]}
        value=${BASH_REMATCH[2]}
        if [ -z "${!key+set}" ]; then
            printf -v "$key" '%s' "$value"
            export "${key?}"
        fi
    done < "$file"
}

# settings_keys FILE...: the keys the files set, each once, sorted.
settings_keys() {
    sed -n 's/^\([A-Z][A-Z0-9_]*\)=.*/\1/p' "$@" | sort -u
}

settings_error() {
    SETTINGS_ERRORS+=("$*")
}

# check_int NAME MIN MAX [EXTRA_ALLOWED]: an integer in [MIN, MAX], or exactly EXTRA_ALLOWED (e.g. -1).
check_int() {
    local name=$1 min=$2 max=$3 extra=${4:-} value=${!1-}
    if [ -n "$extra" ] && [ "$value" = "$extra" ]; then
        return 0
    fi
    local allowed="an integer from $min to $max${extra:+, or $extra}"
    # No leading zeros: bash arithmetic would read 010 as octal.
    if ! [[ $value =~ ^-?(0|[1-9][0-9]{0,8})$ ]] || [ "$value" -lt "$min" ] || [ "$value" -gt "$max" ]; then
        settings_error "$name='$value' is not allowed: use $allowed"
    fi
}

# check_choice NAME CHOICE...
check_choice() {
    local name=$1 value=${!1-} choice
    shift
    for choice in "$@"; do
        [ "$value" = "$choice" ] && return 0
    done
    settings_error "$name='$value' is not allowed: use one of $*"
}

# check_size NAME MIN_MIB: a memory size such as 512m or 2g (Docker and the JVM read both), at least MIN_MIB.
check_size() {
    local name=$1 min=$2 value=${!1-}
    if [ -z "$(size_mib "$value")" ] || [ "$(size_mib "$value")" -lt "$min" ]; then
        settings_error "$name='$value' is not allowed: use a size of at least ${min}m, written like 512m or 2g"
    fi
}

# size_mib SIZE: prints the size in MiB, or nothing when SIZE is not of the form <digits>[m|g].
size_mib() {
    if [[ $1 =~ ^([1-9][0-9]{0,6})m$ ]]; then
        echo "${BASH_REMATCH[1]}"
    elif [[ $1 =~ ^([1-9][0-9]{0,3})g$ ]]; then
        echo $(( BASH_REMATCH[1] * 1024 ))
    fi
}

# check_cpus NAME: a CPU quota in cores, 0.05 to 64, at most two decimals.
check_cpus() {
    local name=$1 value=${!1-} thousandths
    # 0: no quota, the node gets its whole machine (the hosts profile, for nodes on machines of their own).
    [ "$value" = 0 ] && return 0
    # Thousandths: a duet's build 5 % below a twin of 0.5 is 0.475.
    if [[ $value =~ ^([0-9]{1,2})(\.([0-9]{1,3}))?$ ]]; then
        local frac=${BASH_REMATCH[3]:-0}
        while [ ${#frac} -lt 3 ]; do frac="${frac}0"; done
        thousandths=$(( 10#${BASH_REMATCH[1]} * 1000 + 10#$frac ))
        if [ "$thousandths" -ge 50 ] && [ "$thousandths" -le 64000 ]; then
            return 0
        fi
    fi
    settings_error "$name='$value' is not allowed: use a CPU quota in cores from 0.05 to 64 (at most three decimals), like 0.5 or 0.475, or 0 for none (the node's whole machine)"
}

# The connector and thread-pool tunables (tomcat-conf/tunables.env), as Tomcat 10.1 accepts them.
check_tunables() {
    check_choice TOMCAT_PROTOCOL nio nio2
    check_int TOMCAT_MAX_THREADS 1 10000
    # Above maxThreads it is lowered to maxThreads when applied (run-tomcat.sh), as Tomcat's own connector does.
    check_int TOMCAT_MIN_SPARE_THREADS 0 10000
    check_int TOMCAT_ACCEPT_COUNT 1 65535
    check_int TOMCAT_MAX_CONNECTIONS 1 1000000 -1
    check_int TOMCAT_CONNECTION_TIMEOUT 1 3600000 -1
    if [ -n "${TOMCAT_KEEP_ALIVE_TIMEOUT-}" ]; then
        check_int TOMCAT_KEEP_ALIVE_TIMEOUT 1 3600000 -1
    fi
    check_int TOMCAT_MAX_KEEP_ALIVE_REQUESTS 1 1000000 -1
    check_choice NODE_HTTP 1.1 2
    check_int TOMCAT_H2_MAX_CONCURRENT_STREAMS 1 100000
    check_int TOMCAT_H2_MAX_CONCURRENT_STREAM_EXECUTION 1 100000
    # Within HTTP/2's own bound, 2^31-1 bytes (RFC 9113 §6.9.2).
    check_int TOMCAT_H2_INITIAL_WINDOW_SIZE 1 100000000
    check_int DB_POOL_SIZE 1 200
    check_int DB_POOL_TIMEOUT_MS 250 600000
    check_choice DB_CONNECTION_SCOPE request call
    check_int DB_CACHE_SIZE 0 1000000
    check_int DB_CACHE_TTL_S 1 86400
    check_choice TOMCAT_SESSION_REPLICATION 0 1
}

# One node's JVM settings: heap and collector.
check_jvm() {
    local prefix=$1
    local heap=${prefix}HEAP gc=${prefix}GC
    check_size "$heap" 32
    check_choice "$gc" auto serial parallel g1 zgc
}

# A node's profile fields: node2's are NODE2_CPUS, NODE2_MEM, … A profile may give every node the same value
# once (NODE_CPUS=0.3), for any number of nodes; a node's own key wins.
NODE_FIELDS=(CPUS MEM HEAP GC WEIGHT MAXCONN)

# settings_fill_nodes NODE...: each node's fields that are not set, from the profile's NODE_* where it has them.
settings_fill_nodes() {
    local node field key default
    for node in "$@"; do
        for field in "${NODE_FIELDS[@]}"; do
            key=${node^^}_$field default=NODE_$field
            if [ -z "${!key+set}" ] && [ -n "${!default+set}" ]; then
                printf -v "$key" '%s' "${!default}"
                export "${key?}"
            fi
        done
    done
}

# check_profile NODE...: the cluster profile (cluster/profiles/*.env) for these nodes (cluster/topology.sh):
# per-node quota, memory, heap, GC, balancer weight and maxconn; node2's keys are NODE2_*.
check_profile() {
    local node
    for node in "$@"; do
        local key=${node^^}
        local cpus=${key}_CPUS mem=${key}_MEM heap=${key}_HEAP
        if [ -z "${!cpus+set}" ]; then
            settings_error "$node has no settings: profile ${PROFILE:-small} describes its nodes one by one and not" \
                "$node; set ${key}_{$(IFS=,; echo "${NODE_FIELDS[*]}")} (or NODE_* for every node), fewer" \
                "NODES, or PROFILE=homogeneous"
            continue
        fi
        check_cpus "$cpus"
        check_jvm "${key}_"
        check_size "$mem" 64
        local heap_mib mem_mib
        heap_mib=$(size_mib "${!heap-}")
        mem_mib=$(size_mib "${!mem-}")
        if [ -n "$heap_mib" ] && [ -n "$mem_mib" ] && [ "$heap_mib" -ge "$mem_mib" ]; then
            settings_error "$heap=${!heap} is not allowed: the heap must be smaller than $mem=${!mem} (the JVM needs memory beyond its heap)"
        fi
        check_int "${key}_WEIGHT" 1 256
        check_int "${key}_MAXCONN" 0 100000
    done
    check_choice LB_BALANCE roundrobin leastconn
    check_choice LB_STICKY none user cookie
    check_choice TLS off lb both node
    # TLS=node passes the client's TLS through the balancer (TCP mode, haproxy.cfg): it reads no request, so it
    # cannot keep a user with a node.
    if [ "${TLS-}" = node ] && [ "${LB_STICKY:-none}" != none ]; then
        settings_error "LB_STICKY=$LB_STICKY is not allowed with TLS=node: the balancer passes the client's TLS" \
            "through to the nodes and reads no request, user or cookie; use LB_STICKY=none, or TLS=lb or both"
    fi
    [ -z "${LB_LOG_REQUESTS-}" ] || check_choice LB_LOG_REQUESTS 0 1
    check_size LB_MEM 64
    check_size LOAD_MEM 64
    check_size CONTROLLER_MEM 64
    check_cpus DB_CPUS
    check_size DB_MEM 128
}

# check_net_prefix NAME: the first three numbers of an IPv4 /24 network, e.g. 10.89.0.
check_net_prefix() {
    local name=$1 value=${!1-} octet='(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])'
    if ! [[ $value =~ ^$octet\.$octet\.$octet$ ]]; then
        settings_error "$name='$value' is not allowed: use the first three numbers of a free IPv4 /24 network, e.g. 10.89.0"
    fi
}

# The application's JVM options (cluster/app.env): catalina.sh passes JAVA_OPTS through eval, so each option is
# held to characters that the shell reads as themselves (no quoting, expansion, redirection or globbing).
check_app_java_opts() {
    check_words APP_JAVA_OPTS "JVM options"
}

# check_words KEY WHAT: KEY's value is WHAT separated by spaces, each of characters no shell or start script
# (catalina.sh evaluates JAVA_OPTS) reads as anything but text.
check_words() {
    local key=$1 what=$2 value=${!1-} word words
    read -r -a words <<<"$value"  # split at spaces, never globbed
    for word in "${words[@]}"; do
        if ! [[ $word =~ ^[A-Za-z0-9_.:=+,/@%-]+$ ]]; then
            settings_error "$key='$value' is not allowed: use $what separated by spaces, each of letters, digits" \
                "and - _ . : = + , / @ % only (no quotes, \$, backticks, ; & | or other shell characters: the" \
                "nodes' start scripts evaluate them)"
            return 0
        fi
    done
}

# APP_CONTEXT_RESERVED: the Grinder's context when an application takes the nodes' others (cluster/provision/node.sh).
APP_CONTEXT_RESERVED=capbench

# check_app: the application of cluster/app.env, on the machine that brings the cluster up (the WAR is read
# here; the node gets it staged, cluster/app.sh).
check_app() {
    local war=${APP_WAR-} context=${APP_CONTEXT-} health=${APP_HEALTH-}
    if [ -n "$war" ]; then
        if [ -d "$war" ] || [ ! -e "$war" ]; then
            settings_error "APP_WAR='$war' is not allowed: it is not a file; use the path of a .war file on this" \
                "machine, or leave it empty for none"
        elif [ ! -r "$war" ]; then
            settings_error "APP_WAR='$war' is not allowed: it cannot be read; use a .war file this user can read"
        elif ! war_is_webapp "$war"; then
            settings_error "APP_WAR='$war' is not allowed: it is not a web application archive; use a .war (a zip" \
                "holding WEB-INF/)"
        fi
    fi
    # A context path as Tomcat names its files (shop/v2 → shop#v2.war): segments of safe characters, none of
    # them . or .., and not the Grinder's own.
    local segment='[A-Za-z0-9._-]+'
    if ! [[ $context =~ ^$segment(/$segment)*$ ]] || [[ /$context/ =~ /\.\.?/ ]]; then
        settings_error "APP_CONTEXT='$context' is not allowed: use ROOT (for /) or a path without its leading and" \
            "trailing /, of letters, digits and . _ - in segments separated by /, like examples or shop/v2"
    elif [ "${context%%/*}" = "$APP_CONTEXT_RESERVED" ]; then
        settings_error "APP_CONTEXT='$context' is not allowed: /$APP_CONTEXT_RESERVED is the Grinder's (the" \
            "harness's /info, /health and /grind); use another name"
    fi
    # It goes into HAProxy's config as a quoted string and into the health checks' URL.
    if ! [[ $health =~ ^/[A-Za-z0-9._~/?=\&%:@+,-]*$ ]]; then
        settings_error "APP_HEALTH='$health' is not allowed: use a path starting with /, of letters, digits and" \
            "- . _ ~ / ? = & % : @ + , (no spaces or quotes), like /examples/index.html"
    fi
    check_app_jar "$war"
    # TLS=both's and TLS=node's node leg ends at Tomcat's own connector (tomcat-conf/render-config.sh), which a JAR's server
    # does not read.
    if [ -n "${APP_JAR-}" ] && { [ "${TLS-}" = both ] || [ "${TLS-}" = node ]; }; then
        settings_error "TLS=$TLS is not allowed with APP_JAR='$APP_JAR' yet: the nodes' TLS connector is Tomcat's" \
            "server.xml, which an executable JAR does not run; use TLS=lb (TLS ends at the balancer) or TLS=off"
    fi
    check_app_java_opts
    # Unset where a node's provisioning checks the application it installs (only the machine that starts it waits,
    # and stages it: converted there, if at all).
    [ -z "${APP_START_S+set}" ] || check_int APP_START_S 1 3600
    [ -z "${APP_MIGRATE+set}" ] || check_choice APP_MIGRATE auto off
}

# check_app_jar WAR: APP_JAR, an executable JAR the nodes run instead of Tomcat (tomcat-conf/run-jar.sh): one
# application a node, a JAR java -jar starts (capbench/hosts/app_jar.py reads its manifest), its arguments, and the
# tunables it can take.
check_app_jar() {
    local war=$1 jar=${APP_JAR-} found status=0
    check_words APP_JAR_ARGS "arguments for the JAR"
    [ -n "$jar" ] || return 0
    if [ -n "$war" ]; then
        settings_error "APP_WAR and APP_JAR are both set ('$war', '$jar'): a node runs one application; set one and" \
            "leave the other empty"
    elif [ -d "$jar" ] || [ ! -e "$jar" ]; then
        settings_error "APP_JAR='$jar' is not allowed: it is not a file; use the path of an executable .jar on this" \
            "machine, or leave it empty for none"
    elif [ ! -r "$jar" ]; then
        settings_error "APP_JAR='$jar' is not allowed: it cannot be read; use a .jar file this user can read"
    else
        found=$(python3 "$(dirname "${BASH_SOURCE[0]}")/../capbench/hosts/app_jar.py" "$jar") || status=$?
        if [ "$status" -ne 0 ]; then
            settings_error "APP_JAR='$jar' is not allowed: $found; use an executable JAR (one java -jar starts)"
        else
            check_jar_tunables "${found%% *}"
        fi
    fi
}

# check_jar_tunables KIND: each tunable that a JAR of KIND (spring-boot, or main: any other) cannot take, refused by
# name when it differs from tomcat-conf/tunables.env's default. A Spring Boot JAR takes the connector's settings as
# its server.tomcat.* properties (tomcat-conf/run-jar.sh); any other server has its own names for them, and the
# database pool and the session replication are Tomcat's, which a JAR does not run.
check_jar_tunables() {
    local kind=$1 key default value why
    while IFS='=' read -r key default; do
        [[ $key =~ ^[A-Z][A-Z0-9_]*$ ]] || continue
        value=${!key-}
        [ "$value" != "$default" ] || continue
        case $kind:$key in
            spring-boot:TOMCAT_PROTOCOL) why="Spring Boot's embedded Tomcat runs NIO only (capbench passes no other)" ;;
            spring-boot:TOMCAT_SESSION_REPLICATION | main:TOMCAT_SESSION_REPLICATION)
                why="session replication is the Tomcat nodes' cluster, which a JAR does not run" ;;
            spring-boot:TOMCAT_H2_*)
                why="Spring Boot names no property for Tomcat's HTTP/2 settings (NODE_HTTP=2 turns its HTTP/2 on:"
                why+=" server.http2.enabled); leave them at Tomcat's defaults" ;;
            main:NODE_HTTP) why="capbench cannot turn HTTP/2 on in a server that is not Spring Boot's: use NODE_HTTP=1.1" ;;
            spring-boot:TOMCAT_*) continue ;;
            main:TOMCAT_*)
                why="a JAR that is not Spring Boot's takes no connector settings from capbench: pass its server's own"
                why+=" in APP_JAR_ARGS" ;;
            *:DB_*)
                why="the database pool is the Tomcat nodes' DataSource; a JAR brings its own pool (for Spring Boot:"
                why+=" APP_JAR_ARGS=--spring.datasource.hikari.maximum-pool-size=N)" ;;
            *) continue ;;
        esac
        settings_error "$key=$value is not allowed with APP_JAR='$APP_JAR': $why"
    done <"$(dirname "${BASH_SOURCE[0]}")/../tomcat-conf/tunables.env"
}

# start_s CPUS: APP_START_S for a node of CPUS (0: no quota), scaled by 0.5 / CPUS below half a core.
start_s() {
    awk -v s="${APP_START_S:-90}" -v c="$1" 'BEGIN { if (c > 0 && c < 0.5) s = s * 0.5 / c; printf "%d\n", s + 0.5 }'
}

# export_start_windows NODE...: each node's start window, NODEn_START_S (start_s of its quota), which every
# backend's health check honours (Compose's and Swarm's start period, the VMs' wait), and the longest of them,
# CAPBENCH_START_S, which is how long a bring-up waits for the nodes at least.
export_start_windows() {
    local node key cpus longest=0
    for node in "$@"; do
        key=${node^^}_START_S cpus=${node^^}_CPUS
        printf -v "$key" '%s' "$(start_s "${!cpus}")"
        export "${key?}"
        [ "${!key}" -le "$longest" ] || longest=${!key}
    done
    export CAPBENCH_START_S=$longest
}

# tomcat_doing LOG_LINES SECONDS: what a Tomcat that has not answered yet was doing, in one sentence, from its log:
# still deploying an archive (deployment started, not finished), deployed but its connector not open, or serving.
tomcat_doing() {
    local lines=$1 seconds=$2 archive
    archive=$(grep -oE 'Deploying web application archive \[[^]]+\]' <<<"$lines" | tail -n 1 \
        | sed -E 's/.*\[(.*)\]/\1/' || true)
    if [ -z "$lines" ]; then
        echo "its Tomcat had logged nothing after $seconds s"
    elif ! grep -q 'Deploying web application archive' <<<"$lines"; then
        echo "its Tomcat was still starting (no application deployed yet) after $seconds s"
    elif ! grep -qF "Deployment of web application archive [$archive] has finished" <<<"$lines"; then
        echo "its Tomcat was still deploying $(basename "$archive") after $seconds s"
    elif ! grep -q 'Starting ProtocolHandler' <<<"$lines"; then
        echo "its Tomcat had deployed its applications but not opened its connector after $seconds s"
    else
        echo "its Tomcat was serving after $seconds s"
    fi
}

# war_is_webapp FILE: a zip (a .war is one) with an entry under WEB-INF/.
war_is_webapp() {
    python3 - "$1" <<'PY' 2>/dev/null
import sys
import zipfile
try:
    with zipfile.ZipFile(sys.argv[1]) as war:
        sys.exit(0 if any(name.startswith("WEB-INF/") for name in war.namelist()) else 1)
except (OSError, zipfile.BadZipFile):
    sys.exit(1)
PY
}

# Prints every error found, one per line, and fails if there was any.
settings_report() {
    local error
    [ ${#SETTINGS_ERRORS[@]} -eq 0 ] && return 0
    for error in "${SETTINGS_ERRORS[@]}"; do
        echo "capbench: $error" >&2
    done
    return 1
}
