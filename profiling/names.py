"""Whose a method or class is, by its package: the JDK's, the server's, or else the application's; and which of
a node's threads serve requests."""
from __future__ import annotations

# The JDK's packages: their classes never name who holds an object (JfrSummary.java is given them too).
PLATFORM = ("java.", "javax.", "jdk.", "sun.", "com.sun.")
# The server's own packages on a node: Tomcat's, the Servlet API's and the monitoring's JMX exporter. A method in
# neither these nor the JDK's is the application's (the Grinder's, or the WAR deployed): its own CPU table.
SERVER = ("org.apache.tomcat.", "org.apache.catalina.", "org.apache.coyote.", "org.apache.juli.",
          "org.apache.jasper.", "org.apache.el.", "org.apache.naming.", "jakarta.", "io.prometheus.")
# The nodes' request threads: the named Executor of tomcat-conf/server.xml (http-exec-N).
REQUEST_THREAD_PREFIX = "http-exec-"
