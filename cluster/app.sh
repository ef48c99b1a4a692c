#!/usr/bin/env bash
# A user's application on the nodes (cluster/app.env: APP_WAR or APP_JAR, APP_CONTEXT, APP_HEALTH, APP_JAVA_OPTS),
# made ready before `make up` touches the cluster:
#   app.sh stage     the WAR copied into .capbench/app/PROJECT/ (APP_STAGED: app.war, its sha256, the context;
#                    a WAR built for javax.servlet converted to jakarta.servlet first, APP_MIGRATE), where the
#                    node image with the application (cluster/images/node-app.Dockerfile) and the VMs
#                    (vagrant/up.sh) take it
#   app.sh image     stage, then capbench-node-app:PROJECT built from capbench-node, only when the WAR, its
#                    context or the node image changed; a trial node of it, alone, must deploy the application
#                    and answer APP_HEALTH before the nodes may run it (compose/up.sh, capbench/hosts/swarm.py, before they
#                    re-create any)
#   app.sh prepare WAR OUT
#                    WAR as the nodes' Tomcat can run it (stage's step): converted when built for javax.servlet
#   app.sh build FILE one build of the application for a duet's slot (DUET_B="WAR=…", or "JAR=…" when the cluster
#                    runs APP_JAR; capbench/duet/builds.py): the same staging, image and trial for FILE, in
#                    .capbench/app-builds/SHA/ and capbench-node-app:SHA (SHA: the first 16 digits of its sha256),
#                    whose name is printed; the context, health path and a JAR's arguments are the cluster's
#                    (APP_CONTEXT, APP_HEALTH, APP_JAR_ARGS), which both builds share
# An executable JAR (APP_JAR) is staged and tried the same way (no conversion, no Grinder beside it). Without
# APP_WAR or APP_JAR both do nothing: the nodes run capbench-node with the Grinder at /. Exit 2 when the
# application is refused (a bad setting, or one that does not start: its log lines are shown), 1 when Docker fails.
set -euo pipefail
# shellcheck source=cluster/load-settings.sh
source "$(dirname "${BASH_SOURCE[0]}")/load-settings.sh"

staged=$APP_STAGED
BASE_IMAGE=capbench-node:latest
# How long a trial node (node1's quota) may take to deploy the application and answer: node1's start window
# (cluster/settings.sh's export_start_windows: APP_START_S, scaled for a quota under half a core), the one its
# health check honours in the cluster. A JVM, Tomcat and the Grinder start in about 15 s within
# the smallest node's quota here; the rest is the application's.
TRIAL_S=$NODE1_START_S
# How long the application may answer other than 200 once Tomcat is serving (an application that starts lazily).
SETTLE_S=10
say() { echo "capbench: $*" >&2; }

# write_if_changed FILE TEXT: FILE holds TEXT (and its mtime moves only when TEXT is new).
write_if_changed() {
    [ "$(cat "$1" 2>/dev/null)" = "$2" ] || printf '%s\n' "$2" >"$1"
}

stage() {
    [ -z "${APP_JAR-}" ] || { stage_jar; return 0; }
    [ -n "${APP_WAR-}" ] || return 0
    local source
    source="$(sha256sum "$APP_WAR" | cut -d' ' -f1) APP_MIGRATE=$APP_MIGRATE"
    if needs_staging "$source" app.war; then
        prepare "$APP_WAR" "$staged/app.war.tmp"
        [ ! -f "$staged/app.war.tmp.migrated" ] || mv "$staged/app.war.tmp.migrated" "$staged/migrated"
        mv "$staged/app.war.tmp" "$staged/app.war"
        printf '%s\n' "$source" >"$staged/source"
        say "staged $APP_WAR (sha256 ${source:0:16}) for /${APP_CONTEXT#ROOT}"
    fi
    write_if_changed "$staged/sha256" "$(sha256sum "$staged/app.war" | cut -d' ' -f1)"
    write_if_changed "$staged/context" "$APP_CONTEXT"
}

# needs_staging SOURCE FILE: whether FILE must be staged again (what it was staged from, SOURCE, changed, or it is
# missing); when it must, what an earlier application left in the folder (a WAR's or a JAR's files) is removed.
needs_staging() {
    mkdir -p "$staged"
    [ "$(cat "$staged/source" 2>/dev/null)" != "$1" ] || [ ! -f "$staged/$2" ] || return 1
    rm -f "$staged/app.war" "$staged/context" "$staged/migrated" "$staged/app.jar" "$staged/kind" "$staged/source"
}

