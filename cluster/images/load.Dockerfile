# The load host: Debian with our tools for that role, and PCP; runs as user capbench.
# Build context: the repository root (compose.yaml). Provisioned by cluster/provision/load.sh, as a VM is.
FROM debian:bookworm-slim
COPY cluster/provision/lib.sh cluster/provision/load.sh /opt/capbench/src/cluster/provision/
RUN /opt/capbench/src/cluster/provision/load.sh packages
COPY .capbench/tools/oha/bin/oha /opt/capbench/src/.capbench/tools/oha/bin/
COPY .capbench/tools/capload/bin/capload /opt/capbench/src/.capbench/tools/capload/bin/
COPY load/run-step /opt/capbench/src/load/
COPY load/wrk2/capbench.lua /opt/capbench/src/load/wrk2/
COPY metrics/ /opt/capbench/src/metrics/
COPY cluster/provision/healthy /opt/capbench/src/cluster/provision/
RUN /opt/capbench/src/cluster/provision/load.sh install /opt/capbench/src && rm -rf /opt/capbench/src
USER capbench
WORKDIR /home/capbench
EXPOSE 44321
# Long-lived, so the harness can exec its tools here; tini reaps what they leave behind. with-pmcd starts
# PCP's pmcd first.
ENTRYPOINT ["/usr/bin/tini", "--", "/opt/capbench/bin/with-pmcd", "sleep", "infinity"]
