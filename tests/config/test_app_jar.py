"""An executable JAR on the nodes (APP_JAR): what it is, read from its manifest (capbench/hosts/app_jar.py); every bad
APP_JAR setting refused before anything starts, with one line naming it; and the settings it resolves: the node
image with an application, no Grinder, the application's root as its health path."""
from __future__ import annotations

import subprocess
import sys
import zipfile

import pytest
from test_app import LOAD_SETTINGS, refused, war

from capbench.hosts.cluster_settings import cluster_settings
from capbench.hosts.jvm import info_from_metrics, status_fields
from conftest import ROOT, run

INSPECT = [sys.executable, str(ROOT / "capbench" / "hosts" / "app_jar.py")]
SPRING = "Manifest-Version: 1.0\r\nMain-Class: org.springframework.boot.loader.launch.JarLauncher\r\n" \
         "Start-Class: capbench.orders.OrdersApplication\r\nSpring-Boot-Version: 3.5.7\r\n\r\n"


def jar(path, manifest: str | None = "Manifest-Version: 1.0\nMain-Class: shop.Main\n\n"):
    with zipfile.ZipFile(path, "w") as archive:
        if manifest is not None:
            archive.writestr("META-INF/MANIFEST.MF", manifest)
        archive.writestr("shop/Main.class", b"\xca\xfe\xba\xbe")
    return path


def inspect(path) -> subprocess.CompletedProcess:
    return subprocess.run([*INSPECT, str(path)], capture_output=True, text=True, timeout=30)


def test_a_spring_boot_jar_and_a_plain_one_are_told_apart_by_their_manifest(tmp_path):
    assert inspect(jar(tmp_path / "spring.jar", SPRING)).stdout == "spring-boot 3.5.7\n"
    assert inspect(jar(tmp_path / "plain.jar")).stdout == "main shop.Main\n"
    # A long class name is wrapped at 72 bytes, its rest on lines that start with a space.
    wrapped = "Main-Class: org.example.a.very.long.package.name.that.goes.on.and.on.and.o\n n.Main\n\n"
    assert inspect(jar(tmp_path / "wrapped.jar", wrapped)).stdout == \
        "main org.example.a.very.long.package.name.that.goes.on.and.on.and.on.Main\n"


@pytest.mark.parametrize("manifest, why", [
    (None, "it has no META-INF/MANIFEST.MF"),
    ("Manifest-Version: 1.0\n\nName: shop/\nMain-Class: shop.Main\n",
     "its META-INF/MANIFEST.MF names no Main-Class, so java -jar cannot start it")])
def test_a_jar_without_a_main_class_is_no_runnable_jar(tmp_path, manifest, why):
    done = inspect(jar(tmp_path / "lib.jar", manifest))
    assert (done.returncode, done.stdout) == (1, why + "\n")


def test_a_file_that_is_not_a_zip_cannot_be_read(tmp_path):
    (tmp_path / "text.jar").write_text("not a zip")
    assert inspect(tmp_path / "text.jar").returncode == 2


def test_a_war_and_a_jar_together_are_refused(tmp_path):
    app_war, app_jar = war(tmp_path / "shop.war"), jar(tmp_path / "shop.jar")
    assert refused({"APP_WAR": str(app_war), "APP_JAR": str(app_jar)}) == [
        f"capbench: APP_WAR and APP_JAR are both set ('{app_war}', '{app_jar}'): a node runs one application; set "
        "one and leave the other empty"]


def test_a_missing_jar_or_one_without_a_main_class_is_refused(tmp_path):
    assert refused({"APP_JAR": str(tmp_path / "none.jar")}) == [
        f"capbench: APP_JAR='{tmp_path / 'none.jar'}' is not allowed: it is not a file; use the path of an "
        "executable .jar on this machine, or leave it empty for none"]
    library = jar(tmp_path / "lib.jar", "Manifest-Version: 1.0\n\n")
    assert refused({"APP_JAR": str(library)}) == [
        f"capbench: APP_JAR='{library}' is not allowed: its META-INF/MANIFEST.MF names no Main-Class, so java -jar "
        "cannot start it; use an executable JAR (one java -jar starts)"]


