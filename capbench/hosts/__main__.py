"""python -m capbench.hosts VERB: the cluster's hosts for make and the shell scripts, on whichever backend runs them.
Standard library only (it runs before the harness's virtual environment exists). Exit status: 0 done, 1 failed,
2 bad input."""
from __future__ import annotations

import argparse
import sys

from capbench.hosts import haproxy, topology
from capbench.hosts.backend import BackendError, ClusterError, backend, backend_class, detect
from capbench.hosts.balancer_address import refused_on, tls
from capbench.hosts.cluster_settings import SettingsRefused


def print_states() -> None:
    """Each node's admin state in the balancer: maint (taken out) or ready."""
    for node, state in haproxy.server_states().items():
        print(node, state["admin"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m capbench.hosts", description=__doc__.split("\n")[0])
    verbs = parser.add_subparsers(dest="verb", required=True)
    verbs.add_parser("backend", help="the backend's name: BACKEND, or the one whose hosts run (compose otherwise)")
    verbs.add_parser("built", help="the make target that builds what the backend's hosts run")
    verbs.add_parser("setup", help="the make target that installs what the backend needs beyond make setup's own")
    verbs.add_parser("up", help="bring the cluster to the current settings, wait until healthy")
    verbs.add_parser("down", help="stop the cluster (results/ and the images or VMs' disks stay)")
    verbs.add_parser("status", help="one row per host")
    verbs.add_parser("stats", help="the HAProxy stats page on this machine's loopback (a tunnel where needed)")
    verbs.add_parser("unhealthy", help="the hosts that are not running and healthy (exit 1 if any)")
    logs = verbs.add_parser("logs", help="the last 200 log lines of each host, or of one")
    logs.add_argument("host", nargs="?", choices=topology.HOSTS)
    logs.add_argument("--follow", action="store_true")
    lb_api = verbs.add_parser("lb-api", help="one command to HAProxy's runtime API, e.g. 'show servers state nodes'")
    lb_api.add_argument("command")
    rotation = verbs.add_parser("rotation", help="take a node out of the balancer's rotation (maint) or put it back")
    rotation.add_argument("node")
    rotation.add_argument("state", choices=("maint", "ready"))
    args = parser.parse_args(argv)
    try:
        if args.verb == "backend":
            print(detect())
            return 0
        if args.verb == "rotation" and args.node not in topology.NODES:
            raise BackendError(f"NODE='{args.node}' is not a node: use one of {' '.join(topology.NODES)}")
        if args.verb in ("built", "setup"):
            print(getattr(backend_class(), args.verb) or "")
            return 0
        chosen = backend()
        if args.verb == "up":
            try:
                where = tls()
            except SettingsRefused:
                where = "off"  # settings refused: the backend's up says which, one line each, as it always has
            if refusal := refused_on(chosen.name, where):
                raise BackendError(refusal)
            done = chosen.up()
            if done == 0:
                haproxy.reseat_rotation()
            return done
        if args.verb in ("down", "status", "stats"):
            return getattr(chosen, args.verb)()
        elif args.verb == "logs":
            return chosen.logs(args.host, args.follow)
        elif args.verb == "unhealthy":
            down = chosen.unhealthy()
            print(" ".join(down))
            return 1 if down else 0
        elif args.verb == "lb-api":
            print(haproxy.api(args.command), end="")
        elif args.verb == "rotation":
            haproxy.set_state(args.node, args.state)
            print_states()
    except BackendError as problem:
        print(f"capbench: {problem}", file=sys.stderr)
        return 2
    except ClusterError as problem:
        print(f"capbench: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
