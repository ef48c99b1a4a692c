"""The settings are validated before anything starts: every bad value is named with what is allowed, and
every good profile renders a Compose file and an HAProxy config that the real tools accept."""
from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

from conftest import ROOT, compose, run

# The tests that run Docker or Compose are marked docker (on the cluster's worker: tests/conftest.py; not in make
# test-fast); the refusals of bad settings come before Compose is run, and the rest read files.
PROFILES = sorted(p.stem for p in (ROOT / "cluster" / "profiles").glob("*.env"))


@pytest.mark.docker
@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_renders_a_valid_compose_file(profile):
    compose("config", "--quiet", env={"PROFILE": profile})


@pytest.mark.docker
@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("balance, log_requests", [("roundrobin", "0"), ("leastconn", "0"), ("roundrobin", "1")])
def test_rendered_haproxy_config_passes_haproxy_check(profile, balance, log_requests):
    done = compose("run", "--rm", "--no-deps", "-T", "--entrypoint", "/opt/capbench/bin/haproxy-start", "lb", "-c",
                   env={"PROFILE": profile, "LB_BALANCE": balance, "LB_LOG_REQUESTS": log_requests})
    assert "Configuration file is valid" in done.stdout + done.stderr


@pytest.mark.docker
@pytest.mark.parametrize("sticky", ["user", "cookie"])
def test_rendered_haproxy_config_with_stickiness_passes_haproxy_check(sticky):
    done = compose("run", "--rm", "--no-deps", "-T", "--entrypoint", "/opt/capbench/bin/haproxy-start", "lb", "-c",
                   env={"LB_STICKY": sticky})
    assert "Configuration file is valid" in done.stdout + done.stderr


@pytest.mark.docker
def test_haproxy_gets_one_server_per_node_of_any_count():
    """haproxy/start writes a server line per node of LB_NODES (five here, from the homogeneous profile), and each
    node's own port (a duet's slot) with the rule that sends it there."""
    script = ("/opt/capbench/bin/haproxy-start -c && grep -E '^ +(server|bind|use-server) ' "
              "/run/haproxy/haproxy.cfg")
    done = compose("run", "--rm", "--no-deps", "-T", "--entrypoint", "bash", "lb", "-c", script,
                   env={"PROFILE": "homogeneous", "NODES": "5"})
    servers = re.findall(r"^\s+server (\w+) (\S+) weight \"\$\{(\w+)\}\"", done.stdout, re.M)
    assert servers == [(f"node{i}", f"node{i}:8080", f"NODE{i}_WEIGHT") for i in range(1, 6)], done.stdout
    assert re.findall(r"^\s+use-server (\w+) if \{ dst_port (\d+) \}", done.stdout, re.M) == [
        (f"node{i}", f"810{i}") for i in range(1, 6)], done.stdout
    assert {f"810{i}" for i in range(1, 6)} <= set(re.findall(r"^\s+bind :(\d+)$", done.stdout, re.M))
    assert "Configuration file is valid" in done.stdout + done.stderr


@pytest.mark.docker
def test_with_tls_both_each_server_is_the_nodes_tls_connector_verified_for_its_name():
    """TLS=both: HAProxy re-encrypts to each node's :8443, the certificate verified against the checkout's
    authority for the node's name (its SNI and its health checks' too), and the config is valid with both."""
    script = "/opt/capbench/bin/haproxy-start -c && grep -E '^ +(server|bind) ' /run/haproxy/haproxy.cfg"
    done = compose("run", "--rm", "--no-deps", "-T", "--entrypoint", "bash", "lb", "-c", script,
                   env={"TLS": "both"})
    servers = re.findall(r"^\s+server (node\d) (\S+) ssl verify required ca-file (\S+) alpn http/1\.1 "
                         r"sni str\((\w+)\) verifyhost (\w+) check-sni (\w+) weight", done.stdout, re.M)
    assert servers == [(f"node{i}", f"node{i}:8443", "/run/secrets/capbench_ca", *[f"node{i}"] * 3)
                       for i in (1, 2, 3)], done.stdout
    assert re.search(r"^\s+bind :8443 ssl crt /run/secrets/lb_tls alpn h2,http/1.1$", done.stdout, re.M)
    assert "Configuration file is valid" in done.stdout + done.stderr