def test_a_connector_setting_a_plain_jar_cannot_take_is_refused_by_name(tmp_path):
    plain = jar(tmp_path / "plain.jar")
    assert refused({"APP_JAR": str(plain), "TOMCAT_MAX_THREADS": "50"}) == [
        f"capbench: TOMCAT_MAX_THREADS=50 is not allowed with APP_JAR='{plain}': a JAR that is not Spring Boot's "
        "takes no connector settings from capbench: pass its server's own in APP_JAR_ARGS"]


def test_a_spring_boot_jar_takes_the_connectors_threads_but_not_another_protocol_or_the_tomcat_pool(tmp_path):
    spring = str(jar(tmp_path / "spring.jar", SPRING))
    settings = cluster_settings({"APP_JAR": spring, "TOMCAT_MAX_THREADS": "50", "TOMCAT_ACCEPT_COUNT": "10"})
    assert (settings["TOMCAT_MAX_THREADS"], settings["TOMCAT_ACCEPT_COUNT"]) == ("50", "10")
    lines = refused({"APP_JAR": spring, "TOMCAT_PROTOCOL": "nio2", "DB_POOL_SIZE": "20"})
    assert [line.split(" is not allowed")[0] for line in lines] == ["capbench: TOMCAT_PROTOCOL=nio2",
                                                                    "capbench: DB_POOL_SIZE=20"], lines
    assert "Spring Boot's embedded Tomcat runs NIO only" in lines[0]
    assert "APP_JAR_ARGS=--spring.datasource.hikari.maximum-pool-size=N" in lines[1]


def test_http_2_to_the_nodes_turns_spring_boots_own_on_and_is_refused_where_capbench_cannot(tmp_path):
    spring, plain = str(jar(tmp_path / "spring.jar", SPRING)), str(jar(tmp_path / "plain.jar"))
    assert cluster_settings({"APP_JAR": spring, "NODE_HTTP": "2"})["NODE_HTTP"] == "2"  # server.http2.enabled
    assert refused({"APP_JAR": spring, "NODE_HTTP": "2", "TOMCAT_H2_MAX_CONCURRENT_STREAMS": "50"}) == [
        f"capbench: TOMCAT_H2_MAX_CONCURRENT_STREAMS=50 is not allowed with APP_JAR='{spring}': Spring Boot names no "
        "property for Tomcat's HTTP/2 settings (NODE_HTTP=2 turns its HTTP/2 on: server.http2.enabled); leave them "
        "at Tomcat's defaults"]
    assert refused({"APP_JAR": plain, "NODE_HTTP": "2"}) == [
        f"capbench: NODE_HTTP=2 is not allowed with APP_JAR='{plain}': capbench cannot turn HTTP/2 on in a server "
        "that is not Spring Boot's: use NODE_HTTP=1.1"]
    assert "--server.http2.enabled=true" in (ROOT / "tomcat-conf" / "run-jar.sh").read_text()


def test_tls_re_encrypted_to_the_nodes_is_refused_with_a_jar_and_tls_at_the_balancer_is_not(tmp_path):
    spring = str(jar(tmp_path / "spring.jar", SPRING))
    assert refused({"APP_JAR": spring, "TLS": "both"}) == [
        f"capbench: TLS=both is not allowed with APP_JAR='{spring}' yet: the nodes' TLS connector is Tomcat's "
        "server.xml, which an executable JAR does not run; use TLS=lb (TLS ends at the balancer) or TLS=off"]
    assert cluster_settings({"APP_JAR": spring, "TLS": "lb"})["TLS"] == "lb"


def test_jar_arguments_with_shell_characters_are_refused():
    assert refused({"APP_JAR_ARGS": "--port 8080 --x=$(id)"}) == [
        "capbench: APP_JAR_ARGS='--port 8080 --x=$(id)' is not allowed: use arguments for the JAR separated by "
        "spaces, each of letters, digits and - _ . : = + , / @ % only (no quotes, $, backticks, ; & | or other "
        "shell characters: the nodes' start scripts evaluate them)"]


