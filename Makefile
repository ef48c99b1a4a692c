# capbench — `make help` lists the targets. Settings for up/test: PROFILE=small|lab and any key of
# tomcat-conf/tunables.env or cluster/profiles/*.env, e.g. `make up TOMCAT_MAX_THREADS=16 NODE1_CPUS=0.6`.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

COMPOSE := cluster/compose.sh
WAR := webapp/target/grinder.war
WEBAPP_SOURCES := webapp/pom.xml $(shell find webapp/src -type f 2>/dev/null)
VENV := .venv
PYTHON := $(VENV)/bin/python
BENCH := $(PYTHON) -m load.bench
OHA := .capbench/tools/oha/bin/oha
# The Prometheus JMX exporter java agent the nodes load (JVM and Tomcat metrics for PCP), from Maven Central.
JMX_AGENT_VERSION := 1.0.1
JMX_AGENT := .capbench/tools/jmx-exporter/jmx_prometheus_javaagent.jar
NODES := node1 node2 node3
# Where the cluster runs: compose (containers) or vagrant (VMs, see Vagrantfile). Unset, cluster/backend.sh
# picks vagrant when a machine of the Vagrantfile is running, else compose; everything below gets it.
override BACKEND := $(shell BACKEND='$(BACKEND)' cluster/backend.sh)
$(if $(BACKEND),,$(error the backend could not be chosen: see the line above))
export BACKEND
# What a bench needs built first: the images, or on VMs the artifacts that `vagrant up` copies to them.
BUILT := $(if $(filter vagrant,$(BACKEND)),artifacts,images)
# Each server's name and admin state (bit 1 of srv_admin_state: forced maintenance) from the runtime API.
SHOW_NODE_STATES := cluster/lb-api.sh "show servers state nodes" \
	| awk 'NR > 2 && NF > 6 {print $$4, ($$7 % 2 ? "maint" : "ready")}'

.PHONY: help setup artifacts images up down status logs test test-unit test-python test-load test-config \
	test-integration node-maint node-ready bench-single bench-cluster bench-selfcheck bench-overhead bench-usl bench-variants bench-failover bench-stress tune \
	report compare history vagrant-setup vagrant-box

help: ## list the targets
	@echo "capbench — a horizontal-scaling capacity testbed for Java servers"
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  make %-17s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

setup: ## install what is missing (Docker engine, Compose, base image, Python tools, oha); build the webapp and images
	@cluster/setup.sh

$(WAR): $(WEBAPP_SOURCES)
	cd webapp && mvn -B -q -DskipTests package

$(VENV)/.installed: requirements.txt requirements-test.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -r requirements-test.txt
	touch $@

$(OHA): load/install-oha.sh
	@load/install-oha.sh

$(JMX_AGENT): Makefile
	mvn -B -q dependency:copy -Dartifact=io.prometheus.jmx:jmx_prometheus_javaagent:$(JMX_AGENT_VERSION) \
		-Dmdep.stripVersion=true -DoutputDirectory=$(@D)
	touch $@

vagrant-setup: ## VMs: install Vagrant, vagrant-libvirt, libvirt and QEMU/KVM where missing; start libvirtd
	@cluster/vagrant/host.sh ensure

vagrant-box: ## VMs: build a Debian 12 libvirt box from Debian packages and add it as debian/bookworm64
	@cluster/vagrant/box.sh

artifacts: $(WAR) $(OHA) $(JMX_AGENT) ## build what the hosts install: the WAR, oha and the JMX exporter agent

images: artifacts ## build the four images (cached: only what changed is rebuilt)
	@$(COMPOSE) build --quiet

up: ## start the cluster with the current settings and wait until every service is healthy
	@cluster/up.sh

ifeq ($(BACKEND),vagrant)
down: ## stop and remove the cluster's containers and networks (on VMs: vagrant halt; results/ is kept)
	vagrant halt

status: ## one row per host: state, health, CPU quota, memory, heap, GC in use, balancer weight and status
	@vagrant status
	@unhealthy=$$(cluster/vagrant/vm.sh unhealthy) && echo "capbench: every host healthy" \
		|| echo "capbench: not healthy: $$unhealthy"

logs: ## the last 200 log lines of every service (SERVICE=node1 for one; FOLLOW=1 to follow)
	@for host in $(or $(SERVICE),$(NODES) lb load); do echo "---- $$host"; \
		cluster/vagrant/vm.sh exec $$host root journalctl -u "capbench-$${host%[0-9]}" -n 200 --no-pager \
		$(if $(FOLLOW),--follow); done
