#!/usr/bin/env bash
# Headless Chromium from Debian's packages, where missing: the report test opens report.html in it offline and
# takes a screenshot (the report itself needs no browser). Without root/apt it says what to install instead.
set -euo pipefail
if command -v chromium >/dev/null; then
    exit 0
fi
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null
    echo "capbench: installed $(chromium --version 2>/dev/null | head -1)"
else
    echo "capbench: chromium is missing and cannot be installed here (not root with apt): install Debian's" \
         "chromium package; the report test needs it" >&2
    exit 1
fi
