#!/usr/bin/env bash
# Provisions a node host: OpenJDK 17 and Tomcat 10.1 from Debian, a Tomcat base of our own in
# /opt/capbench/tomcat holding only our server.xml and the Grinder WAR, and the run script; PCP's pmcd with
# the JVM and Tomcat metrics of the JMX exporter agent (metrics/). Tomcat runs as the
# unprivileged user tomcat, which can write only logs/, temp/, work/ and /var/log/capbench (GC log).
set -euo pipefail
# shellcheck source=cluster/provision/lib.sh
source "$(dirname "$0")/lib.sh"

packages() {
    # tomcat10-common is Tomcat itself (bin/ and lib/); the tomcat10 package would add only a systemd unit, a
    # default ROOT app and /etc/tomcat10, none of which a node uses. jattach takes thread dumps through the
    # JVM's attach API, as jcmd Thread.print does, without starting a second JVM inside the node's CPU quota
    # (make bench-variants samples them during the step at capacity).
    apt_install openjdk-17-jre-headless tomcat10-common curl tini jattach "${PCP_PACKAGES[@]}"
    ensure_user tomcat /opt/capbench/tomcat
}

install_files() {
    local src=$1 base=/opt/capbench/tomcat
    install_healthy "$src"
    # conf/Catalina/localhost exists (empty, read-only) only so that Tomcat does not try to create it.
    install -d -m 755 /opt/capbench/bin /opt/capbench/lib "$base" "$base/conf" "$base/conf/Catalina/localhost" \
        "$base/webapps"
    install -d -m 750 -o tomcat -g tomcat "$base/logs" "$base/temp" "$base/work" /var/log/capbench
    install -m 644 "$src/tomcat-conf/server.xml" "$src/tomcat-conf/logging.properties" "$base/conf/"
    # The default context is written at each start (render-config.sh: whether sessions are replicated).
    ln -sfn ../temp/context.xml "$base/conf/context.xml"
    install -m 644 "$src/webapp/target/grinder.war" "$base/webapps/ROOT.war"
    install -m 755 "$src/tomcat-conf/run-tomcat.sh" "$src/tomcat-conf/render-config.sh" /opt/capbench/bin/
    install -m 644 "$src/cluster/settings.sh" /opt/capbench/lib/
    # JVM and Tomcat metrics for PCP: the Prometheus JMX exporter agent (fetched from Maven Central by make)
    # and what it exposes (metrics/jmx-exporter.yaml).
    install -m 644 "$src/.capbench/tools/jmx-exporter/jmx_prometheus_javaagent.jar" \
        "$src/metrics/jmx-exporter.yaml" /opt/capbench/lib/
    install_pcp_host node tomcat "$src"
}

provision_main "$@"
