"""capbench load: the constant-throughput drivers, the scenario, the capacity search, the runner and the bench
kinds (see README.md)."""
