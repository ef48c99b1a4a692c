"""A user's application on the nodes (cluster/app.env): every bad APP_* value is refused before anything starts,
with one line naming it and what is allowed; the settings resolve the health path and the Grinder's path by one
rule; and the image choice (capbench-node, or capbench-node-app with an application) reaches every backend from
one place: the Compose nodes, the Swarm stack rendered from them, the VMs' provisioning step."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

import pytest

from capbench.hosts import stack
from capbench.hosts.cluster_settings import cluster_settings
from capbench.hosts.swarm_hosts import parse
from capbench.rundata.workload import HARNESS_CONTEXT
from conftest import ROOT, compose, run

LOAD_SETTINGS = ["bash", str(ROOT / "cluster" / "load-settings.sh"), "print"]


def war(path, entries=("WEB-INF/web.xml", "index.html")):
    with zipfile.ZipFile(path, "w") as archive:
        for name in entries:
            archive.writestr(name, "<web-app/>" if name.endswith(".xml") else "hello")
    return path


@pytest.fixture
def app_war(tmp_path):
    return str(war(tmp_path / "shop.war"))


def refused(settings: dict[str, str]) -> list[str]:
    """load-settings.sh's refusal: exit 2 and its lines."""
    done = run(LOAD_SETTINGS, env=settings, check=False)
    assert done.returncode == 2, done.stdout + done.stderr
    return done.stderr.splitlines()


def test_a_missing_or_folder_war_is_refused(tmp_path):
    for path in (tmp_path / "none.war", tmp_path):
        assert refused({"APP_WAR": str(path)}) == [
            f"capbench: APP_WAR='{path}' is not allowed: it is not a file; use the path of a .war file on this "
            "machine, or leave it empty for none"]


def test_a_war_this_user_cannot_read_is_refused():
    """Its mode takes reading from everyone but its owner (root); the check then runs as nobody (as root the file
    would be readable), given the rules' text rather than their path (a clone in a private folder)."""
    folder = Path(tempfile.mkdtemp(prefix="capbench-unreadable-"))
    try:
        folder.chmod(0o755)
        path = war(folder / "shop.war")
        path.chmod(0o600 if os.geteuid() == 0 else 0o000)
        as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []
        rules = (ROOT / "cluster" / "settings.sh").read_text()
        done = subprocess.run([*as_nobody, "bash", "-c", rules + '\ncheck_app; printf "%s\\n" "${SETTINGS_ERRORS[@]}"'],
                              env={"PATH": os.environ["PATH"], "APP_WAR": str(path), "APP_CONTEXT": "ROOT",
                                   "APP_HEALTH": "/"}, capture_output=True, text=True, timeout=30)
        assert done.stdout.splitlines() == [f"APP_WAR='{path}' is not allowed: it cannot be read; use a .war file "
                                            "this user can read"], done.stdout + done.stderr
    finally:
        shutil.rmtree(folder)


def test_a_war_that_is_not_a_zip_with_web_inf_is_refused(tmp_path):
    (tmp_path / "text.war").write_text("not a zip")
    for path in (tmp_path / "text.war", war(tmp_path / "jar.war", ("META-INF/MANIFEST.MF", "a.class"))):
        assert refused({"APP_WAR": str(path)}) == [
            f"capbench: APP_WAR='{path}' is not allowed: it is not a web application archive; use a .war (a zip "
            "holding WEB-INF/)"]


@pytest.mark.parametrize("context", ["/shop", "shop/", "shop//v2", "a b", "shop#v2", "shop/../etc", ".", "",
                                     "ünï", "$(id)"])
def test_a_context_outside_the_allowed_characters_or_with_slashes_at_its_ends_is_refused(context):
    assert refused({"APP_CONTEXT": context}) == [
        f"capbench: APP_CONTEXT='{context}' is not allowed: use ROOT (for /) or a path without its leading and "
        "trailing /, of letters, digits and . _ - in segments separated by /, like examples or shop/v2"]


@pytest.mark.parametrize("context", ["capbench", "capbench/v2"])
def test_the_grinders_context_is_reserved(context):
    assert refused({"APP_CONTEXT": context}) == [
        f"capbench: APP_CONTEXT='{context}' is not allowed: /capbench is the Grinder's (the harness's /info, "
        "/health and /grind); use another name"]


