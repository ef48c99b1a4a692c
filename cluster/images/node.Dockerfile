# A node: Tomcat 10.1 and OpenJDK 17 from Debian, serving the Grinder WAR, and PCP; runs as user tomcat.
# Build context: the repository root (compose.yaml). Provisioned by cluster/provision/node.sh, as a VM is.
FROM debian:bookworm-slim
COPY cluster/provision/lib.sh cluster/provision/node.sh /opt/capbench/src/cluster/provision/
RUN /opt/capbench/src/cluster/provision/node.sh packages
COPY cluster/settings.sh /opt/capbench/src/cluster/
COPY tomcat-conf/ /opt/capbench/src/tomcat-conf/
COPY webapp/target/grinder.war /opt/capbench/src/webapp/target/
COPY metrics/ /opt/capbench/src/metrics/
COPY .capbench/tools/jmx-exporter/jmx_prometheus_javaagent.jar /opt/capbench/src/.capbench/tools/jmx-exporter/
COPY .capbench/tools/async-profiler/libasyncProfiler.so /opt/capbench/src/.capbench/tools/async-profiler/
COPY cluster/provision/healthy /opt/capbench/src/cluster/provision/
RUN /opt/capbench/src/cluster/provision/node.sh install /opt/capbench/src
USER tomcat
EXPOSE 8080
EXPOSE 44321
# tini as PID 1 forwards SIGTERM to the JVM and reaps children (of pmcd too, which with-pmcd starts first).
ENTRYPOINT ["/usr/bin/tini", "--", "/opt/capbench/bin/with-pmcd", "/opt/capbench/bin/run-tomcat.sh"]
