"""The run-record contract between the harness (load/), the monitoring (metrics/) and the report (report/):
the results layout, the records and their reading and writing. README.md beside this file lists the fields;
this package imports nothing of the others."""
