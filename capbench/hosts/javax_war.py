"""Whether a WAR is built for javax.servlet (Java EE 8 and older), which the nodes' Tomcat 10.1 cannot run: it
serves jakarta.servlet only, and deploys such a WAR without a word while its servlets never load. cluster/app.sh
converts one with Tomcat's migration tool (APP_MIGRATE=auto) before it is staged.

    python3 capbench/hosts/javax_war.py APP.war    exit 0 and print why when it is a javax WAR, 1 when it is not,
                                            2 when it cannot be read

The deployment descriptor decides where it names its schema: Java EE's (java.sun.com or xmlns.jcp.org) is javax,
Jakarta EE's (jakarta.ee) is jakarta. Without one (an application of annotations only), the classes do: a WAR whose
classes name javax/servlet/ and none jakarta/servlet/ is javax, its own classes (WEB-INF/classes) looked at before
its libraries (WEB-INF/lib), since a library may name both to run on either."""
from __future__ import annotations

import io
import re
import sys
import zipfile

JAVAX, JAKARTA = b"javax/servlet/", b"jakarta/servlet/"
SCHEMA = re.compile(rb'xmlns\s*=\s*"(?P<ns>[^"]+)"')
JAVA_EE = ("http://java.sun.com/xml/ns/", "http://xmlns.jcp.org/xml/ns/")
JAKARTA_EE = "https://jakarta.ee/xml/ns/"


def _names(archive: zipfile.ZipFile, prefix: str) -> tuple[str | None, str | None]:
    """(the first class under prefix that names javax.servlet, the first that names jakarta.servlet)."""
    javax = jakarta = None
    for name in archive.namelist():
        if name.startswith(prefix) and name.endswith(".class"):
            data = archive.read(name)
            javax = javax or (name if JAVAX in data else None)
            jakarta = jakarta or (name if JAKARTA in data else None)
    return javax, jakarta


def why_javax(path: str) -> str | None:
    """Why the WAR at path is a javax one, or None when it is not."""
    with zipfile.ZipFile(path) as war:
        names = set(war.namelist())
        if "WEB-INF/web.xml" in names:
            found = SCHEMA.search(war.read("WEB-INF/web.xml"))
            namespace = found.group("ns").decode(errors="replace") if found else ""
            if namespace.startswith(JAVA_EE):
                return f"WEB-INF/web.xml is a Java EE descriptor ({namespace})"
            if namespace.startswith(JAKARTA_EE):
                return None
        javax, jakarta = _names(war, "WEB-INF/classes/")
        if javax or jakarta:
            return f"{javax} names javax.servlet" if javax and not jakarta else None
        for name in sorted(n for n in names if n.startswith("WEB-INF/lib/") and n.endswith(".jar")):
            with zipfile.ZipFile(io.BytesIO(war.read(name))) as library:
                javax, jakarta = _names(library, "")
            if javax and not jakarta:
                return f"{name} ({javax}) names javax.servlet"
            if jakarta:
                return None
    return None


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: javax_war.py APP.war", file=sys.stderr)
        return 2
    try:
        why = why_javax(argv[1])
    except (OSError, zipfile.BadZipFile) as problem:
        print(f"{argv[1]}: {problem}", file=sys.stderr)
        return 2
    if why:
        print(why)
        return 0
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
