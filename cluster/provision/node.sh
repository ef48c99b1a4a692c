#!/usr/bin/env bash
# Provisions a node host: OpenJDK 17 and Tomcat 10.1 from Debian, a Tomcat base of our own in
# /opt/capbench/tomcat holding only our server.xml and the Grinder WAR (and a user's application WAR: `app SRC`),
# and the run script; PCP's pmcd with
# the JVM and Tomcat metrics of the JMX exporter agent (metrics/). Tomcat runs as the
# unprivileged user tomcat, which can write only logs/, temp/, work/ and /var/log/capbench (GC log).
set -euo pipefail
# shellcheck source=cluster/provision/lib.sh
source "$(dirname "$0")/lib.sh"

# tomcat's uid and gid, fixed: a node's TLS key on the host is owned by this user (cluster/tls.sh), and the file
# is bound into the container with its owner. A system uid, created before the packages.
TOMCAT_UID=444

packages() {
    ensure_user tomcat /opt/capbench/tomcat "$TOMCAT_UID"
    # tomcat10-common is Tomcat itself (bin/ and lib/); the tomcat10 package would add only a systemd unit, a
    # default ROOT app and /etc/tomcat10, none of which a node uses. jattach takes thread dumps through the
    # JVM's attach API, as jcmd Thread.print does, without starting a second JVM inside the node's CPU quota
    # (make bench-variants samples them during the step at capacity).
    # libpostgresql-jdbc-java: PostgreSQL's JDBC driver for the DataSource Tomcat offers a user's application
    # (install_webapps links it into Tomcat's lib/ with one; the Grinder brings its own).
    # nftables and iproute2 (tc): bench-failover's network faults, done in the node's own network namespace by
    # a short-lived helper run from this image with NET_ADMIN alone (capbench/hosts/netfault.py); Tomcat's user has none.
    apt_install openjdk-17-jre-headless tomcat10-common curl tini jattach libpostgresql-jdbc-java \
        nftables iproute2 "${PCP_PACKAGES[@]}"
    tomcat_default_web_xml
}