@pytest.mark.docker
def test_with_tls_node_the_tls_port_is_passed_through_to_each_nodes_connector():
    """TLS=node: :8443 in TCP mode, to each node's :8443, each server following its node's server of the HTTP
    backend (its state, maintenance included) by the same weight; the clear port as before; the config valid."""
    script = ("/opt/capbench/bin/haproxy-start -c && sed -n '/^frontend bench_passthrough/,/^# The same/p' "
              "/run/haproxy/haproxy.cfg | grep -E '^ +(mode|bind|server|default_backend) '")
    done = compose("run", "--rm", "--no-deps", "-T", "--entrypoint", "bash", "lb", "-c", script,
                   env={"TLS": "node"})
    servers = re.findall(r"^\s+server (node\d) (\S+) track nodes/(node\d) weight \"\$\{(\w+)\}\"$", done.stdout, re.M)
    assert servers == [(f"node{i}", f"node{i}:8443", f"node{i}", f"NODE{i}_WEIGHT") for i in (1, 2, 3)], done.stdout
    assert re.findall(r"^\s+(mode \w+|bind \S+)$", done.stdout, re.M) == ["mode tcp", "bind :8443", "mode tcp"]
    assert "ssl crt" not in done.stdout  # the balancer ends no TLS
    assert "Configuration file is valid" in done.stdout + done.stderr


@pytest.mark.docker
@pytest.mark.parametrize("tls", ["off", "both"])
def test_with_http_2_to_the_nodes_each_server_and_its_checks_speak_it(tls):
    """NODE_HTTP=2: h2c by prior knowledge on the clear port, h2 by ALPN where the balancer re-encrypts, the health
    checks in the same; the config valid with either. (That the scheme each names is the one Tomcat takes is seen
    for real: tests/integration/test_tls.py.)"""
    script = "/opt/capbench/bin/haproxy-start -c && grep -E '^ +server node' /run/haproxy/haproxy.cfg"
    done = compose("run", "--rm", "--no-deps", "-T", "--entrypoint", "bash", "lb", "-c", script,
                   env={"TLS": tls, "NODE_HTTP": "2"})
    servers = [server for server in re.findall(r"^\s+server (node\d) node\d:(\d+) (.*?) weight", done.stdout, re.M)
               if not server[2].startswith("track ")]  # TLS=node's TCP backend, written for every TLS, read for node's
    if tls == "off":
        assert servers == [(f"node{i}", "8080", "proto h2 check-proto h2") for i in (1, 2, 3)], done.stdout
    else:
        assert [(node, port, over.split(" sni ")[0]) for node, port, over in servers] == [
            (f"node{i}", "8443", "ssl verify required ca-file /run/secrets/capbench_ca alpn h2 check-alpn h2")
            for i in (1, 2, 3)], done.stdout
    assert "Configuration file is valid" in done.stdout + done.stderr


@pytest.mark.docker
def test_haproxy_refuses_a_node_list_that_is_not_node_names():
    done = compose("run", "--rm", "--no-deps", "-T", "-e", "LB_NODES=node1 ../x", "--entrypoint",
                   "/opt/capbench/bin/haproxy-start", "lb", "-c", check=False)
    assert done.returncode == 2 and "LB_NODES='node1 ../x' is not allowed" in done.stderr, done.stderr


@pytest.mark.docker
def test_haproxy_config_with_the_vms_fixed_addresses_passes_haproxy_check():
    """On VMs (cluster/vagrant) HAProxy reads the nodes' addresses from /etc/hosts instead of following DNS."""
    hosts = "".join(f"10.89.2.1{i} node{i}\\n" for i in (1, 2, 3))
    # As root without capabilities /run/haproxy (the haproxy user's) is not writable: the config goes to /tmp.
    done = compose("run", "--rm", "--no-deps", "-T", "--user", "root", "-e", "LB_FIXED_ADDRESSES=1",
                   "-e", "HAPROXY_CONFIG=/tmp/haproxy.cfg",
                   "--entrypoint", "sh", "lb", "-c",
                   f"printf '{hosts}' >> /etc/hosts && /opt/capbench/bin/haproxy-start -c")
    assert "Configuration file is valid" in done.stdout + done.stderr


