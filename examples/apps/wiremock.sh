#!/usr/bin/env bash
# wiremock.sh OUT.jar: a third-party executable JAR to try APP_JAR with: WireMock 3.13.2's standalone JAR (an HTTP
# mock server on an embedded Jetty, not Spring Boot), as published on Maven Central. Its admin API answers on
# every node without any stub loaded: its health, its (empty) stubs and the requests it was sent.
#   examples/apps/wiremock.sh .capbench/apps/wiremock.jar
#   make up APP_JAR=.capbench/apps/wiremock.jar APP_JAR_ARGS="--port 8080 --disable-banner --no-request-journal" \
#       APP_HEALTH=/__admin/health
#   make bench-single QUICK=1 SCENARIO_FILE=examples/scenarios/wiremock.yaml (with the same APP_* settings)
# The JAR is checked against Maven Central's SHA-1 (MAVEN_REPO= another repository's root URL, e.g. a mirror).
set -euo pipefail
# shellcheck source=examples/apps/maven_central.sh
source "$(dirname "$0")/maven_central.sh"
out=${1:?usage: $0 OUT.jar}
version=3.13.2
mkdir -p "$(dirname "$out")"
maven_get "org/wiremock/wiremock-standalone/$version/wiremock-standalone-$version.jar" "$out"
echo "capbench: $out: WireMock $version's standalone JAR from Maven Central (SHA-1 checked)"
