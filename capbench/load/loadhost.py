"""One load host (load, load2 …: capbench/load/load_hosts.py has them all): files put there, a step's generator run under
run-step (which records its envelope: start and end, CPU used, exit status) from an agreed instant or at once,
and its files brought back, a running one stopped, and a quick check of which nodes answer a URL. Reached
through the backend (hosts/)."""
from __future__ import annotations

import io
import tarfile
from pathlib import Path

from capbench.hosts.backend import backend
from capbench.hosts.balancer_address import BALANCER, BALANCER_TLS_PORT, ca_file, passed_through
from capbench.load.drivers import Envelope

RUN_STEP = "/opt/capbench/bin/run-step"
WORK_DIR = "/tmp/capbench"  # on the load host, writable by its user
# A routing check's request may take this long, and the check waits for all of them: right after the nodes and
# the database are re-created (a pool sweep's point) its queries can take seconds each, and a check that allowed
# about a second each broke the run off.
ANSWER_MAX_S = 10
NODE_HEADER = "X-Capbench-Node"  # the node that answered, named by the balancer (haproxy.cfg)


class LoadHost:
    def __init__(self, name: str = "load"):
        self.name = name  # one of LOAD_HOSTS (capbench/hosts/topology.py)

    def exec(self, argv: list[str], stdin: bytes | None = None, timeout: float = 120, check: bool = True) -> bytes:
        return backend().exec(self.name, argv, stdin=stdin, timeout=timeout, check=check).stdout

    def put(self, path: str, data: bytes) -> None:
        self.exec(["sh", "-c", f'mkdir -p "$(dirname "{path}")" && cat > "{path}"'], stdin=data)

    def put_binary(self, local: Path, path: str) -> None:
        self.put(path, local.read_bytes())
        self.exec(["chmod", "755", path])

    def run_step(self, step_dir: str, argv: list[str], timeout: float,
                 start_at: float | None = None) -> tuple[dict[str, bytes], Envelope]:
        """Runs a generator under run-step (from `start_at`, epoch seconds, if given); returns the files it left
        (by name) and the envelope. One call to the host: run-step, then the folder as a tar on stdout, then the
        folder removed."""
        script = 'dir=$1; shift; "$0" "$@" && tar -C "$dir" -c . && rm -rf "$dir"'
        at = ["--at", f"{start_at:.6f}"] if start_at is not None else []
        archive = self.exec(["sh", "-c", script, RUN_STEP, step_dir, *at, step_dir, *argv], timeout=timeout + 60)
        files = {}
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            for member in tar.getmembers():
                if member.isfile():
                    files[Path(member.name).name] = tar.extractfile(member).read()
        return files, Envelope.parse(files["envelope"].decode())

    def stop_step(self, step_dir: str) -> None:
        """Stops a step's generator that is still running (after an interrupt); quiet when there is none."""
        self.exec(["sh", "-c", f'kill "$(cat "{step_dir}/pid" 2>/dev/null)" 2>/dev/null; rm -rf "{step_dir}"'],
                  timeout=30, check=False)

    def nodes_answering(self, url: str, count: int) -> dict[str, int]:
        """Sends `count` requests one after another; how many each node answered, by the balancer's X-Capbench-Node
        header (haproxy.cfg), whatever application answered; where the balancer passes TLS through (TLS=node) it
        adds no header, and the node is named by the certificate it showed (its common name: cluster/tls.sh). Each
        request is a curl of its own, so a connection of its own: a passed-through connection is balanced as a
        request is."""
        verify = f"--cacert {ca} " if (ca := ca_file(url)) else ""
        if url.startswith(f"https://{BALANCER}:{BALANCER_TLS_PORT}") and passed_through():
            named = (f'-w "%{{certs}}" | sed -n "s/^Subject:.*CN = \\(node[0-9]*\\)\\$/{NODE_HEADER}: \\1/p" '
                     f'| grep .')
        else:
            named = f'-D - | grep -i "^{NODE_HEADER}:"'
        script = (f'for i in $(seq {count}); do curl -fsS {verify}-o /dev/null --max-time {ANSWER_MAX_S} "{url}" '
                  f'{named} || echo "{NODE_HEADER}: ?"; done')
        seen: dict[str, int] = {}
        for line in self.exec(["sh", "-c", script], timeout=30 + count * ANSWER_MAX_S).decode().splitlines():
            node = line.partition(":")[2].strip()
            if node:
                seen[node] = seen.get(node, 0) + 1
        return seen
