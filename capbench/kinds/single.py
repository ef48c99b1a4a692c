"""make bench-single: node1's capacity alone, through HAProxy (the other nodes in maintenance)."""
from __future__ import annotations

from capbench.engine.kind import Kind, Needs


class Single(Kind):
    name = "single"
    description = "capacity of node1 alone through HAProxy (VARIANT= LEVEL= QUICK=1 LOADGEN= WRK2= ...)"
    targets = ("node1",)
    needs = Needs(gated=True)

    def run(self, bench, found: None) -> None:
        bench.search("node1")


KIND = Single()
