"""The HAProxy stats page on this machine's loopback where the balancer publishes nothing (Swarm: its ingress
would publish on every machine's every address). A tunnel through the balancer's engine: each connection to
127.0.0.1:PORT becomes a `docker exec` into the balancer's container that joins its stdin and stdout to
HAProxy's stats port there (bash's /dev/tcp), so the page is reached as the harness reaches every host, over
the engine's own channel (a UNIX socket, or SSH), and nothing listens beyond this machine's loopback."""
from __future__ import annotations

import socket
import subprocess
import threading
from typing import Callable

STATS_PORT_IN_LB = 8404
JOIN = f'exec 3<>/dev/tcp/127.0.0.1/{STATS_PORT_IN_LB}; cat <&3 & cat >&3; wait'


def _pump(read: Callable[[int], bytes], write: Callable[[bytes], object], done: Callable[[], None]) -> None:
    try:
        while chunk := read(65536):
            write(chunk)
    except OSError:
        pass
    finally:
        done()


def _serve(client: socket.socket, argv: list[str]) -> None:
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               bufsize=0)

    def to_lb(data: bytes) -> None:
        process.stdin.write(data)

    def close_lb() -> None:
        try:
            process.stdin.close()
        except OSError:
            pass

    def close_client() -> None:
        try:
            client.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    threads = [threading.Thread(target=_pump, args=(client.recv, to_lb, close_lb), daemon=True),
               threading.Thread(target=_pump, args=(process.stdout.read, client.sendall, close_client), daemon=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    process.wait()
    client.close()


def run(exec_argv: list[str], port: int) -> None:
    """Serves until interrupted; exec_argv runs a command in the balancer's container with stdin attached."""
    server = socket.create_server(("127.0.0.1", port))
    print(f"capbench: the stats page at http://127.0.0.1:{server.getsockname()[1]}/stats (a tunnel to the "
          f"balancer while this runs; Ctrl-C ends it; user and password in .capbench/secrets.env)", flush=True)
    try:
        while True:
            client, _ = server.accept()
            threading.Thread(target=_serve, args=(client, [*exec_argv, "bash", "-c", JOIN]), daemon=True).start()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