@pytest.mark.parametrize("health", ["health", "/a b", "/a\"b", "/a'b", "/$x", "/a`b`"])
def test_a_health_path_not_starting_with_a_slash_or_with_spaces_or_quotes_is_refused(health):
    assert refused({"APP_HEALTH": health}) == [
        f"capbench: APP_HEALTH='{health}' is not allowed: use a path starting with /, of letters, digits and "
        "- . _ ~ / ? = & % : @ + , (no spaces or quotes), like /examples/index.html"]


@pytest.mark.parametrize("options", ["-Da='x y'", '-Da="x"', "-Da=$HOME", "-Da=`id`", "-Da=1;id", "-Da=1&",
                                     "-Da=1|id", "-Xlog:gc*", "-Da=(1)"])
def test_java_options_with_shell_characters_are_refused(options):
    assert refused({"APP_JAVA_OPTS": f"-Xss1m {options}"}) == [
        f"capbench: APP_JAVA_OPTS='-Xss1m {options}' is not allowed: use JVM options separated by spaces, each of "
        "letters, digits and - _ . : = + , / @ % only (no quotes, $, backticks, ; & | or other shell characters: "
        "the nodes' start scripts evaluate them)"]


def test_every_bad_app_setting_is_reported_at_once(tmp_path):
    lines = refused({"APP_WAR": str(tmp_path / "none.war"), "APP_CONTEXT": "/x", "APP_HEALTH": "x",
                     "APP_JAVA_OPTS": "-Da=$x"})
    assert [line.split("=")[0] for line in lines] == ["capbench: APP_WAR", "capbench: APP_CONTEXT",
                                                      "capbench: APP_HEALTH", "capbench: APP_JAVA_OPTS"], lines


def test_without_an_application_the_grinder_keeps_the_root_and_its_health():
    settings = cluster_settings({"APP_WAR": ""})
    assert (settings["APP_WAR"], settings["APP_CONTEXT"], settings["APP_HEALTH"]) == ("", "ROOT", "/health")
    assert settings["GRINDER_PATH"] == "" and settings["APP_JAVA_OPTS"] == ""


@pytest.mark.parametrize("context, health", [("ROOT", "/"), ("examples", "/examples/"), ("shop/v2", "/shop/v2/")])
def test_with_an_application_its_root_is_the_default_health_and_the_grinder_moves_aside(app_war, context, health):
    settings = cluster_settings({"APP_WAR": app_war, "APP_CONTEXT": context,
                                 "APP_JAVA_OPTS": "-Dshop.mode=bench -XX:+UseStringDeduplication"})
    # The shell's Grinder path (cluster/settings.sh's APP_CONTEXT_RESERVED) is where the metrics look for it.
    assert (settings["APP_HEALTH"], settings["GRINDER_PATH"]) == (health, HARNESS_CONTEXT)
    assert settings["APP_JAVA_OPTS"] == "-Dshop.mode=bench -XX:+UseStringDeduplication"
    assert cluster_settings({"APP_WAR": app_war, "APP_HEALTH": "/x/ping?deep=1"})["APP_HEALTH"] == "/x/ping?deep=1"


def node_image(env: dict[str, str]) -> str:
    """The nodes' image as compose.sh and the Swarm stack get it (load-settings.sh exports it)."""
    script = 'source cluster/load-settings.sh && echo "$CAPBENCH_NODE_IMAGE"'
    return run(["bash", "-c", script], env=env).stdout.strip()


def test_the_node_image_is_chosen_by_app_war_in_one_place(app_war):
    assert node_image({"APP_WAR": ""}) == "capbench-node:latest"
    assert node_image({"APP_WAR": app_war, "COMPOSE_PROJECT_NAME": ""}) == "capbench-node-app:capbench"


def test_each_cluster_stages_its_application_and_tags_its_image_apart(app_war):
    """Two clusters on one machine (Compose projects: the integration tests' two run at once) never run each
    other's application: staging one does not replace the other's image or files."""
    script = 'source cluster/load-settings.sh && echo "$CAPBENCH_NODE_IMAGE $APP_STAGED"'
    seen = {project: run(["bash", "-c", script], env={"APP_WAR": app_war, "COMPOSE_PROJECT_NAME": project})
            .stdout.split() for project in ("capbench", "capbench-it2")}
    assert seen["capbench"] == ["capbench-node-app:capbench", str(ROOT / ".capbench" / "app" / "capbench")]
    assert seen["capbench-it2"] == ["capbench-node-app:capbench-it2", str(ROOT / ".capbench" / "app" / "capbench-it2")]


