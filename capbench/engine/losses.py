"""What the run lost, as events: a machine that stopped answering (with every role it ran) or, where its machine
still answers, a host that went down. The searcher reports a node HAProxy holds DOWN, and the run's end asks after
every machine; the backend says whether their machines are lost (capbench/hosts/backend.py's lost_machines). Each event is
said on the console when seen and kept in summary.json's `events` (capbench/rundata/events.py); a run with any ends
`degraded`, and a figure it could not measure says which loss (capbench/analysis/not_measured.py)."""
from __future__ import annotations

import time

from capbench.engine.progress import say
from capbench.hosts import topology
from capbench.hosts.backend import ClusterError, backend
from capbench.hosts.topology import DATABASE
from capbench.rundata.events import HOST_DOWN, MACHINE_LOST, sentence, touching


class Losses:
    """The run's events, in the order they were seen; each machine and each host once."""

    def __init__(self) -> None:
        self.events: list[dict] = []
        self._backend = None  # made once, when first asked: a failed step may ask many times in a run

    def backend(self):
        if self._backend is None:
            self._backend = backend()
        return self._backend

    def seen(self, hosts: tuple[str, ...] | list[str], how: str, down: bool = True) -> list[dict]:
        """`hosts` were seen gone (`how`: by what): asks the backend whether their machines answer; each machine
        that does not is an event, and (with `down`: the hosts are known down) so is each host whose machine
        answers. Returns the new events, said on the console. A backend that cannot be asked is said, not
        raised: the run's own outcome matters more."""
        new_hosts = tuple(h for h in hosts if not touching(self.events, (h,)))
        if not new_hosts:
            return []
        try:
            machines = self.backend().lost_machines(new_hosts)
        except (ClusterError, OSError, ValueError) as problem:  # ValueError: no backend named or found
            say(f"warning: could not ask whether {', '.join(new_hosts)}'s machines answer: {problem}")
            machines = []
        now = time.time()
        new = [{"what": MACHINE_LOST, "machine": m.machine, "roles": list(m.roles),
                "hosts": [h for h in new_hosts if h in m.roles], "epoch": now, "seen": f"{how}; {m.seen}"}
               for m in machines]
        on_lost = {h for m in machines for h in m.roles}
        if down:
            new += [{"what": HOST_DOWN, "machine": None, "roles": [h], "hosts": [h], "epoch": now, "seen": how}
                    for h in new_hosts if h not in on_lost]
        for event in new:  # dated at the run's end by HAProxy's DOWN, which the harness reads only then
            say(f"warning: {sentence(event, found=True)}")
        self.events += new
        return new

    def sweep(self, how: str) -> list[dict]:
        """Every machine of the bench asked once more (the database's too, where the backend runs one): a machine
        lost without a node HAProxy saw go down (the database's, a load host's) is named all the same."""
        try:
            hosts = (*topology.HOSTS, *([DATABASE] if self.backend().database else []))
        except (ClusterError, OSError, ValueError) as problem:
            say(f"warning: could not ask the backend which hosts it runs: {problem}")
            return []
        return self.seen(hosts, how, down=False)

    def as_json(self, started: float, lb_events: list[dict]) -> list[dict]:
        """The events for summary.json, each dated by HAProxy's last DOWN of its hosts before the harness's check
        (which waits DOWN_WAIT_S to tell a loss from an overloaded node's flap), where HAProxy logged one."""
        out = []
        for event in self.events:
            downs = [e["epoch"] for e in lb_events if e["state"] == "DOWN" and e["node"] in event["hosts"]
                     and e["epoch"] <= event["epoch"]]
            dated = dict(event)
            if downs:
                dated["epoch"] = max(d for d in downs if d <= event["epoch"])
                dated["checked_epoch"] = event["epoch"]
            dated["t_s"] = round(dated["epoch"] - started, 3)
            dated["sentence"] = sentence(dated)
            out.append(dated)
        return out
