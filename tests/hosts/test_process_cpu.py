"""A host's processes' CPU time by name, from /proc/PID/stat as its kernel writes it."""
from __future__ import annotations

from capbench.hosts import process_cpu

# getconf CLK_TCK, then stat lines: a name with a space and a parenthesis, two haproxy threads' processes.
STAT = """100
1 (tini) S 0 1 1 0 -1 4194560 500 0 0 0 3 4 0 0 20 0 1 0 100 2400000 200 18446744073709551615
7 (haproxy) S 1 1 1 0 -1 4194560 900 0 0 0 1250 830 0 0 20 0 3 0 200 90000000 4000 18446744073709551615
9 (pm cd (x)) S 1 1 1 0 -1 4194560 900 0 0 0 70 20 0 0 20 0 1 0 210 9000000 400 18446744073709551615
12 (haproxy) S 7 1 1 0 -1 4194560 900 0 0 0 50 50 0 0 20 0 1 0 300 90000000 4000 18446744073709551615
"""


def test_user_and_system_time_of_every_process_of_the_name():
    assert process_cpu.parse(STAT, "haproxy") == (1250 + 830 + 50 + 50) / 100
    assert process_cpu.parse(STAT, "pm cd (x)") == 0.9


def test_none_where_no_process_has_the_name_or_the_output_is_not_stat():
    assert process_cpu.parse(STAT, "java") is None
    assert process_cpu.parse("sh: getconf: not found\n", "haproxy") is None
