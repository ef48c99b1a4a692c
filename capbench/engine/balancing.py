"""The balancer during a run: its algorithm and weights set for a measurement and put back to the profile's
afterwards, a log of every request while a kind needs one, and HAProxy's DOWN/UP events of the nodes kept for
the summary. Part of the Bench (capbench/engine/runner.py)."""
from __future__ import annotations

import subprocess

from capbench.engine.monitoring import Monitoring
from capbench.engine.progress import say
from capbench.hosts import haproxy, haproxy_log, topology
from capbench.hosts.backend import ClusterError, backend
from capbench.hosts.cluster_settings import cluster_settings
from capbench.rundata.run import node_values

DEFAULT_BALANCE = "roundrobin"


class LbEvents:
    """HAProxy's DOWN/UP state changes of the nodes since `started` (epoch seconds), kept as they are read."""

    def __init__(self, started: float):
        self.started = started
        self.events: list[dict] = []

    def collect(self) -> None:
        """Keeps HAProxy's state changes of the nodes so far (its ring is lost when the lb is re-created)."""
        try:
            changes = haproxy_log.state_changes(self.started)
        except (ClusterError, OSError, subprocess.SubprocessError) as problem:
            say(f"warning: HAProxy's state changes could not be read: {problem}")
            return
        for change in changes:
            state = change.state
            if state == "READY" and self._last_state(change.server, change.at) == "DOWN":
                state = "UP"  # a DOWN node taken through maintenance (a duet's routing) comes out of it serving
            event = {"epoch": change.at, "node": change.server, "state": state, "text": change.text}
            if state in ("DOWN", "UP") and event not in self.events:
                self.events.append(event)

    def _last_state(self, node: str, before: float) -> str | None:
        kept = [e for e in self.events if e["node"] == node and e["epoch"] <= before]
        return max(kept, key=lambda e: e["epoch"])["state"] if kept else None


class Balancer:
    """Re-creates the balancer with `monitoring` paused around it and `lb_events` collected before it (its ring
    goes with it); `cluster_env` are the cluster's settings over this process's environment (make tune's point)."""

    def __init__(self, monitoring: Monitoring, lb_events: LbEvents, cluster_env: dict[str, str]):
        self.monitoring = monitoring
        self.lb_events = lb_events
        self.cluster_env = cluster_env
        self.choices: dict[str, dict] = {}  # per balancing choice, the balance and weights measured under

    def set(self, choice: str, algorithm: str, weights: dict[str, int]) -> None:
        """Puts the balancer in this configuration: the algorithm needs a new HAProxy (monitoring pauses while
        it is re-created, as its host's logger would lose its pmcd), the weights go through the runtime API."""
        if algorithm != self.running():
            say(f"balancer: re-creating it with balance {algorithm}")
            self._recreate({"LB_BALANCE": algorithm})
        haproxy.set_weights(weights)
        self.choices[choice] = {"balance": algorithm, "weights": weights}
        say(f"balancer: {choice}: balance {algorithm}, weights "
            + ", ".join(f"{node} {w}" for node, w in weights.items()))

    def running(self) -> str:
        chosen = [b["balance"] for b in self.choices.values()]
        return chosen[-1] if chosen else cluster_settings(self.cluster_env).get("LB_BALANCE", DEFAULT_BALANCE)

    def restore(self) -> None:
        """Back to the profile's balancer: its algorithm and weights (the documented end state)."""
        settings = cluster_settings(self.cluster_env)
        profile_balance = settings.get("LB_BALANCE", DEFAULT_BALANCE)
        if self.running() != profile_balance:
            self._recreate({"LB_BALANCE": profile_balance})
        haproxy.set_weights({node: int(w) for node, w in node_values(settings, "WEIGHT", topology.NODES).items()})
        self.choices["restored"] = {"balance": profile_balance}

    def with_request_log(self, action):
        """Runs `action` with HAProxy logging every request (the balancer re-created with LB_LOG_REQUESTS=1,
        and without it afterwards, whatever happens): bench-failover's and bench-stress's analyses read it."""
        say("balancer: re-creating it with a log of every request (LB_LOG_REQUESTS=1)")
        self._recreate({"LB_LOG_REQUESTS": "1"})
        try:
            return action()
        finally:
            say("balancer: back without the request log")
            self._recreate({"LB_LOG_REQUESTS": "0"})

    def _recreate(self, settings: dict[str, str]) -> None:
        self.lb_events.collect()
        self.monitoring.paused(lambda: backend().recreate(("lb",), {**self.cluster_env, **settings}))
