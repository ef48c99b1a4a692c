"""Last of the Compose integration tests: `make down` leaves nothing of the cluster behind, no container and no
network, even under settings that could not start it (the session's cluster fixture takes it down anyway, pass
or fail)."""
from __future__ import annotations

from conftest import IT_ENV, PROJECT, run


def project_leftovers() -> tuple[str, str]:
    label = f"label=com.docker.compose.project={PROJECT}"
    return (run(["docker", "ps", "--all", "--quiet", "--filter", label]).stdout.strip(),
            run(["docker", "network", "ls", "--quiet", "--filter", label]).stdout.strip())


def test_down_leaves_no_containers_or_networks(cluster):
    # NODES=4 under the default profile, which describes three nodes, is refused by `make up`; `make down` goes
    # by the project's name alone (a user who ran NODES=4 PROFILE=homogeneous types `make down` after it).
    run(["make", "--no-print-directory", "down", "NODES=4"], env=IT_ENV, timeout=300)
    assert project_leftovers() == ("", "")
