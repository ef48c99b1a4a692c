"""Last of the Compose integration tests: taking the cluster down leaves nothing of it behind, no container and
no network (the session's cluster fixture takes it down anyway, pass or fail)."""
from __future__ import annotations

from conftest import IT_ENV, PROJECT, compose, run


def project_leftovers() -> tuple[str, str]:
    label = f"label=com.docker.compose.project={PROJECT}"
    return (run(["docker", "ps", "--all", "--quiet", "--filter", label]).stdout.strip(),
            run(["docker", "network", "ls", "--quiet", "--filter", label]).stdout.strip())


def test_down_leaves_no_containers_or_networks(cluster):
    compose("down", "--remove-orphans", "--timeout", "20", env=IT_ENV)
    assert project_leftovers() == ("", "")
