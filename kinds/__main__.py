"""Lists the bench kinds as make help shows them."""
from kinds import KINDS

for kind in KINDS.values():
    print(f"  make {'bench-' + kind.name:<17} {kind.description}")
