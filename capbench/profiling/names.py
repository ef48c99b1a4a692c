"""Whose a method or class is, by its package: the JDK's, the server's, or else the application's (and, of those,
the service's own code); and which of a node's threads serve requests."""
from __future__ import annotations

import zipfile

# The JDK's packages: their classes never name who holds an object (JfrSummary.java is given them too).
PLATFORM = ("java.", "javax.", "jdk.", "sun.", "com.sun.")
# The server's own packages on a node: Tomcat's, the Servlet API's and the monitoring's JMX exporter. A method in
# neither these nor the JDK's is the application's (the Grinder's, or the WAR deployed): its own CPU table.
SERVER = ("org.apache.tomcat.", "org.apache.catalina.", "org.apache.coyote.", "org.apache.juli.",
          "org.apache.jasper.", "org.apache.el.", "org.apache.naming.", "jakarta.", "io.prometheus.")
# The nodes' request threads: the named Executor of tomcat-conf/server.xml (http-exec-N).
REQUEST_THREAD_PREFIX = "http-exec-"
# Where an archive keeps the application's own classes, apart from the libraries it ships (BOOT-INF/lib,
# WEB-INF/lib): a Spring Boot JAR's, and a WAR's. A plain executable JAR has no such place.
OWN_CLASSES = ("BOOT-INF/classes/", "WEB-INF/classes/")


def own_prefixes(archive: str) -> tuple[str, ...]:
    """The packages of the application's own classes in a Spring Boot JAR or a WAR, as method-name prefixes
    ("capbench.orders."), a package inside another listed once; () for another archive or one that cannot be read.
    The application's table counts the framework too (Spring's filters wrap every request): these name the
    service's own methods among them."""
    try:
        with zipfile.ZipFile(archive) as zipped:
            names = zipped.namelist()
    except (OSError, zipfile.BadZipFile):
        return ()
    packages = sorted({name[len(root):].rpartition("/")[0].replace("/", ".") + "."
                       for name in names if name.endswith(".class")
                       for root in OWN_CLASSES if name.startswith(root) and "/" in name[len(root):]})
    kept: list[str] = []
    for package in packages:
        if not any(package.startswith(outer) for outer in kept):
            kept.append(package)
    return tuple(kept)
