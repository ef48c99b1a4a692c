# A Docker engine in a container: `make swarm-lab` runs several on one machine and joins them into a swarm, so
# the Swarm backend is tested for real where there is one machine. Debian's docker.io (the engine of make setup)
# and iptables, which the engine needs for its networks. Runs as root: an engine cannot do otherwise; the lab
# gives it every capability but SYS_RESOURCE (design.md §4), never --privileged.
FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends docker.io iptables ca-certificates \
    && rm -rf /var/lib/apt/lists/*
# The socket in /engine, a folder the lab mounts from the machine, so the harness reaches this engine there
# (DOCKER_HOST=unix://…) as it would reach a real machine's.
# The tasks' cgroups under one parent of their own (capbench/hosts/swarm_lab.py removes it with the last lab).
ENTRYPOINT ["dockerd", "--host", "unix:///engine/docker.sock", "--cgroup-parent", "/capbench-lab"]