# The Compose and Swarm side of the choice: what compose.sh renders, resolved by Compose itself, and the stack
# capbench/hosts/stack.py makes of it (the images it sends to the machines and names by ID: capbench/hosts/swarm_images.py).
@pytest.mark.docker
def test_compose_and_the_swarm_stack_run_the_nodes_on_the_app_image_and_check_app_health(app_war):
    hosts = parse("m1 unix:///m1.sock controller lb load\nm2 unix:///m2.sock node1 node2 node3\n", ROOT / "hosts")
    env = {"APP_WAR": app_war, "APP_CONTEXT": "shop/v2", "APP_JAVA_OPTS": "-Dshop.mode=bench"}
    config = json.loads(compose("config", "--format", "json", env=env).stdout)
    document = stack.render(config, hosts)
    for services in (config["services"], document["services"]):
        assert {services[f"node{i}"]["image"] for i in (1, 2, 3)} == {"capbench-node-app:capbench"}
        assert services["node1"]["environment"]["APP_HEALTH"] == "/shop/v2/"
        assert services["node1"]["environment"]["APP_JAVA_OPTS"] == "-Dshop.mode=bench"
        assert services["lb"]["environment"]["APP_HEALTH"] == "/shop/v2/"
        assert services["controller"]["environment"]["APP_HEALTH"] == "/shop/v2/"
        assert services["lb"]["image"] == "capbench-lb:latest"
    # compose build (make images) never builds the application's image: it builds with no application.
    plain = json.loads(compose("config", "--format", "json", env={"APP_WAR": ""}).stdout)["services"]
    assert plain["node1"]["image"] == "capbench-node:latest" and plain["node1"]["environment"]["APP_HEALTH"] == "/health"


@pytest.mark.docker
def test_the_node_provisioning_step_deploys_the_app_beside_the_grinder(tmp_path):
    """cluster/provision/node.sh app, as the app image and the VMs run it: shop/v2 → shop#v2.war, the Grinder at
    capbench.war, Tomcat's default web.xml; without a staged application the Grinder back at ROOT.war alone."""
    staged = tmp_path / ".capbench" / "app"
    staged.mkdir(parents=True)
    war(staged / "app.war")
    (staged / "context").write_text("shop/v2\n")
    (staged / "sha256").write_text("0" * 64 + "\n")
    script = ("src=/opt/capbench/src && cp -r /staged/.capbench $src/ && $src/cluster/provision/node.sh app $src "
              "&& ls /opt/capbench/tomcat/webapps /opt/capbench/tomcat/conf && rm -r $src/.capbench "
              "&& $src/cluster/provision/node.sh app $src && ls /opt/capbench/tomcat/webapps /opt/capbench/tomcat/conf")
    done = run(["docker", "run", "--rm", "--network", "none", "--user", "root", "-v", f"{tmp_path}:/staged:ro",
                "--entrypoint", "bash", "capbench-node:latest", "-c", script], timeout=120)
    with_app, without = done.stdout.split("capbench: node webapps: the Grinder at /")
    assert "capbench.war\nshop#v2.war\n" in with_app and "web.xml" in with_app, done.stdout
    assert "ROOT.war\n" in without and "capbench.war" not in without and "web.xml" not in without, done.stdout


@pytest.mark.parametrize("value", ["abc", "0", "-1", "1h"])
def test_a_start_time_that_is_not_whole_seconds_is_refused(value):
    assert refused({"APP_START_S": value}) == [
        f"capbench: APP_START_S='{value}' is not allowed: use an integer from 1 to 3600"]


@pytest.mark.parametrize("value", ["yes", "on", ""])
def test_a_migration_setting_other_than_auto_or_off_is_refused(value):
    assert refused({"APP_MIGRATE": value}) == [
        f"capbench: APP_MIGRATE='{value}' is not allowed: use one of auto off"]


def test_the_start_time_is_scaled_for_a_quota_under_half_a_core_and_tomcat_named_when_it_runs_out():
    script = ('source cluster/settings.sh; APP_START_S=90; start_s 0.3; start_s 0.5; start_s 0; '
              'tomcat_doing "$(printf "a\\nDeploying web application archive [/w/shop.war]\\n")" 150; '
              'tomcat_doing "$(printf "Deploying web application archive [/w/shop.war]\\nDeployment of web '
              'application archive [/w/shop.war] has finished in [100] ms\\nStarting ProtocolHandler\\n")" 9')
    done = run(["bash", "-c", script])
    assert done.stdout.splitlines() == ["150", "90", "90", "its Tomcat was still deploying shop.war after 150 s",
                                        "its Tomcat was serving after 9 s"]
