"""python -m capbench: the capbench command (capbench/commands/cli.py)."""
import sys

from capbench.commands.cli import main

sys.exit(main())
