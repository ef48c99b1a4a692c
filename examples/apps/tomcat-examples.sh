#!/usr/bin/env bash
# tomcat-examples.sh OUT.war [--keep-valve]: a third-party web application to try APP_WAR with: Debian's Tomcat
# 10.1 examples (package tomcat10-examples: JSPs, servlets, sessions, a tag library), zipped into a WAR.
#   examples/apps/tomcat-examples.sh .capbench/apps/examples.war
#   make up APP_WAR=.capbench/apps/examples.war APP_CONTEXT=examples APP_HEALTH=/examples/index.html
# The package comes from this machine's Debian mirrors (apt-get download: no root needed), or from DEB=file.deb.
#
# The WAR's META-INF/context.xml drops the package's RemoteCIDRValve, which admits requests from 127.0.0.0/8 only:
# the examples are meant for a browser on the server itself. A node honours an application's context.xml as
# Tomcat does, so with the valve every request through the balancer, and HAProxy's health checks, get 403 and
# make up refuses the application (its trial node never answers APP_HEALTH 200). --keep-valve keeps it, to see
# that refusal. The CookieProcessor of the same file is kept.
set -euo pipefail
out=${1:?usage: $0 OUT.war [--keep-valve]}
keep_valve=${2:-}
[ -z "$keep_valve" ] || [ "$keep_valve" = --keep-valve ] || { echo "usage: $0 OUT.war [--keep-valve]" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

deb=${DEB:-}
if [ -z "$deb" ]; then
    # (apt warns that it downloads as root unsandboxed into a folder its _apt user cannot write: harmless.)
    (cd "$work" && apt-get download -q tomcat10-examples 2>&1 >/dev/null | grep -v unsandboxed >&2 || true)
    deb=$(echo "$work"/tomcat10-examples_*.deb)
    [ -f "$deb" ] || { echo "capbench: apt-get download tomcat10-examples found no package" >&2; exit 1; }
fi
dpkg-deb -x "$deb" "$work/root"
version=$(dpkg-deb -f "$deb" Version)
mkdir -p "$(dirname "$out")"

python3 - "$work/root/usr/share/tomcat10-examples/examples" "$out" "$keep_valve" <<'PY'
import re
import sys
import zipfile
from pathlib import Path

source, out, keep_valve = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] == "--keep-valve"
context = (source / "META-INF" / "context.xml").read_text()
if not keep_valve:
    context, dropped = re.subn(r"\s*<Valve className=\"org\.apache\.catalina\.valves\.RemoteCIDRValve\"[^>]*/>", "",
                               context)
    if dropped != 1:
        sys.exit(f"{source}/META-INF/context.xml: no RemoteCIDRValve found to drop")
tmp = out.with_name(out.name + ".tmp")
with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as war:
    war.writestr("META-INF/context.xml", context)
    for path in sorted(source.rglob("*")):
        name = path.relative_to(source).as_posix()
        if path.is_file() and name != "META-INF/context.xml":
            war.write(path, name)
tmp.replace(out)
PY
echo "capbench: $out: Debian's tomcat10-examples $version$([ -n "$keep_valve" ] && echo ', with its RemoteCIDRValve (127.0.0.0/8 only)' || echo ', without its RemoteCIDRValve')"