# Tomcat's own default web.xml (conf/web.xml: the default servlet that serves static files, the JSP servlet,
# welcome files, MIME types) is in the package tomcat10, not in tomcat10-common. The Grinder needs none of it, but
# a user's application expects it as on any Tomcat (its index.html and JSPs answer 404 without it): that one file
# is taken from the package of the same version, kept in /opt/capbench/lib, and used with an application only
# (install_webapps).
TOMCAT_WEB_XML=/opt/capbench/lib/tomcat-web.xml
tomcat_default_web_xml() {
    local tmp version
    tmp=$(mktemp -d)
    chmod 755 "$tmp"  # apt-get download hands the file to its own user _apt
    version=$(dpkg-query -W -f '${Version}' tomcat10-common)
    apt-get update -q
    (cd "$tmp" && apt-get download -q "tomcat10=$version")
    install -d -m 755 "$(dirname "$TOMCAT_WEB_XML")"
    dpkg-deb --fsys-tarfile "$tmp"/tomcat10_*.deb | tar -x -O ./usr/share/tomcat10/etc/web.xml >"$TOMCAT_WEB_XML"
    chmod 644 "$TOMCAT_WEB_XML"
    rm -rf "$tmp" /var/lib/apt/lists/*
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
    install_webapps "$src"
    install -m 755 "$src/tomcat-conf/run-tomcat.sh" "$src/tomcat-conf/run-jar.sh" "$src/tomcat-conf/render-config.sh" \
        /opt/capbench/bin/
    install -m 644 "$src/tomcat-conf/node-start.sh" /opt/capbench/bin/
    install -m 644 "$src/cluster/settings.sh" /opt/capbench/lib/
    # JVM and Tomcat metrics for PCP: the Prometheus JMX exporter agent (fetched from Maven Central by make)
    # and what it exposes (metrics/jmx-exporter.yaml).
    install -m 644 "$src/.capbench/tools/jmx-exporter/jmx_prometheus_javaagent.jar" \
        "$src/metrics/jmx-exporter.yaml" /opt/capbench/lib/
    # The CPU profile's sampler, loaded into the JVM by the harness at a capacity (jattach), never at start.
    install -m 644 "$src/.capbench/tools/async-profiler/libasyncProfiler.so" /opt/capbench/lib/
    install_pcp_host node tomcat "$src"
}

# install_webapps SRC: the WARs Tomcat deploys. With an executable JAR staged in SRC/.capbench/app (app.jar and
# its kind, written by cluster/app.sh), that JAR alone. Without an application staged there (app.war and
# context), the Grinder alone, at /. With one, the application at its context (Tomcat's
# file name: shop/v2 → shop#v2.war, ROOT → /) and the Grinder at /capbench, where the harness still asks its
# /info, /health and /grind. Whatever was deployed before is replaced (a VM provisioned again). webapps/ stays
# root's: Tomcat (user tomcat) reads the WARs, never writes there (unpackWARs=false, server.xml). With an
# application, Tomcat's default web.xml too (tomcat_default_web_xml), and PostgreSQL's driver in Tomcat's lib/.
install_webapps() {
    local src=$1 webapps=/opt/capbench/tomcat/webapps conf=/opt/capbench/tomcat/conf app=$1/.capbench/app context
    local lib=/opt/capbench/tomcat/lib
    find "$webapps" -maxdepth 1 -name '*.war' -delete
    rm -f "$conf/web.xml" "$lib/postgresql.jar" /opt/capbench/app/app.jar /opt/capbench/app/kind
    if [ -f "$app/app.jar" ]; then
        # An executable JAR runs in Tomcat's place (tomcat-conf/run-jar.sh): no WAR, no Grinder.
        install -d -m 755 /opt/capbench/app
        install -m 644 "$app/app.jar" "$app/kind" /opt/capbench/app/
        echo "capbench: node application: the executable JAR $(cut -d' ' -f1 "$app/kind") ($(cut -c1-16 "$app/sha256"))," \
            "no Grinder"
        return 0
    fi
    if [ ! -f "$app/app.war" ]; then
        install -m 644 "$src/webapp/target/grinder.war" "$webapps/ROOT.war"
        echo "capbench: node webapps: the Grinder at /"
        return 0
    fi
    context=$(cat "$app/context")
    # The same rule as on the machine that staged it (cluster/settings.sh), so no name escapes webapps/.
    # shellcheck source=cluster/settings.sh
    source "$src/cluster/settings.sh"
    APP_WAR= APP_CONTEXT=$context APP_HEALTH=/ check_app
    settings_report || return 2
    install -m 644 "$src/webapp/target/grinder.war" "$webapps/$APP_CONTEXT_RESERVED.war"
    install -m 644 "$app/app.war" "$webapps/${context//\//#}.war"
    install -m 644 "$TOMCAT_WEB_XML" "$conf/web.xml"
    # The driver on Tomcat's common class path: the default context then offers the application the shared
    # database as jdbc/capbench (render-config.sh writes it there when this link exists).
    install -d -m 755 "$lib"
    ln -sfn /usr/share/java/postgresql.jar "$lib/postgresql.jar"
    echo "capbench: node webapps: the application at /${context#ROOT} ($(cut -c1-16 "$app/sha256" 2>/dev/null))," \
        "the Grinder at /$APP_CONTEXT_RESERVED"
}

# Runs the role's step: packages, install SRC, all SRC (provision_main), or app SRC: only the WARs again
# (install_webapps), for the node image with an application (cluster/images/node-app.Dockerfile) and the VMs.
if [ "${1:-}" = app ]; then
    install_webapps "${2:?usage: $0 app SRC}"
    exit
fi
provision_main "$@"
