"""The balancer during a run: its algorithm and weights set for a measurement and put back to the profile's
afterwards, a log of every request while a kind needs one, and HAProxy's DOWN/UP events of the nodes kept for
the summary. Part of the Bench (load/runner.py)."""
from __future__ import annotations

import subprocess

from hosts import haproxy, haproxy_log
from hosts.backend import ClusterError, backend
from hosts.settings import cluster_settings
from hosts.topology import NODES
from load.progress import say
from rundata.run import node_values

DEFAULT_BALANCE = "roundrobin"


class Balancing:
    """Needs the Bench's `balancing` (choice → balance, weights), `lb_events`, `started` and monitoring."""

    def balance(self, choice: str, algorithm: str, weights: dict[str, int]) -> None:
        """Puts the balancer in this configuration: the algorithm needs a new HAProxy (monitoring pauses while
        it is re-created, as its host's logger would lose its pmcd), the weights go through the runtime API."""
        if algorithm != self.balancing_running():
            say(f"balancer: re-creating it with balance {algorithm}")
            self.with_monitoring_paused(lambda: backend().recreate("lb", {"LB_BALANCE": algorithm}))
        haproxy.set_weights(weights)
        self.balancing[choice] = {"balance": algorithm, "weights": weights}
        say(f"balancer: {choice}: balance {algorithm}, weights "
            + ", ".join(f"{node} {w}" for node, w in weights.items()))

    def balancing_running(self) -> str:
        chosen = [b["balance"] for b in self.balancing.values()]
        return chosen[-1] if chosen else cluster_settings().get("LB_BALANCE", DEFAULT_BALANCE)

    def restore_balancer(self) -> None:
        """Back to the profile's balancer: its algorithm and weights (the documented end state)."""
        settings = cluster_settings()
        profile_balance = settings.get("LB_BALANCE", DEFAULT_BALANCE)
        if self.balancing_running() != profile_balance:
            self.with_monitoring_paused(lambda: backend().recreate("lb", {"LB_BALANCE": profile_balance}))
        haproxy.set_weights({node: int(w) for node, w in node_values(settings, "WEIGHT", NODES).items()})
        self.balancing["restored"] = {"balance": profile_balance}

    def collect_lb_events(self) -> None:
        """Keeps HAProxy's state changes of the nodes so far (its ring is lost when the lb is re-created)."""
        try:
            changes = haproxy_log.state_changes(self.started)
        except (ClusterError, OSError, subprocess.SubprocessError) as problem:
            say(f"warning: HAProxy's state changes could not be read: {problem}")
            return
        for change in changes:
            event = {"epoch": change.at, "node": change.server, "state": change.state, "text": change.text}
            if change.state in ("DOWN", "UP") and event not in self.lb_events:
                self.lb_events.append(event)

    def with_request_log(self, action):
        """Runs `action` with HAProxy logging every request (the balancer re-created with LB_LOG_REQUESTS=1,
        and without it afterwards, whatever happens): bench-failover's and bench-stress's analyses read it."""
        say("balancer: re-creating it with a log of every request (LB_LOG_REQUESTS=1)")
        self.with_monitoring_paused(lambda: backend().recreate("lb", {"LB_LOG_REQUESTS": "1"}))
        try:
            return action()
        finally:
            say("balancer: back without the request log")
            self.with_monitoring_paused(lambda: backend().recreate("lb", {"LB_LOG_REQUESTS": "0"}))