@pytest.mark.docker
def test_small_profile_fits_our_two_core_hosts():
    services = json.loads(compose("config", "--format", "json").stdout)["services"]
    quotas = [float(s["cpus"]) for name, s in services.items() if name.startswith("node")]
    assert len(quotas) == 3, quotas
    assert sum(quotas) <= 1.2 + 1e-9, quotas
    assert len(set(quotas)) == 3, f"the nodes should differ: {quotas}"
    # The database's quota is a ceiling for the database-bound benches: idle, it costs the Grinder's nothing.
    assert {name for name, s in services.items() if s.get("cpus")} == {"node1", "node2", "node3", "db"}
    assert float(services["db"]["cpus"]) <= 0.5


@pytest.mark.docker
def test_load_hosts_beyond_the_first_are_rendered_as_the_first_with_their_own_name():
    services = json.loads(compose("config", "--format", "json", env={"LOAD_HOSTS": "3"}).stdout)["services"]
    loads = [name for name in services if name.startswith("load")]
    assert loads == ["load", "load2", "load3"], list(services)
    for load in loads:
        assert services[load]["hostname"] == load and services[load]["image"] == services["load"]["image"]
        assert services[load]["cap_drop"] == ["ALL"] and list(services[load]["networks"]) == ["bench"]
        assert "ports" not in services[load]
    assert services["controller"]["environment"]["CAPBENCH_MONITORED"].endswith("lb load load2 load3")


@pytest.mark.docker
def test_hosts_profile_sets_no_cpu_quota():
    """PROFILE=hosts, for nodes on machines of their own: a quota of 0 is none, and Compose renders none."""
    services = json.loads(compose("config", "--format", "json", env={"PROFILE": "hosts"}).stdout)["services"]
    nodes = [name for name in services if name.startswith("node")]
    assert len(nodes) == 3 and all("cpus" not in services[n] for n in nodes), {n: services[n].get("cpus") for n in nodes}
    assert all(services[n].get("mem_limit") for n in nodes), "memory stays bounded"



@pytest.mark.docker
def test_each_nodes_start_window_is_its_health_checks_start_period_on_compose_and_swarm():
    """APP_START_S for half a core, scaled below it (0.4 → 1.25 ×, 0.3 → 1.67 ×), is each node's start period,
    in Compose's file and in the Swarm stack made from it, which waits as long as the longest; PROFILE=hosts
    (no quota) keeps APP_START_S for every node."""
    from capbench.hosts import stack

    config = json.loads(compose("config", "--format", "json", env={"APP_START_S": "300"}).stdout)
    periods = {n: config["services"][n]["healthcheck"]["start_period"] for n in ("node1", "node2", "node3")}
    assert {n: stack.duration_s(p) for n, p in periods.items()} == {"node1": 300, "node2": 375, "node3": 500}
    assert stack.start_window_s(config) == 500
    assert config["services"]["lb"]["healthcheck"]["start_period"] == "30s"
    hosts = json.loads(compose("config", "--format", "json", env={"PROFILE": "hosts"}).stdout)
    assert stack.start_window_s(hosts) == 90

