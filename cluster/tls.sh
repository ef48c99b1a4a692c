#!/usr/bin/env bash
# Makes the checkout's private certificate authority and a certificate for each host that ends TLS, once
# (docs/guides/tls.md): the balancer's, and each node's named as arguments (cluster/compose/compose.sh passes
# the topology's nodes). Called by cluster/secrets.sh, so make setup and every command that loads the settings
# find them. Nothing is printed: no key ever reaches a terminal, a log or a command line (openssl reads and
# writes files only).
#   .capbench/tls/             a folder only its owner enters (700)
#   .capbench/tls/ca.key       the authority's key (600): signs the certificates below, never leaves this folder
#   .capbench/tls/ca.pem       the authority's certificate: what the load hosts verify the balancer against, and
#                              the balancer each node (TLS=both)
#   .capbench/tls/HOST.pem     HOST's certificate and key in one file, as HAProxy and Tomcat read it (600, owned
#                              by the user that reads it in HOST's image: haproxy, uid 443, cluster/provision/lb.sh;
#                              tomcat, uid 444, cluster/provision/node.sh; 644 where this runs as another user
#                              than root), handed to the host at start as a Compose secret, never copied into an
#                              image
#   .capbench/tls/HOST.crt     HOST's certificate alone, whose fingerprint a run records (run.json's tls)
# The certificates name the hosts as the bench network knows them (lb, node1 …); a node's names lb too, the name a
# client dials, since where TLS=node the client's TLS ends at the node (a cluster's every member serves the
# service's name); its common name still says which node answered. They are EC P-256 and last 825
# days (the longest a browser accepts for a server's); a new checkout makes its own. A new authority (its files
# deleted) makes every host's certificate anew.
#   cluster/tls.sh [NODE...]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=$root/.capbench/tls
LB_UID=443
NODE_UID=444

# alt_names HOST: the names HOST's certificate is for.
alt_names() { if [ "$1" = lb ]; then echo "DNS:lb"; else echo "DNS:$1,DNS:lb"; fi; }
# A certificate made before it named all its names (a node's before TLS=node) is made anew.
issued() {
    [ -s "$dir/$1.pem" ] && [ -s "$dir/$1.crt" ] &&
        command openssl x509 -in "$dir/$1.crt" -noout -ext subjectAltName 2>/dev/null | tr -d ' ' |
        grep -qx "$(alt_names "$1")"
}
authority_made() { [ -s "$dir/ca.key" ] && [ -s "$dir/ca.pem" ]; }
all_made() {
    local host
    authority_made || return 1
    for host in lb "$@"; do issued "$host" || return 1; done
}

for node in "$@"; do
    [[ $node =~ ^node[1-9][0-9]*$ ]] || { echo "capbench: cluster/tls.sh: '$node' is not a node's name (node1, node2 …)" >&2; exit 2; }
done
all_made "$@" && exit 0
command -v openssl >/dev/null || { echo "capbench: openssl is needed to make the TLS certificates: install it (Debian: openssl)" >&2; exit 1; }
install -d -m 700 "$dir"
# One maker at a time: two first runs at once would otherwise mix an authority with another's certificate.
exec 9>"$dir/.lock"
flock 9
all_made "$@" && exit 0
work=$(mktemp -d "$dir/.new.XXXXXX")
trap 'rm -rf "$work"' EXIT
umask 077
# openssl's own lines (the signing's "Certificate request self-signature ok", a subject) are said only when it
# fails; it never writes a key to them.
openssl() {
    local said
    said=$(command openssl "$@" 2>&1) || { echo "capbench: making the TLS certificates failed (openssl $1): $said" >&2; return 1; }
}

# issue HOST UID: HOST's certificate signed by the authority, and its key as PKCS#8 (which both HAProxy and
# Tomcat's PEM reader take), moved into the folder.
issue() {
    local host=$1 uid=$2
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$work/$host.key"
    openssl req -new -key "$work/$host.key" -subj "/O=capbench/CN=$host" -out "$work/$host.csr"
    printf '%s\n' "basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature" \
        "extendedKeyUsage=serverAuth" "subjectAltName=$(alt_names "$host")" >"$work/$host.ext"
    openssl x509 -req -in "$work/$host.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial \
        -CAserial "$work/ca.srl" -sha256 -days 825 -extfile "$work/$host.ext" -out "$work/$host.crt"
    cat "$work/$host.crt" "$work/$host.key" >"$work/$host.pem"
    chmod 644 "$work/$host.crt"
    chmod 600 "$work/$host.pem"
    # Readable by the host's user inside its container (the file is bound there with its owner and mode). As
    # root: owned by that user, 600. Otherwise (no chown to another user) 644, as the database password is: on
    # this machine the folder above keeps everyone but its owner out.
    if [ "$(id -u)" -eq 0 ]; then
        chown "$uid:$uid" "$work/$host.pem"
    else
        chmod 644 "$work/$host.pem"
    fi
    mv "$work/$host.crt" "$work/$host.pem" "$dir/"
}

if ! authority_made; then
    openssl ecparam -name prime256v1 -genkey -noout -out "$work/ca.key"
    openssl req -x509 -new -key "$work/ca.key" -sha256 -days 825 -subj "/O=capbench/CN=capbench private CA" \
        -addext "basicConstraints=critical,CA:TRUE,pathlen:0" -addext "keyUsage=critical,keyCertSign,cRLSign" \
        -out "$work/ca.pem"
    chmod 644 "$work/ca.pem"
    chmod 600 "$work/ca.key"
    # The hosts' certificates of an authority that is gone verify against nothing: all are made anew.
    rm -f "$dir"/*.pem "$dir"/*.crt
    mv "$work/ca.key" "$work/ca.pem" "$dir/"
fi
issued lb || issue lb "$LB_UID"
for node in "$@"; do
    issued "$node" || issue "$node" "$NODE_UID"
done