else
down:
	@$(COMPOSE) down --remove-orphans --timeout 20

status:
	@python3 cluster/status.py

logs:
	@$(COMPOSE) logs --tail 200 $(if $(FOLLOW),--follow) $(SERVICE)
endif

node-maint: ## take NODE (node1..3) out of the balancer's rotation through HAProxy's runtime API
	@$(if $(filter $(NODE),$(NODES)),,$(error NODE='$(NODE)' is not a node: use one of $(NODES)))
	@cluster/lb-api.sh "set server nodes/$(NODE) state maint" | sed '/^$$/d'
	@$(SHOW_NODE_STATES)

node-ready: ## put NODE (node1..3) back into the balancer's rotation
	@$(if $(filter $(NODE),$(NODES)),,$(error NODE='$(NODE)' is not a node: use one of $(NODES)))
	@cluster/lb-api.sh "set server nodes/$(NODE) state ready" | sed '/^$$/d'
	@$(SHOW_NODE_STATES)

# Bench settings (load/bench.env) are checked before the cluster is touched; then the cluster is brought up with
# the requested settings (a no-op when it already is) and the harness runs on the load host.
bench-single: ## capacity of node1 alone through HAProxy (VARIANT= LEVEL= QUICK=1 LOADGEN= WRK2= ...)
bench-cluster: ## capacity of each node alone, then of all three: ΣX_i, X_cluster, E (WEIGHTS=auto: 3 balancings)
bench-selfcheck: ## the generator keeps the offered rate on a trivial endpoint (SELFCHECK_RATE=)
bench-overhead: ## node1's capacity without and with PCP monitoring (REPEATS= pairs) and the ratio
bench-usl: ## node1's throughput at closed-loop concurrencies USL_LEVELS= and the USL fit (σ, κ, N*, R²)
bench-variants: ## the study's steps: VARIANTS on node1 and the cluster, with GC, CPU and thread-dump lock evidence
bench-failover: ## kill (FAULT=freeze: freeze) FAULT_NODE under load and bring it back: detection, failures, recovery
bench-stress: ## 0.5x capacity, 2x for 60 s, 0.5x again: throughput while overloaded, failures, time to recover
bench-single bench-cluster bench-selfcheck bench-overhead bench-usl bench-variants bench-failover bench-stress: bench-%: $(VENV)/.installed $(BUILT)
	@$(BENCH) --check-only $* && cluster/up.sh && $(BENCH) $*

# The sweep is checked (every point through the cluster's own settings rules) before the cluster is touched.
tune: $(VENV)/.installed $(BUILT) ## capacity per setting: MAXTHREADS=4,16,64,200 [PROTOCOL=nio,nio2 ...] or SWEEP=file.yaml
	@$(PYTHON) -m load.tune --check-only && cluster/up.sh && $(PYTHON) -m load.tune

test: $(VENV)/.installed ## every test: JUnit, config, harness, cluster and QUICK bench integration (after make setup)
	@launched=; if ! docker info >/dev/null 2>&1; then cluster/engine.sh ensure; launched=1; fi; \
	status=0; $(MAKE) --no-print-directory test-unit test-python || status=$$?; \
	if [ -n "$$launched" ]; then cluster/engine.sh stop; fi; \
	exit $$status

test-unit: ## the webapp's JUnit 5 tests (and its WAR)
	cd webapp && mvn -B package

# Config checks and the integration test in one pytest run, so its summary line covers both.
test-python: $(VENV)/.installed images
	$(PYTHON) -m pytest tests

test-load: $(VENV)/.installed ## the load harness alone: parsers on captured output, search logic, settings (seconds)
	$(PYTHON) -m pytest tests/load

test-config: $(VENV)/.installed images ## settings validation, compose config, haproxy -c on the rendered config
	$(PYTHON) -m pytest tests/config

test-integration: $(VENV)/.installed images ## bring the cluster up under its own project name, check it, tear down
	$(PYTHON) -m pytest tests/integration

report: $(VENV)/.installed ## rebuild results/RUN/report.html and its figures from the results folder alone
	@$(PYTHON) -m report build "$(RUN)"

compare: $(VENV)/.installed ## capacity change between runs A= and B= (default: the last two comparable runs)
	@$(PYTHON) -m report compare $(A) $(B)

history: $(VENV)/.installed ## capacity across runs: a table and results/history.png
	@$(PYTHON) -m report history
