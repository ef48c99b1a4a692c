"""Lists the bench kinds as make help shows them."""
from capbench.kinds import KINDS

for kind in KINDS.values():
    print(f"  make {'bench-' + kind.name:<17} {kind.description}")