# stage_jar: the executable JAR copied into APP_STAGED as it is (app.jar, its sha256), with what it is
# (kind: capbench/hosts/app_jar.py's line, which tomcat-conf/run-jar.sh reads to start it).
stage_jar() {
    local source
    source="$(sha256sum "$APP_JAR" | cut -d' ' -f1) jar"
    if needs_staging "$source" app.jar; then
        cp "$APP_JAR" "$staged/app.jar.tmp"
        mv "$staged/app.jar.tmp" "$staged/app.jar"
        printf '%s\n' "$source" >"$staged/source"
        say "staged $APP_JAR (sha256 ${source:0:16}) to run on the nodes in Tomcat's place"
    fi
    write_if_changed "$staged/sha256" "$(sha256sum "$staged/app.jar" | cut -d' ' -f1)"
    write_if_changed "$staged/kind" "$(python3 "$root/capbench/hosts/app_jar.py" "$staged/app.jar")"
}

# prepare WAR OUT: OUT is WAR as the nodes' Tomcat 10.1 can run it. A WAR built for javax.servlet
# (capbench/hosts/javax_war.py says why) is converted to jakarta.servlet by Tomcat's migration tool (APP_MIGRATE=auto;
# off refuses it, exit 2), and OUT.migrated then holds the converted file's sha256; any other is copied. The
# tool's default profile converts what Tomcat itself provides (servlet, JSP, EL, WebSocket, JASPIC), so the
# application's other javax packages stay as they are.
prepare() {
    local war=$1 out=$2 why status=0 tool=$root/.capbench/tools/jakartaee-migration/jakartaee-migration.jar started
    local output
    rm -f "$out.migrated"
    why=$(python3 "$root/capbench/hosts/javax_war.py" "$war") || status=$?
    if [ "$status" -eq 1 ]; then
        cp "$war" "$out"
        return 0
    fi
    [ "$status" -eq 0 ] || { say "APP_WAR='$war' could not be read as a zip"; exit 2; }
    if [ "$APP_MIGRATE" != auto ]; then
        say "APP_WAR='$war' is built for javax.servlet ($why), which Tomcat 10.1 cannot run; APP_MIGRATE=auto" \
            "converts it to jakarta.servlet at make up (now APP_MIGRATE=$APP_MIGRATE)"
        exit 2
    fi
    [ -f "$tool" ] || { say "$tool is missing: make setup fetches it"; exit 1; }
    started=$(date +%s)
    if ! output=$(java -jar "$tool" "$war" "$out" 2>&1); then
        echo "$output" | tail -n 20 >&2
        say "APP_WAR='$war': Tomcat's migration tool could not convert it from javax to jakarta"
        exit 2
    fi
    sha256sum "$out" | cut -d' ' -f1 >"$out.migrated"
    say "APP_WAR='$war' is built for javax.servlet ($why): converted to jakarta.servlet by Tomcat's migration" \
        "tool in $(( $(date +%s) - started )) s (sha256 $(cut -c1-16 "$out.migrated"))"
}

