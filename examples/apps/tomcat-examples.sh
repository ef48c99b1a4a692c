#!/usr/bin/env bash
# tomcat-examples.sh OUT.war [--keep-valve] [--session-timeout MINUTES]: a third-party web application to try
# APP_WAR with: Debian's Tomcat 10.1 examples (package tomcat10-examples: JSPs, servlets, sessions, a tag
# library), zipped into a WAR.
#   examples/apps/tomcat-examples.sh .capbench/apps/examples.war
#   make up APP_WAR=.capbench/apps/examples.war APP_CONTEXT=examples APP_HEALTH=/examples/index.html
# The package comes from this machine's Debian mirrors (apt-get download: no root needed), or from DEB=file.deb.
#
# The WAR's META-INF/context.xml drops the package's RemoteCIDRValve, which admits requests from 127.0.0.0/8 only:
# the examples are meant for a browser on the server itself. A node honours an application's context.xml as
# Tomcat does, so with the valve every request through the balancer, and HAProxy's health checks, get 403 and
# make up refuses the application (its trial node never answers APP_HEALTH 200). --keep-valve keeps it, to see
# that refusal. The CookieProcessor of the same file is kept.
#
# --session-timeout MINUTES writes a <session-config> into the WAR's web.xml: the package sets none, so its
# sessions last Tomcat's default 30 minutes. It is how an application's own timeout is changed, to see how many
# sessions its heap then holds (docs/guides/stateful.md).
set -euo pipefail
usage="usage: $0 OUT.war [--keep-valve] [--session-timeout MINUTES]"
out=${1:?$usage}
shift
keep_valve=
timeout_min=
while [ $# -gt 0 ]; do
    case "$1" in
        --keep-valve) keep_valve=--keep-valve; shift ;;
        --session-timeout)
            [[ "${2:-}" =~ ^[1-9][0-9]{0,3}$ ]] || {
                echo "capbench: --session-timeout '${2:-}' is not allowed: use whole minutes from 1 to 9999" >&2; exit 2; }
            timeout_min=$2; shift 2 ;;
        *) echo "$usage" >&2; exit 2 ;;
    esac
done
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

python3 - "$work/root/usr/share/tomcat10-examples/examples" "$out" "$keep_valve" "$timeout_min" <<'PY'
import re
import sys
import zipfile
from pathlib import Path

source, out, keep_valve, timeout_min = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] == "--keep-valve", sys.argv[4]
context = (source / "META-INF" / "context.xml").read_text()
if not keep_valve:
    context, dropped = re.subn(r"\s*<Valve className=\"org\.apache\.catalina\.valves\.RemoteCIDRValve\"[^>]*/>", "",
                               context)
    if dropped != 1:
        sys.exit(f"{source}/META-INF/context.xml: no RemoteCIDRValve found to drop")
rewritten = {"META-INF/context.xml": context}
if timeout_min:
    web = (source / "WEB-INF" / "web.xml").read_text()
    if "<session-config>" in web or web.count("</web-app>") != 1:
        sys.exit(f"{source}/WEB-INF/web.xml: has a session-config already, or no single </web-app> to put one before")
    rewritten["WEB-INF/web.xml"] = web.replace(
        "</web-app>", f"  <session-config>\n    <session-timeout>{timeout_min}</session-timeout>\n"
                      "  </session-config>\n</web-app>")
tmp = out.with_name(out.name + ".tmp")
with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as war:
    for name, text in rewritten.items():
        war.writestr(name, text)
    for path in sorted(source.rglob("*")):
        name = path.relative_to(source).as_posix()
        if path.is_file() and name not in rewritten:
            war.write(path, name)
tmp.replace(out)
PY
echo "capbench: $out: Debian's tomcat10-examples $version$([ -n "$keep_valve" ] && echo ', with its RemoteCIDRValve (127.0.0.0/8 only)' || echo ', without its RemoteCIDRValve')$([ -z "$timeout_min" ] || echo ", sessions ending after $timeout_min min")"
