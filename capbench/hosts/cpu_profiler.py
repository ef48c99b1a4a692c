"""async-profiler's CPU sampler in a node's JVM, loaded through jattach (the JVM's attach API) at a capacity, never at
the JVM's start. It walks a thread's stack from the signal that samples it (AsyncGetCallTrace and the JVM's own
structures), so a thread inside an intrinsic's stub or a native copy is counted where it is; JFR's execution
sampler only walks threads it has stopped at a point where their stack can be read, and charged 97 % of v3's
samples to the one native call after its loop (issue 54). Its output is written inside the node and read back
whole through the backend, as JFR's recordings are, so it works the same on every backend.

The event: `cpu` (the kernel's perf events: samples at least N ns of a thread's CPU time apart) where the node's kernel
and seccomp allow it, else `itimer` (setitimer's profiling timer: the process's CPU time), which works in a
container without privileges; which one ran is recorded."""
from __future__ import annotations

from capbench.hosts.backend import ClusterError, backend

LIBRARY = "/opt/capbench/lib/libasyncProfiler.so"  # cluster/provision/node.sh installs it
OUT_DIR = "/tmp"  # the node's JVM (user tomcat) writes there on every backend
EVENTS = ("cpu", "itimer")  # tried in this order
LOG = f"{OUT_DIR}/capbench-async-profiler.log"  # the agent's own messages: why it refused


def _agent(node: str, pid: str, command: str) -> None:
    """One command to the agent in the node's JVM (loaded on first use). ClusterError with the agent's own message
    when it refuses."""
    backend().exec(node, ["rm", "-f", LOG], check=False, timeout=30)
    done = backend().exec(node, ["jattach", pid, "load", LIBRARY, "true", f"{command},log={LOG}"], check=False,
                          timeout=120)
    answer = done.stdout.decode(errors="replace")
    if done.returncode != 0 or _agent_code(answer) not in (None, 0):
        said = backend().exec(node, ["cat", LOG], check=False, timeout=30).stdout.decode(errors="replace").strip()
        raise ClusterError(f"{node}: async-profiler refused {command.split(',')[0]}: "
                           f"{said or answer.strip() or done.stderr.decode(errors='replace').strip()}")


def _agent_code(answer: str) -> int | None:
    """The agent's return code as jattach prints it ("return code: 200"), None where it printed none."""
    for line in answer.splitlines():
        key, _, value = line.partition(":")
        if key.strip().lower() == "return code" and value.strip().lstrip("-").isdigit():
            return int(value.strip())
    return None


def start(node: str, pid: str, interval_ns: int) -> str:
    """Starts sampling the JVM's CPU every interval_ns of CPU time; the event that ran (EVENTS' first that the
    node allows)."""
    refused = []
    for event in EVENTS:
        try:
            # cstack=vm: stacks walked from the JVM's own structures, through the JIT's copy stubs; the default
            # walker of 4.1 charged v1's samples inside them to the last native call (16 % of one profile to
            # getCurrentThreadAllocatedBytes, under which no native frame ran).
            _agent(node, pid, f"start,event={event},interval={interval_ns},cstack=vm")
            return event
        except ClusterError as problem:
            refused.append(str(problem))
    raise ClusterError("; ".join(refused))


def _path(name: str, suffix: str) -> str:
    return f"{OUT_DIR}/{name}.{suffix}"


def _read(node: str, path: str) -> bytes:
    done = backend().exec(node, ["cat", path], timeout=300)
    backend().exec(node, ["rm", "-f", path], check=False, timeout=30)
    if not done.stdout:
        raise ClusterError(f"{node}: async-profiler's {path} was empty")
    return done.stdout


def stop(node: str, pid: str, name: str, title: str) -> tuple[str, str, bytes]:
    """Stops sampling; the samples as collapsed stacks (a line per distinct stack: frames from the thread's root,
    ';'-separated, each Java frame marked as compiled, inlined or interpreted, then the count), the same stacks with
    the CPU time their samples stood for in ns (a sample the quota delayed stands for more than the interval: on
    half a core throttled in most periods, about four), and async-profiler's own flame graph of that CPU time (a
    self-contained page). Stopped even when a dump fails: left running, it would weigh on every step after."""
    stacks, cpu_ns, page = _path(name, "collapsed"), _path(name, "ns.collapsed"), _path(name, "html")
    try:
        _agent(node, pid, f"dump,collapsed,ann,file={stacks}")
        _agent(node, pid, f"dump,collapsed,ann,total,file={cpu_ns}")
    finally:
        # The title goes on a command line the agent splits at commas: none in it.
        _agent(node, pid, f"stop,flamegraph,total,title={title.replace(',', ';')},file={page}")
    return (_read(node, stacks).decode(errors="replace"), _read(node, cpu_ns).decode(errors="replace"),
            _read(node, page))
