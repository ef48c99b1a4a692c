"""capbench: a horizontal-scaling capacity testbed for Java servers. The harness is this package; what the
hosts run (cluster/, tomcat-conf/, haproxy/, webapp/, load/, metrics/, compose.yaml, the Vagrantfile) is the
checkout around it, which capbench.checkout finds. Nothing is imported here: `python3 -m capbench.hosts` runs
with the standard library alone, before the venv exists."""
