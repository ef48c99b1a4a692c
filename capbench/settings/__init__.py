"""capbench settings: every setting declared, read and checked (see README.md)."""
