"""capbench duet: two builds measured together (see README.md)."""
