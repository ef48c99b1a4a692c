"""JDK Flight Recorder on a node's JVM, through jattach (the JVM's attach API: what jcmd sends), so the node's
image needs no JDK. A recording is written inside the node and read back whole through the backend, so it works
the same on every backend. GC.class_histogram is here too: it stops the world for a full collection, so it is
only taken after the load has stopped."""
from __future__ import annotations

from capbench.hosts.backend import ClusterError, backend

# The JDK's "profile" settings (CPU samples every 10 ms, monitors and parks waited 10 ms or more, allocation
# samples) with every exception thrown recorded, which "profile" leaves off (only errors).
SETTINGS = "settings=profile exceptions=all"
RECORDING_DIR = "/tmp"  # the node's JVM (user tomcat) writes there on every backend


def _recording_path(name: str) -> str:
    return f"{RECORDING_DIR}/{name}.jfr"


def _jcmd(node: str, pid: str, command: str) -> str:
    """One diagnostic command (`jcmd PID command`) to the node's JVM; its answer. ClusterError when the JVM
    refuses it (jattach prints the JVM's own message)."""
    done = backend().exec(node, ["jattach", pid, "jcmd", command], check=False, timeout=120)
    answer = done.stdout.decode(errors="replace")
    if done.returncode != 0:
        raise ClusterError(f"{node}: jcmd {command.split()[0]} failed: {answer.strip() or done.stderr.decode().strip()}")
    return answer


def start(node: str, pid: str, name: str) -> None:
    """Starts recording `name` on the node's JVM (one recording per name)."""
    _jcmd(node, pid, f"JFR.start name={name} {SETTINGS}")


def prime(node: str, pid: str) -> None:
    """Loads the recorder into the JVM with a recording stopped at once (nothing written), so that the first
    recording that counts does not pay for it."""
    start(node, pid, "capbench-prime")
    discard(node, pid, "capbench-prime")


def stop(node: str, pid: str, name: str) -> bytes:
    """Writes recording `name` with the paths from GC roots to its live sampled objects (who holds them), stops
    it, reads the .jfr out of the node and removes it there. Finding the paths walks the heap in a pause: never
    while a step is measured. The recording is stopped even when the dump fails: left running, it would weigh on
    every step after."""
    path = _recording_path(name)
    try:
        _jcmd(node, pid, f"JFR.dump name={name} path-to-gc-roots=true filename={path}")
    finally:
        discard(node, pid, name)
    done = backend().exec(node, ["cat", path], timeout=300)
    backend().exec(node, ["rm", "-f", path], check=False, timeout=30)
    if not done.stdout:
        raise ClusterError(f"{node}: the recording {path} was empty")
    return done.stdout


def discard(node: str, pid: str, name: str) -> None:
    """Stops recording `name` without writing it."""
    _jcmd(node, pid, f"JFR.stop name={name}")


def class_histogram(node: str, pid: str) -> str:
    """The heap's classes by bytes held (after a full collection: a pause; never while a step is measured)."""
    return _jcmd(node, pid, "GC.class_histogram")
