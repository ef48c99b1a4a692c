# The load balancer: HAProxy 2.6 from Debian, and PCP; runs as user haproxy.
# Build context: the repository root (compose.yaml). Provisioned by cluster/provision/lb.sh, as a VM is.
FROM debian:bookworm-slim
COPY cluster/provision/lib.sh cluster/provision/lb.sh /opt/capbench/src/cluster/provision/
RUN /opt/capbench/src/cluster/provision/lb.sh packages
COPY haproxy/ /opt/capbench/src/haproxy/
COPY metrics/ /opt/capbench/src/metrics/
COPY cluster/provision/healthy /opt/capbench/src/cluster/provision/
RUN /opt/capbench/src/cluster/provision/lb.sh install /opt/capbench/src
USER haproxy
EXPOSE 8080 8443 8404 44321
# -W: master-worker (a reload keeps the process tree); -db: stay in the foreground under tini. with-pmcd
# starts PCP's pmcd first.
ENTRYPOINT ["/usr/bin/tini", "--", "/opt/capbench/bin/with-pmcd", "/opt/capbench/bin/haproxy-start"]
