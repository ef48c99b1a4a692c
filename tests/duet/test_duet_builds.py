"""A duet's builds and twin slots (capbench/duet/builds.py): the words a build is made of, refused with what is allowed, and
the slots' nodes re-created only when a build needs other settings than they run with."""
from __future__ import annotations

import zipfile

import pytest

from capbench.duet.builds import QUOTAS, Twins, app_problem, build, node_problems, parse_words
from capbench.hosts.compose import Compose
from capbench.hosts.swarm import Swarm

TUNABLES = {"TOMCAT_PROTOCOL": "nio", "TOMCAT_MAX_THREADS": "200", "TOMCAT_MIN_SPARE_THREADS": "25",
            "TOMCAT_ACCEPT_COUNT": "100", "TOMCAT_MAX_CONNECTIONS": "8192", "TOMCAT_CONNECTION_TIMEOUT": "60000",
            "TOMCAT_KEEP_ALIVE_TIMEOUT": "", "TOMCAT_MAX_KEEP_ALIVE_REQUESTS": "100", "DB_POOL_SIZE": "10",
            "DB_POOL_TIMEOUT_MS": "30000", "DB_CONNECTION_SCOPE": "call", "DB_CACHE_SIZE": "0", "DB_CACHE_TTL_S": "60",
            "TOMCAT_H2_MAX_CONCURRENT_STREAMS": "100", "TOMCAT_H2_MAX_CONCURRENT_STREAM_EXECUTION": "20",
            "TOMCAT_H2_INITIAL_WINDOW_SIZE": "65535"}
SMALL = {"NODE1_CPUS": "0.5", "NODE1_MEM": "768m", "NODE1_HEAP": "320m", "NODE1_GC": "auto", "NODE1_MAXCONN": "0",
         "NODE2_CPUS": "0.4", "NODE2_MEM": "640m", "NODE2_HEAP": "256m", "NODE2_GC": "auto", "NODE2_MAXCONN": "0",
         **TUNABLES}


def shared(node: str) -> dict[str, str]:
    """The connector's and pool's settings every node shares, as a slot's node is given them."""
    return {f"{node}_{k}": v for k, v in TUNABLES.items()}


def test_a_build_is_a_variant_and_node_settings():
    made = build("B", "VARIANT=v1 CPUS=0.43 GC=zgc")
    assert (made.variant, made.node, made.describe()) == ("v1", {"CPUS": "0.43", "GC": "zgc"}, "VARIANT=v1 CPUS=0.43 GC=zgc")
    assert build("A", "").describe() == "as configured" and build("A", "").node == {}


def test_a_build_may_ask_for_more_work_per_request_as_its_requests_say():
    from capbench.kinds import read_settings
    made = build("B", "WORK_PCT=105 VARIANT=v3")
    run = read_settings({})
    assert (made.settings(run).work_pct, made.settings(run).variant, made.node) == (105, "v3", {})
    assert build("A", "").settings(run) == run and made.as_dict()["work_pct"] == 105


@pytest.mark.parametrize("text, said", [
    ("VARIANT=v9", "VARIANT=v9: use one of v1, v1-nosync, v2, v3"),
    ("WORK_PCT=99", "WORK_PCT=99: use the Grinder calls per request in % of one, an integer from 100 to 400"),
    ("WORK_PCT=5%", "WORK_PCT=5%: use"),
    ("THREADS=4", "'THREADS=4' is not a build word: KEY=VALUE with KEY one of WAR, JAR, VARIANT, WORK_PCT, CPUS, MEM, HEAP, GC, TOMCAT_PROTOCOL"),
    ("CPUS=0.4 CPUS=0.5", "'CPUS=0.5' is not a build word"),
    ("CPUS", "'CPUS' is not a build word")])
def test_bad_words_are_refused_with_what_is_allowed(text, said):
    with pytest.raises(ValueError, match=said.replace("(", r"\(")):
        parse_words(text)


def test_node_values_are_judged_by_the_clusters_own_rules():
    [problem] = node_problems(build("A", ""), build("B", "CPUS=lots"))
    assert problem.startswith("DUET_B: NODE1_CPUS='lots' is not allowed: use a CPU quota in cores")
    [problem] = node_problems(build("A", "TOMCAT_MAX_THREADS=many"), build("B", "TOMCAT_MAX_THREADS=50"))
    assert problem.startswith("DUET_A: TOMCAT_MAX_THREADS='many' is not allowed")


def test_a_slots_connector_and_pool_settings_are_its_builds():
    made: list[dict] = []
    twins = Twins(SMALL, lambda nodes, env: made.append(env))
    a, b = build("A", ""), build("B", "TOMCAT_MAX_THREADS=8 DB_POOL_SIZE=2")
    assert b.node == {"TOMCAT_MAX_THREADS": "8", "DB_POOL_SIZE": "2"}
    twins.place({"node1": a, "node2": b}, fresh=True)
    assert (made[-1]["NODE1_TOMCAT_MAX_THREADS"], made[-1]["NODE2_TOMCAT_MAX_THREADS"]) == ("200", "8")
    assert (made[-1]["NODE1_DB_POOL_SIZE"], made[-1]["NODE2_DB_POOL_SIZE"]) == ("10", "2")
    assert twins.place({"node1": b, "node2": a})  # not a quota: both re-created with each other's
    assert (made[-1]["NODE1_TOMCAT_MAX_THREADS"], made[-1]["NODE2_TOMCAT_MAX_THREADS"]) == ("8", "200")


