# The controller host: PCP's loggers and exporter with our configs; runs as user capbench.
# Build context: the repository root (compose.yaml). Provisioned by cluster/provision/controller.sh, as a VM is.
FROM debian:bookworm-slim
COPY cluster/provision/lib.sh cluster/provision/controller.sh /opt/capbench/src/cluster/provision/
RUN /opt/capbench/src/cluster/provision/controller.sh packages
COPY metrics/ /opt/capbench/src/metrics/
COPY cluster/provision/healthy /opt/capbench/src/cluster/provision/
RUN /opt/capbench/src/cluster/provision/controller.sh install /opt/capbench/src && rm -rf /opt/capbench/src
USER capbench
WORKDIR /home/capbench
# Long-lived, so the harness can exec its tools here; tini reaps what they leave behind.
ENTRYPOINT ["/usr/bin/tini", "--", "sleep", "infinity"]
