#!/usr/bin/env bash
# Starts this node's executable JAR (APP_JAR, installed by cluster/provision/node.sh) in the foreground, in place
# of Tomcat (run-tomcat.sh execs it), with the node's JVM options. A Spring Boot JAR gets the port the balancer
# routes to and the connector's tunables as its embedded Tomcat's properties, so TOMCAT_MAX_THREADS and the others
# tune it as they tune the Tomcat nodes (settings.sh's check_jar_tunables refused on the host what it cannot
# take), and its Tomcat's MBeans registered, which the metrics' agent reads; any other JAR gets APP_JAR_ARGS only.
# run-tomcat.sh checked the settings before it exec'd this.
set -euo pipefail
# shellcheck source=tomcat-conf/node-start.sh
source /opt/capbench/bin/node-start.sh
read -r kind detail <"$APP_JAR_KIND_FILE"

node_java_opts
jar_args=()
if [ "$kind" = spring-boot ]; then
    connector_values
    jar_args=(
        --server.port=8080
        "--server.tomcat.threads.max=$TOMCAT_MAX_THREADS" "--server.tomcat.threads.min-spare=$min_spare_threads"
        "--server.tomcat.accept-count=$TOMCAT_ACCEPT_COUNT" "--server.tomcat.max-connections=$TOMCAT_MAX_CONNECTIONS"
        "--server.tomcat.connection-timeout=$TOMCAT_CONNECTION_TIMEOUT"
        "--server.tomcat.keep-alive-timeout=$keep_alive_timeout"
        "--server.tomcat.max-keep-alive-requests=$TOMCAT_MAX_KEEP_ALIVE_REQUESTS"
        # Tomcat's MBeans (threads, requests, sessions) and HikariCP's, for the metrics' agent.
        --server.tomcat.mbeanregistry.enabled=true --spring.datasource.hikari.register-mbeans=true
    )
    # NODE_HTTP=2: Spring Boot's own HTTP/2 switch, which without server.ssl.* gives its Tomcat h2c, as the
    # balancer speaks it (settings.sh refused the TOMCAT_H2_* tunables, which Spring Boot names no property for).
    [ "$NODE_HTTP" != 2 ] || jar_args+=(--server.http2.enabled=true)
fi
# The user's own last: Spring Boot takes the last value a property is given.
read -r -a own_args <<<"${APP_JAR_ARGS-}"
jar_args+=("${own_args[@]}")

echo "capbench: ${NODE_NAME:-node}: heap=$JVM_HEAP gc=$JVM_GC jar=$kind $detail ${jar_args[*]}" \
    "${APP_JAVA_OPTS:+app-java-opts=$APP_JAVA_OPTS}"
# Its working directory is the JVM's temporary one, which the node's user may write (Spring Boot's work files).
cd /tmp
exec java "${java_opts[@]}" -jar "$APP_JAR_FILE" "${jar_args[@]}"
