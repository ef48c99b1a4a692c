#!/usr/bin/env bash
# Makes the checkout's private certificate authority and the balancer's certificate once, for TLS=lb
# (docs/guides/tls.md); called by cluster/secrets.sh, so make setup and every command that loads the settings
# find them. Nothing is printed: no key ever reaches a terminal, a log or a command line (openssl reads and
# writes files only).
#   .capbench/tls/             a folder only its owner enters (700)
#   .capbench/tls/ca.key       the authority's key (600): signs the certificates below, never leaves this folder
#   .capbench/tls/ca.pem       the authority's certificate: what the load hosts verify the balancer against
#   .capbench/tls/lb.pem       the balancer's certificate and key in one file, as HAProxy reads it (600, owned by
#                              the lb image's haproxy user, uid 443: cluster/provision/lb.sh; 644 where this
#                              runs as another user than root), handed to the balancer at start as a Compose
#                              secret, never copied into an image
#   .capbench/tls/lb.crt       the balancer's certificate alone, whose fingerprint a run records (run.json's tls)
# The certificates name the hosts as the bench network knows them (lb), are EC P-256 and last 825 days (the
# longest a browser accepts for a server's); a new checkout makes its own.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=$root/.capbench/tls
LB_UID=443

made() { [ -s "$dir/ca.key" ] && [ -s "$dir/ca.pem" ] && [ -s "$dir/lb.pem" ] && [ -s "$dir/lb.crt" ]; }
made && exit 0
command -v openssl >/dev/null || { echo "capbench: openssl is needed to make the balancer's certificate: install it (Debian: openssl)" >&2; exit 1; }
install -d -m 700 "$dir"
# One maker at a time: two first runs at once would otherwise mix an authority with another's certificate.
exec 9>"$dir/.lock"
flock 9
made && exit 0
work=$(mktemp -d "$dir/.new.XXXXXX")
trap 'rm -rf "$work"' EXIT
umask 077
# openssl's own lines (the signing's "Certificate request self-signature ok", a subject) are said only when it
# fails; it never writes a key to them.
openssl() {
    local said
    said=$(command openssl "$@" 2>&1) || { echo "capbench: making the TLS certificates failed (openssl $1): $said" >&2; return 1; }
}
openssl ecparam -name prime256v1 -genkey -noout -out "$work/ca.key"
openssl req -x509 -new -key "$work/ca.key" -sha256 -days 825 -subj "/O=capbench/CN=capbench private CA" \
    -addext "basicConstraints=critical,CA:TRUE,pathlen:0" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out "$work/ca.pem"
openssl ecparam -name prime256v1 -genkey -noout -out "$work/lb.key"
openssl req -new -key "$work/lb.key" -subj "/O=capbench/CN=lb" -out "$work/lb.csr"
printf '%s\n' "basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature" \
    "extendedKeyUsage=serverAuth" "subjectAltName=DNS:lb" >"$work/lb.ext"
openssl x509 -req -in "$work/lb.csr" -CA "$work/ca.pem" -CAkey "$work/ca.key" -CAcreateserial -sha256 \
    -days 825 -extfile "$work/lb.ext" -out "$work/lb.crt"
cat "$work/lb.crt" "$work/lb.key" >"$work/lb.pem"
chmod 644 "$work/ca.pem" "$work/lb.crt"
chmod 600 "$work/ca.key" "$work/lb.pem"
# Readable by the balancer's user inside its container (the file is bound there with its owner and mode). As
# root: owned by that user, 600. Otherwise (no chown to another user) 644, as the database password is: on this
# machine the folder above keeps everyone but its owner out.
if [ "$(id -u)" -eq 0 ]; then
    chown "$LB_UID:$LB_UID" "$work/lb.pem"
else
    chmod 644 "$work/lb.pem"
fi
mv "$work/ca.key" "$work/ca.pem" "$work/lb.crt" "$work/lb.pem" "$dir/"
