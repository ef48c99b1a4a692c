"""capbench load: constant-throughput drivers, the scenario, and the capacity search (see README.md)."""
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the capbench checkout
