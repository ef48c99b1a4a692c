"""capbench load: the constant-throughput drivers, the load hosts and the scenario (see README.md)."""
