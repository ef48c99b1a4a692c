#!/usr/bin/env bash
# The tools the tests use from Debian's packages, each only where missing: headless Chromium (the report test
# opens report.html in it offline and takes a screenshot; the report itself needs no browser) and LuaJIT (the
# scenario-driver tests run capbench.lua's own functions in it). Without root/apt it says what to install instead.
set -euo pipefail
declare -A package_of=([chromium]=chromium [luajit]=luajit)
missing=()
for tool in chromium luajit; do
    command -v "$tool" >/dev/null || missing+=("${package_of[$tool]}")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null
    echo "capbench: installed Debian's ${missing[*]} for the tests"
else
    echo "capbench: missing and cannot be installed here (not root with apt): Debian's ${missing[*]};" \
         "the report test needs chromium, the scenario-driver tests luajit" >&2
    exit 1
fi
