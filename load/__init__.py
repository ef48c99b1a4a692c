"""capbench load: constant-throughput drivers, the scenario, and the capacity search (see README.md)."""
