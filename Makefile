# capbench — `make help` lists the targets. Settings for up/test: PROFILE=small|lab|hosts and any key of
# tomcat-conf/tunables.env or cluster/profiles/*.env, e.g. `make up TOMCAT_MAX_THREADS=16 NODE1_CPUS=0.6`.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

COMPOSE := cluster/compose/compose.sh
WAR := webapp/target/grinder.war
WEBAPP_SOURCES := webapp/pom.xml $(shell find webapp/src -type f 2>/dev/null)
VENV := .venv
PYTHON := $(VENV)/bin/python
# The harness's one way in (capbench/commands/cli.py); the targets below call it.
CAPBENCH := $(VENV)/bin/capbench
# The hosts' access layer (capbench/hosts/): standard library only, so it runs before the venv exists.
HOSTCTL := python3 -m capbench.hosts
OHA := .capbench/tools/oha/bin/oha
# capbench's own client for connections that come and go (load/capload/, Go), built here for the load hosts.
CAPLOAD := .capbench/tools/capload/bin/capload
# The Prometheus JMX exporter java agent the nodes load (JVM and Tomcat metrics for PCP), from Maven Central.
JMX_AGENT_VERSION := 1.0.1
JMX_AGENT := .capbench/tools/jmx-exporter/jmx_prometheus_javaagent.jar
# async-profiler's converter: flame graphs of the nodes' JFR recordings, drawn on this machine (profiling/).
JFR_CONVERTER_VERSION := 4.2
JFR_CONVERTER := .capbench/tools/jfr-converter/jfr-converter.jar
# async-profiler's agent for the nodes' JVMs (their CPU profile: capbench/profiling/README.md), the converter's release.
ASYNC_PROFILER := .capbench/tools/async-profiler/libasyncProfiler.so
JUNIT_XSD := .capbench/tools/junit/junit-10.xsd
# Tomcat's migration tool: a WAR built for javax.servlet converted to jakarta.servlet before it is staged
# (APP_MIGRATE, cluster/app.sh), run on this machine.
JAKARTA_MIGRATION_VERSION := 1.0.12
JAKARTA_MIGRATION := .capbench/tools/jakartaee-migration/jakartaee-migration.jar
# Where the cluster runs: compose (containers here), vagrant (VMs, see Vagrantfile) or swarm (a stack on a
# Docker Swarm of several machines, placed by the hosts file: capbench/hosts/swarm_hosts.py). Unset, the one whose hosts
# are running (a VM of the Vagrantfile, or the stack on the swarm), else compose; everything below gets it. Only
# what the user named counts (capbench/commands/configuration.py): BACKEND= on make's line or CAPBENCH_BACKEND, not
# a BACKEND the shell happens to hold.
GIVEN_BACKEND := $(if $(filter command line,$(origin BACKEND)),$(BACKEND),$(CAPBENCH_BACKEND))
override BACKEND := $(shell BACKEND='$(GIVEN_BACKEND)' $(HOSTCTL) backend)
$(if $(BACKEND),,$(error the backend could not be chosen: see the line above))
export BACKEND
# What a bench needs built first: the images, or on VMs the artifacts that `vagrant up` copies to them.
BUILT := $(shell BACKEND='$(BACKEND)' $(HOSTCTL) built)

.PHONY: help setup wrk2 artifacts images up down status stats logs test test-fast test-unit test-python test-load \
	test-config test-integration test-claims lint node-maint node-ready tune report compare history gate gate-aa gate-calibrate gate-ready baseline vagrant-setup \
	vagrant-box docs \
	swarm-lab swarm-lab-down

help: ## list the targets
	@echo "capbench — a horizontal-scaling capacity testbed for Java servers"
	@awk 'BEGIN {FS = ":.*## "} /^[a-z][a-z0-9-]*:.*## / {printf "  make %-17s %s\n", $$1, $$2}' $(MAKEFILE_LIST)
	@python3 -m capbench.kinds 2>/dev/null || echo "  make bench-KIND        (make setup, then make help lists the bench kinds)"

setup: ## install what is missing (Docker, Compose, base image, Python tools, oha) and build the images (BACKEND=vagrant: VM tools too)
	@cluster/setup.sh

