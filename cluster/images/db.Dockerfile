# The shared database: PostgreSQL 15 from Debian, and PCP; runs as user postgres. PostgreSQL is reached only from
# the data network, which only the nodes share (db/start); its pmcd from the bench network.
# Build context: the repository root (compose.yaml). Provisioned by cluster/provision/db.sh, as a VM would be.
FROM debian:bookworm-slim
COPY cluster/provision/lib.sh cluster/provision/db.sh /opt/capbench/src/cluster/provision/
RUN /opt/capbench/src/cluster/provision/db.sh packages
COPY db/ /opt/capbench/src/db/
COPY metrics/ /opt/capbench/src/metrics/
COPY cluster/provision/healthy /opt/capbench/src/cluster/provision/
RUN /opt/capbench/src/cluster/provision/db.sh install /opt/capbench/src
USER postgres
EXPOSE 5432 44321
# SIGINT is PostgreSQL's fast shutdown; SIGTERM's smart one waits for the nodes' pools to disconnect, which they
# never do by themselves, until Docker kills it.
STOPSIGNAL SIGINT
# with-pmcd starts PCP's pmcd first, then execs the database's start script.
ENTRYPOINT ["/usr/bin/tini", "--", "/opt/capbench/bin/with-pmcd", "/opt/capbench/bin/db-start"]
