# Sourced by the example applications' scripts: maven_get PATH OUT downloads PATH (group/artifact/version/file
# under the repository's root) from Maven Central (MAVEN_REPO= another repository's root URL, e.g. a mirror) to
# OUT and checks it against the repository's SHA-1.
maven_get() {
    local url=${MAVEN_REPO:-https://repo.maven.apache.org/maven2}/$1 expected actual
    curl -fsS --retry 2 -o "$2" "$url" || { echo "capbench: could not download $url" >&2; exit 1; }
    expected=$(curl -fsS --retry 2 "$url.sha1" | cut -c1-40) \
        || { echo "capbench: could not download $url.sha1" >&2; exit 1; }
    actual=$(sha1sum "$2" | cut -c1-40)
    [ "$actual" = "$expected" ] || { echo "capbench: $url: SHA-1 $actual, Maven Central says $expected" >&2; exit 1; }
}
