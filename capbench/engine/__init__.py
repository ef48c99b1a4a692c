"""capbench engine: a bench run, whatever its kind (see README.md)."""
