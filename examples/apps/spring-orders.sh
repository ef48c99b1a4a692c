#!/usr/bin/env bash
# spring-orders.sh OUT.jar: builds examples/apps/spring-orders (a Spring Boot service of ours: an account's orders
# from the shared PostgreSQL through JDBC and HikariCP) with Maven, into OUT.jar, an executable JAR to try APP_JAR
# with:
#   make up APP_JAR=.capbench/apps/spring-orders.jar APP_HEALTH=/ping
#   make bench-cluster QUICK=1 SCENARIO_FILE=examples/scenarios/spring-orders.yaml
# Its dependencies come from Maven Central (Spring Boot's parent pins their versions).
set -euo pipefail
out=${1:?usage: $0 OUT.jar}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mvn -q -B -f "$here/spring-orders/pom.xml" package -DskipTests
mkdir -p "$(dirname "$out")"
cp "$here/spring-orders/target/spring-orders.jar" "$out"
echo "capbench: built $out ($(sha256sum "$out" | cut -c1-16))"