# The derived image carries what it was built from in a label: the node image's ID, the WAR's sha256, the context.
# A new build is a candidate (tag CANDIDATE) until its trial node passes: only then does it take the name the nodes
# run, so a refused WAR never reaches a node that Compose or Swarm re-creates later (a bench's new settings).
CANDIDATE=${CAPBENCH_NODE_IMAGE%:*}:candidate-${CAPBENCH_NODE_IMAGE#*:}
image() {
    local base wanted built started output
    base=$(docker image inspect --format '{{.Id}}' "$BASE_IMAGE" 2>/dev/null) \
        || { say "image $BASE_IMAGE is not built: run make images"; exit 1; }
    wanted="$base $(cat "$staged/sha256") ${APP_JAR:+jar}${APP_JAR:-$APP_CONTEXT}"
    built=$(docker image inspect --format '{{index .Config.Labels "capbench.app"}}' "$CAPBENCH_NODE_IMAGE" \
        2>/dev/null || true)
    if [ "$built" = "$wanted" ]; then
        trial "$CAPBENCH_NODE_IMAGE"
        return 0
    fi
    started=$(date +%s)
    # Its output only when it fails (the engine's legacy builder warns about itself at every build).
    if ! output=$(docker build --label "capbench.app=$wanted" --tag "$CANDIDATE" \
            --file "$root/cluster/images/node-app.Dockerfile" "$staged" 2>&1); then
        echo "$output" >&2
        say "building $CAPBENCH_NODE_IMAGE failed"
        exit 1
    fi
    say "built $CANDIDATE with $(basename "${APP_JAR:-$APP_WAR}") in $(( $(date +%s) - started )) s"
    trial "$CANDIDATE"
    docker tag "$CANDIDATE" "$CAPBENCH_NODE_IMAGE"
    docker rmi "$CANDIDATE" >/dev/null
}

# A trial node: one container of the new image alone, with node1's settings, on a network of its own that is
# internal (nothing else on it, no route out). It must answer APP_HEALTH and the Grinder's /capbench/health 200
# (a JAR's node has no Grinder: APP_HEALTH alone) within TRIAL_S, else the application is refused with what Tomcat logged, and the cluster is not touched. It is
# asked at its address on that network, not on loopback, so an application that admits only local clients
# (a RemoteAddrValve or RemoteCIDRValve in its context.xml) is refused here as HAProxy's checks would find it.
# Passed once for an image and its settings, it is not run again (APP_STAGED/trial-passed).
# trial IMAGE
trial() {
    local image=$1 passed want name address started status=000 grinder=000 serving_since= key env_args=() doing
    local app="APP_WAR='${APP_WAR-}'"
    [ -z "${APP_JAR-}" ] || app="APP_JAR='$APP_JAR'"
    want="$(docker image inspect --format '{{.Id}}' "$image") $APP_HEALTH $APP_JAVA_OPTS ${APP_JAR_ARGS-}"
    want+=" $NODE1_HEAP $NODE1_GC $NODE1_MEM $NODE1_CPUS"
    passed=$staged/trial-passed
    [ "$(cat "$passed" 2>/dev/null)" = "$want" ] && return 0
    # The node's environment, as compose.yaml gives it (every tunable; sessions not replicated: no peers).
    for key in $(settings_keys "$root/tomcat-conf/tunables.env") APP_JAVA_OPTS APP_JAR_ARGS APP_HEALTH; do
        env_args+=(--env "$key")
    done
    name=capbench-app-trial-$$
    # shellcheck disable=SC2064  # the name is fixed now
    trap "docker rm --force '$name' >/dev/null 2>&1; docker network rm '$name' >/dev/null 2>&1 || true" EXIT
    docker network create --internal "$name" >/dev/null
    started=$(date +%s)
    # shellcheck disable=SC2046  # no quota, or node1's
    docker run --detach --name "$name" --network "$name" --cap-drop ALL --security-opt no-new-privileges:true \
        --pids-limit 1024 --memory "$NODE1_MEM" $([ "$NODE1_CPUS" = 0 ] || echo --cpus "$NODE1_CPUS") \
        "${env_args[@]}" --env TOMCAT_SESSION_REPLICATION=0 --env NODE_NAME=node1 --env CAPBENCH_NODES_LIST=node1 \
        --env JVM_HEAP="$NODE1_HEAP" --env JVM_GC="$NODE1_GC" --env "PCP_ALLOW_HOSTS=$BENCH_NET_PREFIX.*" \
        "$image" >/dev/null
    address=$(docker inspect --format '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$name")
    say "a trial node of $image: waiting up to $TRIAL_S s for $APP_HEALTH"
    while :; do
        if [ "$(docker inspect --format '{{.State.Running}}' "$name")" != true ]; then
            refuse "$app: the trial node stopped (exit $(docker inspect --format \
                '{{.State.ExitCode}}' "$name")) after $(( $(date +%s) - started )) s" "$name"
        fi
        status=$(http_status "$name" "$address" "$APP_HEALTH")
        if [ -n "${APP_JAR-}" ]; then
            grinder=200  # none: the JAR's server serves from its first answer on
        else
            grinder=$(http_status "$name" "$address" "$GRINDER_PATH/health")
        fi
        if [ "$status" = 200 ] && [ "$grinder" = 200 ]; then
            break
        fi
        # Tomcat opens its connector only once every application is deployed: from the Grinder's first answer on
        # (a JAR's first answer of any status), the application's is its own, and another status after SETTLE_S
        # more is its answer, not a slow start.
        if [ "$grinder" = 200 ] && [ "$status" != 000 ] && [ -z "$serving_since" ]; then
            serving_since=$(date +%s)
        fi
        if [ -n "$serving_since" ] && [ $(( $(date +%s) - serving_since )) -ge "$SETTLE_S" ]; then
            refuse "APP_HEALTH=$APP_HEALTH answered $status, not 200, on a trial node whose server had served for" \
                "$SETTLE_S s: use a path of the application that answers 200" "$name"
        fi
        # Tomcat keeps running when an application fails to start (the path then answers 404): its log says so.
        if docker logs "$name" 2>&1 | grep -qE 'startup failed due to previous errors|Error (deploying|during) web application'; then
            refuse "$app failed to deploy on a trial node" "$name"
        fi
        if [ $(( $(date +%s) - started )) -ge "$TRIAL_S" ]; then
            if [ -n "${APP_JAR-}" ]; then
                doing="the JAR had not answered on port 8080 after $TRIAL_S s"
            else
                doing=$(tomcat_doing "$(docker logs "$name" 2>&1)" "$TRIAL_S")
            fi
            if [ "$status" = 000 ]; then
                refuse "$app did not start on a trial node with node1's $NODE1_CPUS CPU within" \
                    "$TRIAL_S s: $doing; give it longer with APP_START_S (now $APP_START_S)" "$name"
            fi
            if [ "$status" != 200 ]; then
                refuse "APP_HEALTH=$APP_HEALTH did not answer 200 within $TRIAL_S s on a trial node: it answered" \
                    "$status ($doing)" "$name"
            fi
            refuse "the Grinder's $GRINDER_PATH/health did not answer 200 within $TRIAL_S s on a trial node:" \
                "last status $grinder ($doing)" "$name"
        fi
        sleep 1
    done
    printf '%s\n' "$want" >"$passed"
    say "the trial node answered $APP_HEALTH 200 in $(( $(date +%s) - started )) s"
}

# http_status CONTAINER ADDRESS PATH: the status of a GET of PATH at its ADDRESS, from inside it (000: no answer).
http_status() {
    docker exec "$1" curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://$2:8080$3" 2>/dev/null || true
}

# refuse WHY… CONTAINER: the reason, the trial node's log lines (Tomcat's, or the JAR's) that say what went wrong,
# exit 2 (the trap removes the container and its network).
refuse() {
    local name=${*: -1} lines
    say "${*:1:$#-1}"
    lines=$(docker logs "$name" 2>&1 | grep -E 'SEVERE|Exception|Caused by' | tail -n 20 || true)
    if [ -n "$lines" ]; then
        echo "---- the trial node's log (SEVERE, exceptions; the last 20 lines):" >&2
        echo "$lines" >&2
    else
        echo "---- the trial node's log (the last 10 lines):" >&2
        docker logs "$name" 2>&1 | tail -n 10 >&2 || true
    fi
    docker rmi "$CANDIDATE" >/dev/null 2>&1 || true  # a refused build is not kept
    say "the cluster was not touched"
    exit 2
}

case ${1:-} in
    stage) stage ;;
    prepare) prepare "${2:?usage: $0 prepare WAR OUT}" "${3:?usage: $0 prepare WAR OUT}" ;;
    image)
        [ -n "${APP_WAR-}${APP_JAR-}" ] || exit 0
        stage
        image ;;
    build)
        [ -f "${2-}" ] || { say "app.sh build: '${2-}' is not a file: give a .war (or a .jar with APP_JAR)"; exit 2; }
        if [ -n "${APP_JAR-}" ]; then
            APP_JAR=$2
        else
            [ -n "${APP_WAR-}" ] || { say "app.sh build: APP_WAR and APP_JAR are empty: a build's WAR shares the" \
                "application's APP_CONTEXT and APP_HEALTH, a build's JAR its APP_HEALTH and APP_JAR_ARGS"; exit 2; }
            APP_WAR=$2
        fi
        sha=$(sha256sum "$2" | cut -d' ' -f1)
        staged=$root/.capbench/app-builds/${sha:0:16}
        CAPBENCH_NODE_IMAGE=${CAPBENCH_NODE_IMAGE%:*}:${sha:0:16}
        CANDIDATE=${CAPBENCH_NODE_IMAGE%:*}:candidate-${sha:0:16}
        stage
        image
        echo "$CAPBENCH_NODE_IMAGE" ;;
    *) echo "usage: $0 stage | image | build WAR|JAR | prepare WAR OUT" >&2; exit 2 ;;
esac
