#!/usr/bin/env bash
# Starts this node's Tomcat in the foreground: checks the settings it was given (the same rules as on the
# host), turns the tunables into the ${capbench.*} properties that server.xml reads, builds the JVM options
# from the node's heap and GC, and execs catalina.sh run.
set -euo pipefail
# shellcheck source=cluster/settings.sh
source /opt/capbench/lib/settings.sh
check_tunables
check_jvm JVM_
check_app_java_opts
settings_report || exit 2

case $TOMCAT_PROTOCOL in
    nio) protocol_class=org.apache.coyote.http11.Http11NioProtocol ;;
    nio2) protocol_class=org.apache.coyote.http11.Http11Nio2Protocol ;;
esac
# Tomcat's own rules: a connector never keeps more spare threads than maxThreads (so `TOMCAT_MAX_THREADS=4`
# alone works), and keepAliveTimeout defaults to connectionTimeout.
min_spare_threads=$(( TOMCAT_MIN_SPARE_THREADS < TOMCAT_MAX_THREADS ? TOMCAT_MIN_SPARE_THREADS : TOMCAT_MAX_THREADS ))
keep_alive_timeout=${TOMCAT_KEEP_ALIVE_TIMEOUT:-$TOMCAT_CONNECTION_TIMEOUT}

case $JVM_GC in
    auto) gc_options=() ;;          # the JVM's ergonomics choose; /info and the GC log say what they chose
    serial) gc_options=(-XX:+UseSerialGC) ;;
    parallel) gc_options=(-XX:+UseParallelGC) ;;
    g1) gc_options=(-XX:+UseG1GC) ;;
    zgc) gc_options=(-XX:+UseZGC) ;;
esac

connector="protocol=$TOMCAT_PROTOCOL,maxThreads=$TOMCAT_MAX_THREADS,minSpareThreads=$min_spare_threads"
connector+=",acceptCount=$TOMCAT_ACCEPT_COUNT,maxConnections=$TOMCAT_MAX_CONNECTIONS"
connector+=",connectionTimeout=$TOMCAT_CONNECTION_TIMEOUT,keepAliveTimeout=$keep_alive_timeout"
connector+=",maxKeepAliveRequests=$TOMCAT_MAX_KEEP_ALIVE_REQUESTS"

export CATALINA_HOME=/usr/share/tomcat10
export CATALINA_BASE=/opt/capbench/tomcat

# server.xml and the default context as this start's settings want them (sessions replicated or not).
rendered=$CATALINA_BASE/temp
/opt/capbench/bin/render-config.sh

# Fixed heap (Xms = Xmx): no heap resizing during a measurement. ExitOnOutOfMemoryError: a node out of heap
# stops (and HAProxy takes it out) instead of limping on with errors. The GC log records every collection
# and, on its first line, the collector in use.
# shellcheck disable=SC2054  # the commas belong to -Xlog's syntax
java_opts=(
    "-Xms$JVM_HEAP" "-Xmx$JVM_HEAP" "${gc_options[@]}" -XX:+ExitOnOutOfMemoryError
    -Xlog:gc:file=/var/log/capbench/gc.log:time,uptimemillis,level,tags:filecount=5,filesize=20m
    # JDK Flight Recorder records nothing until the harness starts it (profiling/); its default 64 frames cut
    # Tomcat's stacks short of the servlet's caller.
    -XX:FlightRecorderOptions=stackdepth=256
    # JVM and Tomcat metrics for PCP (metrics/jmx-exporter.yaml), served on loopback only.
    -javaagent:/opt/capbench/lib/jmx_prometheus_javaagent.jar=127.0.0.1:9404:/opt/capbench/lib/jmx-exporter.yaml
)
# The user's application's own JVM options (cluster/app.env), last, so one of them may override ours; split at
# spaces, never globbed.
read -r -a app_java_opts <<<"${APP_JAVA_OPTS-}"
java_opts+=("${app_java_opts[@]}")
catalina_opts=(
    "-Dcapbench.protocolClass=$protocol_class"
    "-Dcapbench.maxThreads=$TOMCAT_MAX_THREADS" "-Dcapbench.minSpareThreads=$min_spare_threads"
    "-Dcapbench.acceptCount=$TOMCAT_ACCEPT_COUNT" "-Dcapbench.maxConnections=$TOMCAT_MAX_CONNECTIONS"
    "-Dcapbench.connectionTimeout=$TOMCAT_CONNECTION_TIMEOUT" "-Dcapbench.keepAliveTimeout=$keep_alive_timeout"
    "-Dcapbench.maxKeepAliveRequests=$TOMCAT_MAX_KEEP_ALIVE_REQUESTS" "-Dcapbench.connector.summary=$connector"
    # A server.xml Tomcat cannot apply stops the node instead of leaving it up without a connector.
    -Dorg.apache.catalina.startup.EXIT_ON_INIT_FAILURE=true
)
# catalina.sh passes these through eval: every element above is free of spaces and quotes (checked values).
export JAVA_OPTS="${java_opts[*]}" CATALINA_OPTS="${catalina_opts[*]}"

echo "capbench: ${NODE_NAME:-node}: heap=$JVM_HEAP gc=$JVM_GC $connector replication=$TOMCAT_SESSION_REPLICATION" \
    "${APP_JAVA_OPTS:+app-java-opts=$APP_JAVA_OPTS}"
exec "$CATALINA_HOME/bin/catalina.sh" run -config "$rendered/server.xml"
