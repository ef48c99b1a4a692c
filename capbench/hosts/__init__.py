"""The hosts of the bench and how to reach them: the only code that knows one backend (Compose, Swarm, Vagrant)
from another. The topology (which hosts, which roles), the Backend each implementation offers, HAProxy's runtime
API and its logs, the nodes' JVMs, the cluster's settings and the one-bench lock. `python -m capbench.hosts` gives make
and the shell scripts the same (see its --help)."""