def test_with_a_jar_the_nodes_run_the_application_image_without_a_grinder(tmp_path):
    plain = str(jar(tmp_path / "plain.jar"))
    settings = cluster_settings({"APP_JAR": plain, "APP_JAR_ARGS": "--port 8080"})
    assert (settings["GRINDER_PATH"], settings["APP_HEALTH"], settings["APP_JAR_ARGS"]) == ("none", "/", "--port 8080")
    script = 'source cluster/load-settings.sh && echo "$CAPBENCH_NODE_IMAGE"'
    assert run(["bash", "-c", script], env={"APP_JAR": plain}).stdout.strip() == "capbench-node-app:capbench"
    assert run(LOAD_SETTINGS, env={"APP_JAR": plain, "APP_HEALTH": "/actuator/health"}).returncode == 0


def test_a_node_without_the_grinder_is_described_by_the_metrics_agent():
    """The JMX exporter's lines as a node's agent serves them (a Serial collector, 320 MB of heap)."""
    text = ('jvm_gc_collection_seconds_count{gc="Copy"} 19\n'
            'jvm_gc_collection_seconds_count{gc="MarkSweepCompact"} 83\n'
            'jvm_memory_max_bytes{area="heap"} 3.244032E8\njvm_memory_max_bytes{area="nonheap"} -1.0\n'
            'jvm_runtime_info{runtime="OpenJDK Runtime Environment",vendor="Debian",version="17.0.21+2"} 1\n')
    info = info_from_metrics(text)
    assert (info["gc"], info["gc_collectors"], info["heap_max_bytes"]) == ("Serial", "Copy, MarkSweepCompact",
                                                                          324403200)
    assert info["java_version"] == "17.0.21+2"
    assert info_from_metrics("")["gc"] is None
    # make status shows what it has, "-" for what the agent does not tell (the CPUs the JVM sees).
    assert status_fields(info) == ("Serial", "-", "309MiB")
    assert status_fields(info_from_metrics("")) == ("-", "-", "-")
    assert status_fields({"gc": "G1", "available_processors": 1, "heap_max_bytes": 2**28}) == ("G1", "1", "256MiB")


@pytest.mark.docker
def test_the_node_provisioning_step_installs_a_jar_in_tomcats_place(tmp_path):
    """cluster/provision/node.sh app with a JAR staged, as the app image and the VMs (Vagrant) run it: the JAR and
    its kind where tomcat-conf/run-jar.sh starts it, no WAR for Tomcat (no Grinder); staged again without it, the
    Grinder back and the JAR gone."""
    staged = tmp_path / ".capbench" / "app"
    staged.mkdir(parents=True)
    jar(staged / "app.jar", SPRING)
    (staged / "kind").write_text("spring-boot 3.5.7\n")
    (staged / "sha256").write_text("1" * 64 + "\n")
    listing = "ls /opt/capbench/tomcat/webapps /opt/capbench/app 2>&1; cat /opt/capbench/app/kind 2>&1; true"
    script = (f"src=/opt/capbench/src && cp -r /staged/.capbench $src/ && $src/cluster/provision/node.sh app $src "
              f"&& {listing}; rm -r $src/.capbench && $src/cluster/provision/node.sh app $src && {listing}")
    done = run(["docker", "run", "--rm", "--network", "none", "--user", "root", "-v", f"{tmp_path}:/staged:ro",
                "--entrypoint", "bash", "capbench-node:latest", "-c", script], timeout=120)
    with_jar, without = done.stdout.split("capbench: node webapps: the Grinder at /")
    assert "the executable JAR spring-boot (1111111111111111), no Grinder" in with_jar, done.stdout
    assert "/opt/capbench/app:\napp.jar\nkind\n" in with_jar and "spring-boot 3.5.7" in with_jar, done.stdout
    assert ".war" not in with_jar, done.stdout  # Tomcat's webapps/ empty: the JAR runs in its place
    assert "ROOT.war" in without and "app.jar" not in without, done.stdout