def test_twins_take_node1s_settings_and_recreate_only_what_differs():
    made: list[tuple[tuple, dict]] = []
    twins = Twins(SMALL, lambda nodes, env: made.append((nodes, env)))
    a, b = build("A", ""), build("B", "CPUS=0.43")
    assert twins.place({"node1": a, "node2": b})  # node2 differs: both re-created at once, so both JVMs are as young
    assert made == [(("node1", "node2"), {
        "NODE1_CPUS": "0.5", "NODE1_MEM": "768m", "NODE1_HEAP": "320m", "NODE1_GC": "auto", "NODE1_MAXCONN": "0",
        **shared("NODE1"), "NODE1_IMAGE": "",
        "NODE2_CPUS": "0.43", "NODE2_MEM": "768m", "NODE2_HEAP": "320m", "NODE2_GC": "auto", "NODE2_MAXCONN": "0",
        **shared("NODE2"), "NODE2_IMAGE": ""})]
    made.clear()
    assert not twins.place({"node1": a, "node2": b})  # already so: nothing re-created
    assert twins.place({"node1": b, "node2": a})  # swapped: both
    assert [nodes for nodes, _ in made] == [("node1", "node2")] and made[0][1]["NODE1_CPUS"] == "0.43"
    made.clear()
    assert twins.place({"node1": a, "node2": b}) and len(made) == 1
    made.clear()
    assert not twins.place({"node1": a, "node2": b}) and twins.place({"node1": a, "node2": b}, fresh=True)
    assert [nodes for nodes, _ in made] == [("node1", "node2")]  # a duet's start: both anew, as young
    made.clear()
    twins.restore()  # node1 runs as the cluster says: only node2 goes back
    assert made == [(("node2",), {"NODE2_CPUS": "0.4", "NODE2_MEM": "640m", "NODE2_HEAP": "256m", "NODE2_GC": "auto",
                                  "NODE2_MAXCONN": "0", **shared("NODE2"), "NODE2_IMAGE": ""})]


def test_builds_that_differ_in_cpus_alone_swap_by_changing_the_running_quotas():
    made, set_live = [], []
    twins = Twins(SMALL, lambda nodes, env: made.append((nodes, env.get("NODE1_CPUS"), env.get("NODE2_CPUS"))),
                  lambda node, cpus: set_live.append((node, cpus)) is None)
    a, b = build("A", ""), build("B", "CPUS=0.43")
    # Both JVMs start alike, on the larger quota; then node2 gets B's while running.
    assert twins.place({"node1": a, "node2": b}, fresh=True) and made == [(("node1", "node2"), "0.5", "0.5")]
    assert set_live == [("node2", "0.43")]
    set_live.clear()
    assert twins.place({"node1": b, "node2": a}) == QUOTAS  # swapped: the quotas change, the JVMs stay
    assert set_live == [("node1", "0.43"), ("node2", "0.5")] and len(made) == 1
    set_live.clear()
    twins.restore()  # node1 back to 0.5 while running; node2's memory and heap differ: re-created
    assert set_live == [("node1", "0.5")] and made[1:] == [(("node2",), None, "0.4")]


def test_where_quotas_cannot_change_while_running_the_nodes_are_re_created():
    made = []
    twins = Twins(SMALL, lambda nodes, env: made.extend(nodes))
    twins.place({"node1": build("A", ""), "node2": build("B", "CPUS=0.43")}, fresh=True)
    assert twins.place({"node1": build("B", "CPUS=0.43"), "node2": build("A", "")})
    assert made == ["node1", "node2", "node1", "node2"]


def a_war(path, webapp=True):
    with zipfile.ZipFile(path, "w") as war:
        war.writestr("WEB-INF/web.xml" if webapp else "index.html", "<web-app/>")
    return str(path)


def test_a_build_may_be_its_own_war(tmp_path):
    made = build("B", f"WAR={a_war(tmp_path / 'b.war')} HEAP=256m")
    assert (made.war, made.node, made.variant) == (str(tmp_path / "b.war"), {"HEAP": "256m"}, None)
    assert app_problem(made, {"APP_WAR": "/apps/a.war"}, Compose) is None
    assert build("A", "").with_image() == build("A", "")  # no WAR: the cluster's image, nothing built