$(WAR): $(WEBAPP_SOURCES)
	cd webapp && mvn -B -q -DskipTests package

# The harness (pyproject.toml: the capbench package and its pinned libraries), editable: the `capbench` command
# runs this checkout.
$(VENV)/.installed: pyproject.toml | $(JFR_CONVERTER) $(ASYNC_PROFILER) $(JAKARTA_MIGRATION)
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -e .
	touch $@

# What only the tests use, installed by the test targets (so by CI), not by make setup: pyproject's test extra
# (pytest, ruff, ...) and Debian's Chromium and LuaJIT (tests/install-tools.sh).
TESTED := $(VENV)/.test-installed
$(TESTED): pyproject.toml tests/install-tools.sh | $(VENV)/.installed
	$(VENV)/bin/pip install -q --disable-pip-version-check -e '.[test]'
	tests/install-tools.sh
	touch $@

# The common JUnit schema (Jenkins' junit-10.xsd, the one pytest's own tests validate against), from the source
# release of the pytest that pyproject.toml's test extra pins: tests/report/test_pipeline.py validates make gate's JUnit
# file against it.
$(JUNIT_XSD): pyproject.toml | $(TESTED)
	@mkdir -p $(@D) && rm -rf $(@D)/sdist && $(VENV)/bin/pip download -q --disable-pip-version-check --no-deps \
		--no-binary :all: -d $(@D)/sdist "$$(grep -oE '"pytest==[^"]+"' pyproject.toml | tr -d '"')" \
		&& tar -xzf $(@D)/sdist/pytest-*.tar.gz -C $(@D) --strip-components=3 --wildcards \
		'*/testing/example_scripts/junit-10.xsd' && rm -rf $(@D)/sdist && touch $@

$(JFR_CONVERTER): Makefile
	mvn -B -q dependency:copy -Dartifact=tools.profiler:jfr-converter:$(JFR_CONVERTER_VERSION) \
		-Dmdep.stripVersion=true -DoutputDirectory=$(@D)
	touch $@

# The tool with its dependencies inside (the "shaded" jar), so that `java -jar` runs it alone.
$(JAKARTA_MIGRATION): Makefile
	@rm -rf $(@D) && mkdir -p $(@D)/jar
	mvn -B -q dependency:copy \
		-Dartifact=org.apache.tomcat:jakartaee-migration:$(JAKARTA_MIGRATION_VERSION):jar:shaded \
		-DoutputDirectory=$(@D)/jar
	mv $(@D)/jar/jakartaee-migration-$(JAKARTA_MIGRATION_VERSION)-shaded.jar $@ && rm -rf $(@D)/jar
	touch $@

# Maven Central serves the agent inside a jar, one library per platform: the nodes' is linux-x64's.
$(ASYNC_PROFILER): Makefile
	@rm -rf $(@D) && mkdir -p $(@D)/jar
	mvn -B -q dependency:copy -Dartifact=tools.profiler:async-profiler:$(JFR_CONVERTER_VERSION) \
		-Dmdep.stripVersion=true -DoutputDirectory=$(@D)/jar
	python3 -m zipfile -e $(@D)/jar/async-profiler.jar $(@D)/jar/files
	mv $(@D)/jar/files/linux-x64/libasyncProfiler.so $@ && rm -rf $(@D)/jar
	touch $@

$(OHA): load/install-oha.sh
	@load/install-oha.sh

$(CAPLOAD): load/install-capload.sh $(wildcard load/capload/*.go) load/capload/go.mod
	@load/install-capload.sh

$(JMX_AGENT): Makefile
	mvn -B -q dependency:copy -Dartifact=io.prometheus.jmx:jmx_prometheus_javaagent:$(JMX_AGENT_VERSION) \
		-Dmdep.stripVersion=true -DoutputDirectory=$(@D)
	touch $@

vagrant-setup: ## VMs: Vagrant, vagrant-libvirt, libvirt and QEMU/KVM where missing, libvirtd, the box, the driver
	@cluster/vagrant/host.sh ensure
	@cluster/vagrant/box.sh
	@echo "capbench: VMs: libvirt driver $$(cluster/vagrant/host.sh driver)"

vagrant-box: ## VMs: build a Debian 12 libvirt box from Debian packages and add it as debian/bookworm64
	@cluster/vagrant/box.sh

wrk2: ## build wrk2 from its pinned commit into .capbench/tools/wrk2/ (downloaded, or WRK2_SRC=folder; sha256 checked)
	load/install-wrk2.sh

artifacts: $(WAR) $(OHA) $(CAPLOAD) $(JMX_AGENT) $(ASYNC_PROFILER) ## build what the hosts install: the WAR, oha, capload, the JMX exporter and async-profiler's agents

# What the images are built from (cluster/images/*.Dockerfile copy these; .dockerignore admits no more).
IMAGE_INPUTS := compose.yaml .dockerignore $(shell git ls-files cluster/images cluster/provision cluster/settings.sh \
	tomcat-conf haproxy metrics/hosts metrics/pmlogger metrics/with-pmcd metrics/pcp-loggers metrics/jmx-exporter.yaml \
	metrics/pmrep.conf load/run-step load/wrk2 db 2>/dev/null)
IMAGES_BUILT := .capbench/images.built
IMAGE_NAMES := capbench-node capbench-lb capbench-load capbench-db capbench-controller

images: artifacts ## build the five images (only when what they are built from changed, or one is missing)
	@docker image inspect $(IMAGE_NAMES) >/dev/null 2>&1 || rm -f $(IMAGES_BUILT)
	@$(MAKE) --no-print-directory $(IMAGES_BUILT)

# With no application (APP_WAR and APP_JAR empty), so the nodes' build is capbench-node's own: cluster/app.sh builds the image with
# an application from it, at make up.
$(IMAGES_BUILT): $(IMAGE_INPUTS) $(WAR) $(OHA) $(CAPLOAD) $(JMX_AGENT) $(ASYNC_PROFILER)
	@APP_WAR= APP_JAR= $(COMPOSE) --progress quiet build
	@touch $@

up: $(VENV)/.installed ## start the cluster with the current settings and wait until every service is healthy
	@$(CAPBENCH) up

down: $(VENV)/.installed ## stop the cluster (containers and networks removed; VMs halted); results/ and the images stay
	@$(CAPBENCH) down

status: $(VENV)/.installed ## one row per host: state, health, CPU quota, memory, heap, GC in use, balancer weight and status
	@$(CAPBENCH) status

stats: ## the HAProxy stats page on 127.0.0.1:STATS_PORT (on Swarm and VMs a tunnel, while this runs)
	@$(HOSTCTL) stats

logs: ## the last 200 log lines of every service (SERVICE=node1 for one; FOLLOW=1 to follow)
	@$(HOSTCTL) logs $(SERVICE) $(if $(FOLLOW),--follow)

swarm-lab: ## a swarm of HOSTS=n Docker engines (default 4) on this machine, and the hosts file that places the roles
	@python3 -m capbench.hosts.swarm_lab up '$(or $(HOSTS),4)'

swarm-lab-down: ## remove the swarm lab: its engines, their volumes, its network and the hosts file it wrote
	@python3 -m capbench.hosts.swarm_lab down

node-maint: ## take NODE (one of the nodes) out of the balancer's rotation through HAProxy's runtime API
	@$(HOSTCTL) rotation '$(NODE)' maint

node-ready: ## put NODE back into the balancer's rotation
	@$(HOSTCTL) rotation '$(NODE)' ready

# Every setting is checked before anything is built or the cluster touched; then what the hosts run is built (a
# no-op when it is), the cluster brought up with the requested settings (a no-op when it already is) and the
# harness runs on the load host. The kinds are kinds/ (make help lists them); an unknown one is refused.
bench-%: $(VENV)/.installed
	@$(CAPBENCH) bench $*

# The sweep is checked (every point through the cluster's own settings rules) before the cluster is touched.
tune: $(VENV)/.installed ## capacity per setting: MAXTHREADS=4,16,64,200 [PROTOCOL=nio,nio2 ...] or SWEEP=file.yaml
	@$(CAPBENCH) tune

test: $(TESTED) ## every test: JUnit, lint, config, harness, cluster and QUICK bench integration (after make setup)
	@launched=; if ! docker info >/dev/null 2>&1; then cluster/engine.sh ensure; launched=1; fi; \
	status=0; $(MAKE) --no-print-directory test-unit lint test-python || status=$$?; \
	if [ -n "$$launched" ]; then cluster/engine.sh stop; fi; \
	exit $$status

# No Docker, no images: the tests that run Docker or Compose are marked docker (pytest.ini) and left to make test.
test-fast: $(TESTED) $(JUNIT_XSD) ## the edit loop, no Docker: JUnit, lint, the pytests not in integration/ or marked docker
	cd webapp && mvn -B -q package
	@$(MAKE) --no-print-directory lint
	$(PYTHON) -m pytest -q -m "not docker" tests --ignore=tests/integration

lint: $(TESTED) ## the Python linter, ruff (its rules: ruff.toml), on every Python file; go vet and go test on capload
	$(VENV)/bin/ruff check .
	cd load/capload && test -z "$$(gofmt -l .)" && go vet ./... && go test -count=1 ./...

test-unit: ## the webapp's JUnit 5 tests (and its WAR)
	cd webapp && mvn -B package

# Every pytest in one run, so its summary line covers all: on two workers, the Compose cluster's tests on one and
# the rest (the VM under emulation and the Swarm lab among it) on the other (tests/conftest.py); every test that
# took over 20 s listed with its time, against the budget in tests/README.md.
test-python: $(TESTED) images $(JUNIT_XSD) ## the pytest part of make test alone (needs the images)
	$(PYTHON) -m pytest -n 2 --dist loadgroup --durations=0 --durations-min=20 tests

# Claims that hold only on a quiet machine (tests/claims/): run alone, nothing else busy; never part of make test.
test-claims: $(TESTED) images ## on a quiet machine: the gate's 10 % tolerance, the generator's 1 %, scale-out, replication
	CAPBENCH_CLAIMS=1 $(PYTHON) -m pytest --durations=0 tests/claims

test-load: $(TESTED) ## the harness alone: parsers on captured output, search logic, settings, kinds, commands (seconds)
	$(PYTHON) -m pytest tests/load tests/settings tests/search tests/engine tests/duet tests/kinds tests/commands

test-config: $(TESTED) images ## settings validation, compose config, haproxy -c on the rendered config
	$(PYTHON) -m pytest tests/config

test-integration: $(TESTED) images ## bring the cluster up under its own project name, check it, tear down
	$(PYTHON) -m pytest tests/integration

report: $(VENV)/.installed ## rebuild results/RUN/report.html and its figures from the results folder alone
	@$(CAPBENCH) report

compare: $(VENV)/.installed ## capacity change between runs A= and B= (default: the last two comparable runs)
	@$(CAPBENCH) compare

history: $(VENV)/.installed ## capacity across runs: a table and results/history.png
	@$(CAPBENCH) history

# The gate's settings, and a BASELINE it names, are checked before the cluster is touched (capbench/commands/gate.py). make
# turns any failing recipe into its own exit status 2: the gate's own (3 fell, 4 cannot tell, 5 p99 over) reaches
# the shell from `.venv/bin/capbench gate`, which examples/ci/capacity-gate.sh runs.
gate-ready: $(VENV)/.installed ## make gate's checks and bring-up, without measuring
	@$(CAPBENCH) gate --up-only

gate: $(VENV)/.installed ## the accepted baseline's build and this one measured together (a duet), or GATE_MODE=history: this build against the baseline's stored capacities (docs/guides/gate.md)
	@$(CAPBENCH) gate

gate-aa: $(VENV)/.installed ## an A/A duet (DUET_A on both twin slots): how far two equal builds look apart here (its band)
	@$(CAPBENCH) gate --aa

gate-calibrate: $(VENV)/.installed ## A/A duets and duets of known 5 % drops, alternated: what a duet gate can call on this machine with these settings
	@$(CAPBENCH) gate --calibrate

docs: $(VENV)/.installed ## write docs/reference/ (settings, make targets, record fields) from the code's own tables
	$(CAPBENCH) docs

baseline: $(VENV)/.installed ## accept RUN= (default: the last complete run) as the gate's baseline, its build kept for the duet [TAG=name]
	@$(CAPBENCH) baseline
