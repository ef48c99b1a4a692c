#!/usr/bin/env bash
# Starts this node's Tomcat in the foreground: checks the settings it was given (the same rules as on the
# host), turns the tunables into the ${capbench.*} properties that server.xml reads, builds the JVM options
# from the node's heap and GC, and execs catalina.sh run; or, on a node with an executable JAR, run-jar.sh.
set -euo pipefail
# shellcheck source=cluster/settings.sh
source /opt/capbench/lib/settings.sh
check_tunables
check_jvm JVM_
check_app_java_opts
check_words APP_JAR_ARGS "arguments for the JAR"
settings_report || exit 2
# shellcheck source=tomcat-conf/node-start.sh
source /opt/capbench/bin/node-start.sh
# A node with an executable JAR (APP_JAR, cluster/app.sh) runs it instead of Tomcat.
if [ -f "$APP_JAR_FILE" ]; then
    exec /opt/capbench/bin/run-jar.sh
fi

case $TOMCAT_PROTOCOL in
    nio) protocol_class=org.apache.coyote.http11.Http11NioProtocol ;;
    nio2) protocol_class=org.apache.coyote.http11.Http11Nio2Protocol ;;
esac
connector_values

connector="protocol=$TOMCAT_PROTOCOL,maxThreads=$TOMCAT_MAX_THREADS,minSpareThreads=$min_spare_threads"
connector+=",acceptCount=$TOMCAT_ACCEPT_COUNT,maxConnections=$TOMCAT_MAX_CONNECTIONS"
connector+=",connectionTimeout=$TOMCAT_CONNECTION_TIMEOUT,keepAliveTimeout=$keep_alive_timeout"
connector+=",maxKeepAliveRequests=$TOMCAT_MAX_KEEP_ALIVE_REQUESTS"
if [ "$NODE_HTTP" = 2 ]; then
    connector+=",http2=on,h2MaxConcurrentStreams=$TOMCAT_H2_MAX_CONCURRENT_STREAMS"
    connector+=",h2MaxConcurrentStreamExecution=$TOMCAT_H2_MAX_CONCURRENT_STREAM_EXECUTION"
    connector+=",h2InitialWindowSize=$TOMCAT_H2_INITIAL_WINDOW_SIZE"
fi

export CATALINA_HOME=/usr/share/tomcat10
export CATALINA_BASE=/opt/capbench/tomcat

# server.xml and the default context as this start's settings want them (sessions replicated or not).
rendered=$CATALINA_BASE/temp
/opt/capbench/bin/render-config.sh

# The node's JVM options (heap, collector, GC log, JFR, the metrics' agent, the application's own).
node_java_opts
catalina_opts=(
    "-Dcapbench.protocolClass=$protocol_class"
    "-Dcapbench.maxThreads=$TOMCAT_MAX_THREADS" "-Dcapbench.minSpareThreads=$min_spare_threads"
    "-Dcapbench.acceptCount=$TOMCAT_ACCEPT_COUNT" "-Dcapbench.maxConnections=$TOMCAT_MAX_CONNECTIONS"
    "-Dcapbench.connectionTimeout=$TOMCAT_CONNECTION_TIMEOUT" "-Dcapbench.keepAliveTimeout=$keep_alive_timeout"
    "-Dcapbench.maxKeepAliveRequests=$TOMCAT_MAX_KEEP_ALIVE_REQUESTS" "-Dcapbench.connector.summary=$connector"
    "-Dcapbench.h2MaxConcurrentStreams=$TOMCAT_H2_MAX_CONCURRENT_STREAMS"
    "-Dcapbench.h2MaxConcurrentStreamExecution=$TOMCAT_H2_MAX_CONCURRENT_STREAM_EXECUTION"
    "-Dcapbench.h2InitialWindowSize=$TOMCAT_H2_INITIAL_WINDOW_SIZE"
    # A server.xml Tomcat cannot apply stops the node instead of leaving it up without a connector.
    -Dorg.apache.catalina.startup.EXIT_ON_INIT_FAILURE=true
)
# Replication's members by DNS (render-config.sh) see a node that started or moved within seconds, not after
# the JVM's default 30 s of cached answers.
if [ "$TOMCAT_SESSION_REPLICATION" = 1 ] && [ -n "${DNS_MEMBERSHIP_SERVICE_NAME:-}" ]; then
    catalina_opts+=(-Dsun.net.inetaddr.ttl=2)
fi
# catalina.sh passes these through eval: every element above is free of spaces and quotes (checked values).
export JAVA_OPTS="${java_opts[*]}" CATALINA_OPTS="${catalina_opts[*]}"

echo "capbench: ${NODE_NAME:-node}: heap=$JVM_HEAP gc=$JVM_GC $connector replication=$TOMCAT_SESSION_REPLICATION" \
    "${APP_JAVA_OPTS:+app-java-opts=$APP_JAVA_OPTS}"
exec "$CATALINA_HOME/bin/catalina.sh" run -config "$rendered/server.xml"
