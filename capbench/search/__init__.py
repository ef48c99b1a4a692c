"""capbench search: the capacity search, pure logic (see README.md)."""