@pytest.mark.parametrize(("settings", "message"), [
    ({"PROFILE": "huge"}, "PROFILE='huge' is not a profile: use one of homogeneous, hosts, lab, small"),
    ({"NODES": "0"}, "NODES='0' is not allowed: use a number of nodes from 1 to 16"),
    ({"NODES": "17"}, "NODES='17' is not allowed: use a number of nodes from 1 to 16"),
    ({"NODES": "4"}, "node4 has no settings: profile small describes its nodes one by one and not node4"),
    ({"LOAD_HOSTS": "0"}, "LOAD_HOSTS='0' is not allowed: use a number of load hosts from 1 to 8"),
    ({"LOAD_HOSTS": "two"}, "LOAD_HOSTS='two' is not allowed: use a number of load hosts from 1 to 8"),
    ({"PROFILE": "../etc"}, "PROFILE='../etc' is not a profile"),
    ({"TOMCAT_PROTOCOL": "apr"}, "TOMCAT_PROTOCOL='apr' is not allowed: use one of nio nio2"),
    ({"DB_CACHE_SIZE": "-1"}, "DB_CACHE_SIZE='-1' is not allowed: use an integer from 0 to 1000000"),
    ({"DB_CACHE_TTL_S": "0"}, "DB_CACHE_TTL_S='0' is not allowed: use an integer from 1 to 86400"),
    ({"TOMCAT_SESSION_REPLICATION": "yes"}, "TOMCAT_SESSION_REPLICATION='yes' is not allowed: use one of 0 1"),
    ({"TOMCAT_MAX_THREADS": "0"}, "TOMCAT_MAX_THREADS='0' is not allowed: use an integer from 1 to 10000"),
    ({"TOMCAT_MAX_THREADS": "abc"}, "TOMCAT_MAX_THREADS='abc' is not allowed"),
    ({"TOMCAT_MIN_SPARE_THREADS": "-1"}, "TOMCAT_MIN_SPARE_THREADS='-1' is not allowed"),
    ({"TOMCAT_MAX_THREADS": "016"}, "TOMCAT_MAX_THREADS='016' is not allowed"),
    ({"TOMCAT_ACCEPT_COUNT": "-1"}, "TOMCAT_ACCEPT_COUNT='-1' is not allowed"),
    ({"TOMCAT_MAX_CONNECTIONS": "0"}, "TOMCAT_MAX_CONNECTIONS='0' is not allowed: use an integer from 1 to 1000000, or -1"),
    ({"TOMCAT_CONNECTION_TIMEOUT": "1.5"}, "TOMCAT_CONNECTION_TIMEOUT='1.5' is not allowed"),
    ({"TOMCAT_KEEP_ALIVE_TIMEOUT": "soon"}, "TOMCAT_KEEP_ALIVE_TIMEOUT='soon' is not allowed"),
    ({"TOMCAT_MAX_KEEP_ALIVE_REQUESTS": "0"}, "TOMCAT_MAX_KEEP_ALIVE_REQUESTS='0' is not allowed"),
    ({"NODE1_CPUS": "0.01"}, "NODE1_CPUS='0.01' is not allowed: use a CPU quota in cores from 0.05 to 64 (at most "
                             "three decimals), like 0.5 or 0.475, or 0 for none"),
    ({"NODE1_CPUS": "0.4751"}, "NODE1_CPUS='0.4751' is not allowed"),
    ({"NODE2_CPUS": "half"}, "NODE2_CPUS='half' is not allowed"),
    ({"NODE3_MEM": "512"}, "NODE3_MEM='512' is not allowed: use a size of at least 64m, written like 512m or 2g"),
    ({"NODE1_HEAP": "1g"}, "NODE1_HEAP=1g is not allowed: the heap must be smaller than NODE1_MEM=768m"),
    ({"NODE2_GC": "cms"}, "NODE2_GC='cms' is not allowed: use one of auto serial parallel g1 zgc"),
    ({"NODE3_WEIGHT": "0"}, "NODE3_WEIGHT='0' is not allowed: use an integer from 1 to 256"),
    ({"NODE1_MAXCONN": "-5"}, "NODE1_MAXCONN='-5' is not allowed: use an integer from 0 to 100000"),
    ({"LB_BALANCE": "random"}, "LB_BALANCE='random' is not allowed: use one of roundrobin leastconn"),
    ({"LB_STICKY": "jsessionid"}, "LB_STICKY='jsessionid' is not allowed: use one of none user cookie"),
    ({"TLS": "passthrough"}, "TLS='passthrough' is not allowed: use one of off lb both node"),
    ({"NODE_HTTP": "h2"}, "NODE_HTTP='h2' is not allowed: use one of 1.1 2"),
    ({"TOMCAT_H2_MAX_CONCURRENT_STREAM_EXECUTION": "0"},
     "TOMCAT_H2_MAX_CONCURRENT_STREAM_EXECUTION='0' is not allowed: use an integer from 1 to 100000"),
    ({"TOMCAT_H2_INITIAL_WINDOW_SIZE": "2147483648"},
     "TOMCAT_H2_INITIAL_WINDOW_SIZE='2147483648' is not allowed: use an integer from 1 to 100000000"),
    ({"TLS": "node", "LB_STICKY": "user"},
     "LB_STICKY=user is not allowed with TLS=node: the balancer passes the client's TLS through to the nodes"),
    ({"LB_LOG_REQUESTS": "yes"}, "LB_LOG_REQUESTS='yes' is not allowed: use one of 0 1"),
    ({"STATS_PORT": "70000"}, "STATS_PORT='70000' is not allowed: use an integer from 0 to 65535"),
    ({"BENCH_NET_PREFIX": "10.89"},
     "BENCH_NET_PREFIX='10.89' is not allowed: use the first three numbers of a free IPv4 /24 network"),
    ({"BENCH_NET_PREFIX": "10.256.0"}, "BENCH_NET_PREFIX='10.256.0' is not allowed"),
    ({"DATA_NET_PREFIX": "10.89.0"},
     "DATA_NET_PREFIX='10.89.0' is not allowed: the data network must differ from the bench network"),
    ({"DATA_NET_PREFIX": "10.90"}, "DATA_NET_PREFIX='10.90' is not allowed"),
])
def test_bad_settings_are_refused_before_anything_starts(settings, message):
    done = compose("config", "--quiet", env=settings, check=False)
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr


