"""capbench commands: the programs behind the make targets (see README.md)."""
