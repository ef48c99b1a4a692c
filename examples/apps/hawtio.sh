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
out=${1:?usage: $0 OUT.war}
version=4.2.0
repo=${MAVEN_REPO:-https://repo.maven.apache.org/maven2}
url=$repo/io/hawt/hawtio-war/$version/hawtio-war-$version.war
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

curl -fsS --retry 2 -o "$work/hawtio.war" "$url" || { echo "capbench: could not download $url" >&2; exit 1; }
expected=$(curl -fsS --retry 2 "$url.sha1" | cut -c1-40) || { echo "capbench: could not download $url.sha1" >&2; exit 1; }
actual=$(sha1sum "$work/hawtio.war" | cut -c1-40)
[ "$actual" = "$expected" ] || { echo "capbench: $url: SHA-1 $actual, Maven Central says $expected" >&2; exit 1; }
mkdir -p "$(dirname "$out")"

python3 - "$work/hawtio.war" "$out" <<'PY'
import shutil
import sys
import zipfile
from pathlib import Path

POLICY = """<?xml version="1.0" encoding="UTF-8"?>
<!-- Added by capbench's examples/apps/hawtio.sh: Jolokia answers reads only, by GET. -->
<restrict>
  <http>
    <method>get</method>
  </http>
  <commands>
    <command>version</command>
    <command>read</command>
    <command>search</command>
    <command>list</command>
  </commands>
</restrict>
"""
source, out = Path(sys.argv[1]), Path(sys.argv[2])
tmp = out.with_name(out.name + ".tmp")
with zipfile.ZipFile(source) as war, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as copy:
    if "WEB-INF/classes/jolokia-access.xml" in war.namelist():
        sys.exit(f"{source}: already has a WEB-INF/classes/jolokia-access.xml")
    for item in war.infolist():
        with war.open(item) as data, copy.open(item, "w") as target:
            shutil.copyfileobj(data, target)
    copy.writestr("WEB-INF/classes/jolokia-access.xml", POLICY)
tmp.replace(out)
PY
echo "capbench: $out: Hawtio $version from Maven Central (SHA-1 checked), Jolokia read-only"