def test_all_bad_settings_are_reported_at_once():
    done = compose("config", "--quiet", check=False,
                   env={"TOMCAT_PROTOCOL": "apr", "NODE1_GC": "cms", "NODE2_WEIGHT": "x"})
    assert done.returncode == 2
    assert len([line for line in done.stderr.splitlines() if "is not allowed" in line]) == 3, done.stderr


@pytest.mark.docker
def test_the_node_refuses_bad_settings_itself():
    """A node started without the host's checks (e.g. by hand) applies the same rules and does not start."""
    done = run(["docker", "run", "--rm", "-e", "TOMCAT_PROTOCOL=ajp", "-e", "TOMCAT_MAX_THREADS=200",
                "-e", "TOMCAT_MIN_SPARE_THREADS=25", "-e", "TOMCAT_ACCEPT_COUNT=100",
                "-e", "TOMCAT_MAX_CONNECTIONS=8192", "-e", "TOMCAT_CONNECTION_TIMEOUT=60000",
                "-e", "TOMCAT_MAX_KEEP_ALIVE_REQUESTS=100", "-e", "JVM_HEAP=64", "-e", "JVM_GC=auto",
                "-e", "PCP_ALLOW_HOSTS=10.89.9.*", "capbench-node:latest"], check=False, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "TOMCAT_PROTOCOL='ajp' is not allowed" in done.stderr
    assert "JVM_HEAP='64' is not allowed" in done.stderr


@pytest.mark.docker
@pytest.mark.parametrize("allow", ["*", "0.0.0.0/0", "10.89.0.1", "10.89.0.* ; allow *"])
def test_pmcd_admits_only_an_address_prefix(allow):
    """with-pmcd (every monitored host's entrypoint) refuses an access rule wider or other than a prefix."""
    done = run(["docker", "run", "--rm", "-e", f"PCP_ALLOW_HOSTS={allow}", "capbench-load:latest"],
               check=False, timeout=60)
    assert done.returncode == 2 and "is not allowed: use an IPv4 prefix ending in .*" in done.stderr, done.stderr


def test_server_xml_is_secure_and_every_property_is_supplied():
    server = ET.parse(ROOT / "tomcat-conf" / "server.xml").getroot()
    assert server.get("port") == "-1", "the shutdown port must be disabled"
    connectors = server.findall("./Service/Connector")
    assert len(connectors) == 1, "one HTTP connector, no AJP"
    assert "AJP" not in (connectors[0].get("protocol") or "").upper()
    valve = server.find("./Service/Engine/Host/Valve")
    assert valve.get("showServerInfo") == "false" and valve.get("showReport") == "false"
    host = server.find("./Service/Engine/Host")
    assert host.get("autoDeploy") == "false"
    # Every ${capbench.*} the file reads, or what render-config.sh puts in it, is set by the node's run script (an
    # unset one would stay literal).
    wanted = {name for file in ("server.xml", "render-config.sh")
              for name in re.findall(r"\$\{(capbench\.[A-Za-z0-9.]+)\}", (ROOT / "tomcat-conf" / file).read_text())}
    assert "capbench.h2MaxConcurrentStreamExecution" in wanted
    supplied = set(re.findall(r"-D(capbench\.[A-Za-z0-9.]+)=", (ROOT / "tomcat-conf" / "run-tomcat.sh").read_text()))
    assert wanted and wanted <= supplied, wanted - supplied


def test_haproxy_runtime_api_stays_on_a_socket_and_stats_need_a_password():
    config = (ROOT / "haproxy" / "haproxy.cfg").read_text()
    lines = [line.split("#")[0].strip() for line in config.splitlines()]
    sockets = [line for line in lines if line.startswith("stats socket")]
    assert sockets == ["stats socket /run/haproxy/admin.sock mode 600 level admin"], sockets
    # Nothing binds the runtime API or the stats to a TCP address, and the stats frontend asks for the password.
    binds = [line for line in lines if line.startswith("bind")]
    # (127.0.0.1:8406: the testbed ceiling's backend, HAProxy answering itself on loopback; :8443, TLS=lb's port
    # of the bench frontend, whose key is the secret given at start, or TLS=node's passed through to the nodes.)
    assert binds == ["bind :8080", "bind :8443 ssl crt /run/secrets/lb_tls alpn h2,http/1.1", "bind 127.0.0.1:8406",
                     "bind :8443", "bind 127.0.0.1:8405", "bind :8404"], binds
    stats = config[config.index("frontend stats"):]
    assert "http-request auth realm capbench unless { http_auth(stats_users) }" in stats
    assert "stats admin" not in config, "the stats page must stay read-only"


def test_tunables_start_from_tomcats_own_defaults():
    values = dict(line.split("=", 1) for line in (ROOT / "tomcat-conf" / "tunables.env").read_text().splitlines()
                  if line and not line.startswith("#"))
    # Tomcat 10.1's documented defaults (Executor: maxThreads, minSpareThreads; Connector: the rest).
    assert values == {
        "TOMCAT_PROTOCOL": "nio", "TOMCAT_MAX_THREADS": "200", "TOMCAT_MIN_SPARE_THREADS": "25",
        "TOMCAT_ACCEPT_COUNT": "100", "TOMCAT_MAX_CONNECTIONS": "8192", "TOMCAT_CONNECTION_TIMEOUT": "60000",
        "TOMCAT_KEEP_ALIVE_TIMEOUT": "", "TOMCAT_MAX_KEEP_ALIVE_REQUESTS": "100",
        # Tomcat replicates sessions only when a cluster is configured, which the default server.xml has not.
        "TOMCAT_SESSION_REPLICATION": "0",
        # HikariCP's own defaults: maximumPoolSize 10, connectionTimeout 30000 ms; a connection per statement.
        "DB_POOL_SIZE": "10", "DB_POOL_TIMEOUT_MS": "30000", "DB_CONNECTION_SCOPE": "call",
        # No cache of reads unless asked for (Caffeine has no default size); its TTL only matters with one.
        "DB_CACHE_SIZE": "0", "DB_CACHE_TTL_S": "60",
        # HTTP/1.1 to the nodes, as Tomcat's connector speaks unless an UpgradeProtocol is given; Http2Protocol's
        # own defaults for when it is.
        "NODE_HTTP": "1.1", "TOMCAT_H2_MAX_CONCURRENT_STREAMS": "100", "TOMCAT_H2_MAX_CONCURRENT_STREAM_EXECUTION": "20",
        "TOMCAT_H2_INITIAL_WINDOW_SIZE": "65535",
    }
