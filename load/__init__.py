"""capbench load: the commands (bench, tune, gate, report, docs), the settings, the constant-throughput drivers,
the scenario, the capacity search, the run and the bench kinds (see README.md)."""