@pytest.mark.parametrize("war, app_war, backend, said", [
    ("good", "", Compose, "DUET_B: WAR='{war}' needs the cluster to run an application: set APP_WAR"),
    ("good", "/apps/a.war", Swarm, "runs on Compose's slots only (BACKEND=swarm"),
    ("missing", "/apps/a.war", Compose, "DUET_B: WAR='{war}' is not a file"),
    ("plain", "/apps/a.war", Compose, "is not a web application archive: use a .war (a zip holding WEB-INF/)"),
    ("text", "/apps/a.war", Compose, "is not a web application archive")])
def test_a_war_that_cannot_run_on_a_slot_is_refused_saying_why(tmp_path, war, app_war, backend, said):
    path = {"good": lambda p: a_war(p), "missing": str, "plain": lambda p: a_war(p, webapp=False),
            "text": lambda p: p.write_text("not a zip") and str(p)}[war](tmp_path / "b.war")
    problem = app_problem(build("B", f"WAR={path}"), {"APP_WAR": app_war}, backend)
    assert problem is not None and said.format(war=path) in problem


def a_jar(path, manifest="Main-Class: org.example.Server\n"):
    with zipfile.ZipFile(path, "w") as jar:
        jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n" + manifest)
    return str(path)


SPRING = "Main-Class: org.springframework.boot.loader.launch.JarLauncher\nSpring-Boot-Version: 3.5.7\n"


def test_a_build_may_be_its_own_executable_jar_of_the_clusters_kind(tmp_path):
    made = build("B", f"JAR={a_jar(tmp_path / 'b.jar', SPRING)} TOMCAT_MAX_THREADS=50")
    assert (made.app, made.node) == (("JAR", str(tmp_path / "b.jar")), {"TOMCAT_MAX_THREADS": "50"})
    assert made.as_dict()["jar"] == str(tmp_path / "b.jar") and made.as_dict()["war"] is None
    assert app_problem(made, {"APP_JAR": a_jar(tmp_path / "a.jar", SPRING)}, Compose) is None


@pytest.mark.parametrize("jar, cluster, said", [
    ("spring", {"APP_JAR": "main"}, "is spring-boot 3.5.7 and the cluster's APP_JAR main org.example.Server: both "
                                    "builds must be Spring Boot's, or neither"),
    ("no-main", {"APP_JAR": "main"}, "is not an executable JAR: its META-INF/MANIFEST.MF names no Main-Class"),
    ("text", {"APP_JAR": "main"}, "is not an executable JAR: it cannot be read as a zip"),
    ("main", {"APP_WAR": "war"}, "the cluster runs a WAR (APP_WAR): give the build's as WAR="),
    ("main", {}, "needs the cluster to run an application: set APP_JAR (the baseline's JAR)")])
def test_a_jar_that_cannot_run_on_a_slot_is_refused_saying_why(tmp_path, jar, cluster, said):
    files = {"main": lambda p: a_jar(p), "spring": lambda p: a_jar(p, SPRING),
             "no-main": lambda p: a_jar(p, "Created-By: hand\n"), "text": lambda p: p.write_text("no zip") and str(p),
             "war": lambda p: a_war(p)}
    path = files[jar](tmp_path / "b.jar")
    cluster = {key: files[value](tmp_path / f"cluster-{value}") for key, value in cluster.items()}
    problem = app_problem(build("B", f"JAR={path}"), cluster, Compose)
    assert problem is not None and problem.startswith(f"DUET_B: JAR='{path}'") and said in problem, problem


def test_one_build_runs_one_application():
    with pytest.raises(ValueError, match="WAR= and JAR= in one build"):
        parse_words("WAR=a.war JAR=b.jar")


def test_each_slots_image_follows_its_build_and_goes_back_to_the_clusters():
    made: list[dict] = []
    twins = Twins(SMALL, lambda nodes, env: made.append(env))
    a = build("A", "")
    b = build("B", "WAR=/apps/b.war")
    b = type(b)(b.name, b.text, None, {"IMAGE": "capbench-node-app:0123456789abcdef"}, b.war)  # as with_image gives
    twins.place({"node1": a, "node2": b}, fresh=True)
    assert (made[-1]["NODE1_IMAGE"], made[-1]["NODE2_IMAGE"]) == ("", "capbench-node-app:0123456789abcdef")
    assert twins.place({"node1": b, "node2": a})  # another image: both re-created, never a quota change alone
    assert (made[-1]["NODE1_IMAGE"], made[-1]["NODE2_IMAGE"]) == ("capbench-node-app:0123456789abcdef", "")
    twins.restore()
    assert made[-1]["NODE1_IMAGE"] == "" and "NODE2_IMAGE" in made[-1]


def test_nodes_going_back_to_the_cluster_start_on_their_own_quotas():
    made = []
    twins = Twins(SMALL, lambda nodes, env: made.append((nodes, env.get("NODE1_CPUS"), env.get("NODE2_CPUS"))),
                  lambda node, cpus: True)
    b = build("B", "HEAP=200m")
    twins.place({"node1": b, "node2": b}, fresh=True)  # both differ from the cluster's: both go back
    twins.restore()
    assert made[-1] == (("node1", "node2"), "0.5", "0.4")
