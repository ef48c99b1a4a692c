"""What a node's JDK Flight Recorder recording says, read on this machine (summary.py, JfrSummary.java). The
profile step that records at each capacity is capbench/engine/profile_step.py; the report's section, capbench/report/profiles.py."""
