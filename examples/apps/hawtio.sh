#!/usr/bin/env bash
# hawtio.sh OUT.war: a second third-party web application to try APP_WAR with: Hawtio 4.2.0, a web console for
# Java (a single-page application and Jolokia's JSON API to the JVM's MBeans), as published on Maven Central
# (io.hawt:hawtio-war), with a read-only Jolokia policy added.
#   examples/apps/hawtio.sh .capbench/apps/hawtio.war
#   make up APP_WAR=.capbench/apps/hawtio.war APP_CONTEXT=hawtio APP_HEALTH=/hawtio/jolokia/version \
#       APP_JAVA_OPTS=-Dhawtio.authenticationEnabled=false
# The WAR is checked against Maven Central's SHA-1 (MAVEN_REPO= another repository's root URL, e.g. a mirror).
#
# Hawtio asks for a login by default (a JAAS realm the nodes do not have); the load generators send no
# credentials, so the command above turns that off with a JVM option. Without a login, any client of the
# application could call every MBean operation through Jolokia (write attributes, run the JVM's diagnostic
# commands): the policy added here (WEB-INF/classes/jolokia-access.xml, where Jolokia looks by default) allows
# only reading: the version, reads, searches and listings, by GET.
set -euo pipefail
# shellcheck source=examples/apps/maven_central.sh
source "$(dirname "$0")/maven_central.sh"
out=${1:?usage: $0 OUT.war}
version=4.2.0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

maven_get "io/hawt/hawtio-war/$version/hawtio-war-$version.war" "$work/hawtio.war"
mkdir -p "$(dirname "$out")"

python3 "$(dirname "$0")/jolokia_read_only.py" "$work/hawtio.war" "$out"
echo "capbench: $out: Hawtio $version from Maven Central (SHA-1 checked), Jolokia read-only"
