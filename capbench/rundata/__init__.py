"""The run-record contract between the harness (engine/ and the kinds), the monitoring (metrics/) and the
report (report/): the results layout, the records (written and read back as their classes) and their reading and
writing. docs/reference/records.md lists the fields, generated from the classes; this package imports nothing of
the others."""
