"""The CPU time a host's processes of one name have used (/proc/PID/stat: user + system), read in one process
inside the host; two readings around a step give their cores over it (HAProxy's, for the testbed's ceiling)."""
from __future__ import annotations

from capbench.hosts.backend import backend

# The clock's ticks a second (USER_HZ) first, then every process's stat line.
READ = 'getconf CLK_TCK; cat /proc/[0-9]*/stat 2>/dev/null'


def parse(text: str, name: str) -> float | None:
    """The CPU seconds of the processes called `name` in READ's output; None when none is there."""
    lines = text.splitlines()
    if not lines or not lines[0].strip().isdigit():
        return None
    ticks, total, seen = int(lines[0]), 0, False
    for line in lines[1:]:
        head, _, rest = line.rpartition(")")  # the command's name may hold spaces and parentheses
        if head.partition("(")[2] != name:
            continue
        fields = rest.split()  # state, ppid, ... : utime and stime are the 12th and 13th after the name
        if len(fields) > 12:
            total += int(fields[11]) + int(fields[12])
            seen = True
    return total / ticks if seen else None


def cpu_seconds(host: str, name: str) -> float | None:
    done = backend().exec(host, ["sh", "-c", READ], check=False, timeout=30)
    return parse(done.stdout.decode(errors="replace"), name)
