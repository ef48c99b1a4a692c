"""python -m capbench: the capbench command (capbench/commands/cli.py)."""
from capbench.commands.cli import entry

entry()
