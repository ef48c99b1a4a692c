#!/usr/bin/env bash
# spring-orders.sh OUT.jar [--n-plus-one]: builds examples/apps/spring-orders (a Spring Boot service of ours: an account's orders
# from the shared PostgreSQL through JDBC and HikariCP) with Maven, into OUT.jar, an executable JAR to try APP_JAR
# with:
#   make up APP_JAR=.capbench/apps/spring-orders.jar APP_HEALTH=/ping
#   make bench-cluster QUICK=1 SCENARIO_FILE=examples/scenarios/spring-orders.yaml
# --n-plus-one builds the same service with a known regression, each order read by a query of its own, for a duet:
#   make gate GATE_MODE=duet DUET_B="JAR=.capbench/apps/spring-orders-n1.jar" SCENARIO_FILE=…
# Its dependencies come from Maven Central (Spring Boot's parent pins their versions).
set -euo pipefail
out=${1:?usage: $0 OUT.jar [--n-plus-one]}
lookup=query
case ${2-} in
    "") ;;
    --n-plus-one) lookup=per-order ;;
    *) echo "usage: $0 OUT.jar [--n-plus-one]" >&2; exit 2 ;;
esac
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mvn -q -B -Dstyle.color=never -f "$here/spring-orders/pom.xml" clean package -DskipTests -Dorders.lookup="$lookup"
mkdir -p "$(dirname "$out")"
cp "$here/spring-orders/target/spring-orders.jar" "$out"
echo "capbench: built $out (orders.lookup=$lookup, sha256 $(sha256sum "$out" | cut -c1-16))"
