#!/usr/bin/env bash
# jolokia.sh OUT.war: a javax web application to try APP_MIGRATE with: Jolokia 1.7.2's WAR (JMX over HTTP: the
# node's MBeans as JSON), as published on Maven Central, built for javax.servlet and so converted to
# jakarta.servlet when it is staged, with a read-only Jolokia policy added. Its variant without a login
# (org.jolokia:jolokia-war-unsecured): the secured one asks for a role the nodes' Tomcat has no user for.
#   examples/apps/jolokia.sh .capbench/apps/jolokia.war
#   make up APP_WAR=.capbench/apps/jolokia.war APP_CONTEXT=jolokia APP_HEALTH=/jolokia/version
#   make bench-single QUICK=1 SCENARIO_FILE=examples/scenarios/jolokia.yaml
# The WAR is checked against Maven Central's SHA-1 (MAVEN_REPO= another repository's root URL, e.g. a mirror).
# It asks for no login: the policy (examples/apps/jolokia_read_only.py) lets its clients only read, by GET.
set -euo pipefail
# shellcheck source=examples/apps/maven_central.sh
source "$(dirname "$0")/maven_central.sh"
out=${1:?usage: $0 OUT.war}
version=1.7.2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

maven_get "org/jolokia/jolokia-war-unsecured/$version/jolokia-war-unsecured-$version.war" "$work/jolokia.war"
mkdir -p "$(dirname "$out")"
python3 "$(dirname "$0")/jolokia_read_only.py" "$work/jolokia.war" "$out"
echo "capbench: $out: Jolokia $version from Maven Central (SHA-1 checked), read-only; built for javax.servlet"
