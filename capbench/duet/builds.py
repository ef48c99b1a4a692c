"""A duet's parts: the two builds it compares and the twin slots they run on.

A build is what the user changes between A and B, as KEY=VALUE words (DUET_A, DUET_B): the application's WAR, or its
executable JAR when the cluster runs one (the slot's node runs an image with it, cluster/app.sh build), the
Grinder's VARIANT (its requests ask for it), a node's CPUS, MEM, HEAP or GC, or a connector or pool setting
(TOMCAT_MAX_THREADS, …): the slot's node is re-created with those. Nothing given: the build as the run's settings
and the cluster's say. The slots are node1 and node2, made twins: both get node1's CPU quota, memory, heap,
collector and maxconn (node2 is re-created when it differs), then each its build's own values. Each slot is reached
through its own port on the balancer (haproxy/start), so both are measured at once through the same HAProxy. At the
end each slot's node is brought back to the cluster's settings."""
from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from capbench.engine.progress import say
from capbench.hosts.backend import BackendError, ClusterError, backend_class
from capbench.hosts.cluster_settings import SettingsRefused, cluster_settings
from capbench.hosts.topology import ROOT
from capbench.settings.bench import VARIANTS, BenchSettings
from capbench.settings.fields import Rule

SLOTS = ("node1", "node2")
NODE_KEYS = ("CPUS", "MEM", "HEAP", "GC")  # a build may change these of its slot's node (the profile's NODEn_ keys)
TWIN_KEYS = (*NODE_KEYS, "MAXCONN")  # the slots are alike in these (node1's), before the builds change theirs
# The connector's, pool's and cache's settings (tomcat-conf/tunables.env), the same on every node unless a build
# gives its slot its own (NODE1_TOMCAT_MAX_THREADS, cluster/compose/compose.sh). Not the session replication: it
# joins every node; nor NODE_HTTP: the balancer speaks one HTTP to every node (Tomcat's HTTP/2 tunables are a slot's).
CLUSTER_WIDE = ("TOMCAT_SESSION_REPLICATION", "NODE_HTTP")
TUNABLE_KEYS = tuple(key for key in re.findall(r"^([A-Z][A-Z0-9_]*)=", (ROOT / "tomcat-conf" / "tunables.env")
                                               .read_text(), re.MULTILINE) if key not in CLUSTER_WIDE)
APP_KEYS = {"WAR": "APP_WAR", "JAR": "APP_JAR"}  # a build's application file, and the cluster setting it stands in for
REQUEST_KEYS = {"VARIANT": "variant", "WORK_PCT": "work_pct"}  # what a build's requests ask the Grinder for
BUILD_KEYS = (*APP_KEYS, *REQUEST_KEYS, *NODE_KEYS, *TUNABLE_KEYS)
IMAGE = "IMAGE"  # a slot's node image: "" is the cluster's own (CAPBENCH_NODE_IMAGE), else an application build's
APP = ROOT / "cluster" / "app.sh"
APP_JAR_READER = ROOT / "capbench" / "hosts" / "app_jar.py"
# From choosing a step's start instant to the instant, with one load host: long enough that both generators are
# there waiting for it (docs/findings.md, why the duet is built as it is). Each generator's start_skew_ms in the steps' records shows when they are not.
ONE_HOST_MARGIN_S = 0.5
BUILD_IMAGE_TIMEOUT_S = 600  # an image build and its trial node (cluster/app.sh: 90 s for the trial)


@dataclass(frozen=True)
class Build:
    """One side of a duet: its name (A or B), the words that define it, what its requests ask the Grinder for
    (REQUEST_KEYS: VARIANT, WORK_PCT; absent: the run's), its WAR or JAR (None: the cluster's application) and the
    node settings it gives its slot (IMAGE once its application is built)."""
    name: str
    text: str
    requests: dict[str, str] = field(default_factory=dict)
    node: dict[str, str] = field(default_factory=dict)
    war: str | None = None
    jar: str | None = None

    @property
    def app(self) -> tuple[str, str] | None:
        """Its application file's word, ("WAR", path) or ("JAR", path); None when it runs the cluster's."""
        return ("WAR", self.war) if self.war else ("JAR", self.jar) if self.jar else None

    def describe(self) -> str:
        return self.text or "as configured"

    @property
    def variant(self) -> str | None:
        return self.requests.get("VARIANT")

    def settings(self, run: BenchSettings) -> BenchSettings:
        """The run's settings with this build's request words: what its slot's requests ask for."""
        return replace(run, **{field_: int(self.requests[key]) if key == "WORK_PCT" else self.requests[key]
                               for key, field_ in REQUEST_KEYS.items() if key in self.requests})

    def as_dict(self) -> dict:
        return {"name": self.name, "text": self.text, "variant": self.variant,
                "work_pct": int(self.requests["WORK_PCT"]) if "WORK_PCT" in self.requests else None,
                "node": self.node, "war": self.war, "jar": self.jar}

    def with_image(self) -> Build:
        """This build with its application's node image built and tried (cluster/app.sh build), in its node
        settings; itself without a WAR or JAR. ClusterError when the image cannot be built or its trial node
        fails."""
        if self.app is None:
            return self
        key, path = self.app
        say(f"duet: build {self.name}'s node image with {path}")
        try:
            done = subprocess.run([str(APP), "build", str(Path(path).resolve())], cwd=ROOT,
                                  stdout=subprocess.PIPE, text=True, timeout=BUILD_IMAGE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise ClusterError(f"DUET_{self.name}: building the image of {path} took over "
                               f"{BUILD_IMAGE_TIMEOUT_S} s") from None
        if done.returncode != 0 or not done.stdout.strip():
            raise ClusterError(f"DUET_{self.name}: the image of {key}={path} was not built or its trial node "
                               f"failed (cluster/app.sh build exited {done.returncode}; its lines above say why)")
        return replace(self, node={**self.node, IMAGE: done.stdout.strip().splitlines()[-1]})


def parse_words(text: str) -> dict[str, str]:
    """KEY=VALUE words, KEY one of BUILD_KEYS, each at most once; ValueError saying what is allowed."""
    values: dict[str, str] = {}
    for word in text.split():
        key, equals, value = word.partition("=")
        if not equals or key not in BUILD_KEYS or not value or key in values:
            raise ValueError(f"'{word}' is not a build word: KEY=VALUE with KEY one of {', '.join(BUILD_KEYS)}, "
                             "each once")
        if key == "VARIANT" and value not in VARIANTS:
            raise ValueError(f"VARIANT={value}: use one of {', '.join(VARIANTS)}")
        if key == "WORK_PCT" and not (value.isdigit() and 100 <= int(value) <= 400):
            raise ValueError(f"WORK_PCT={value}: use the Grinder calls per request in % of one, an integer from 100 "
                             "to 400 (105: 5 % more work per request)")
        values[key] = value
    if len(APP_KEYS.keys() & values.keys()) > 1:
        raise ValueError("WAR= and JAR= in one build: a build runs one application, a WAR or an executable JAR "
                         "(as the cluster's APP_WAR or APP_JAR)")
    return values


def build_rule() -> Rule:
    return Rule(f"KEY=VALUE words separated by spaces, KEY one of {', '.join(BUILD_KEYS)} (empty: as configured)",
                lambda text: " ".join(f"{k}={v}" for k, v in parse_words(text).items()))


def build(name: str, text: str) -> Build:
    words = parse_words(text)
    return Build(name, text, {k: v for k, v in words.items() if k in REQUEST_KEYS},
                 {k: v for k, v in words.items() if k in NODE_KEYS or k in TUNABLE_KEYS}, words.get("WAR"),
                 words.get("JAR"))


def app_key(cluster: dict[str, str]) -> str | None:
    """The duet word a cluster's application is given by ("WAR", "JAR"), None when it runs the Grinder."""
    return next((key for key, setting in APP_KEYS.items() if cluster.get(setting)), None)


def app_problem(b: Build, cluster: dict[str, str], backend: type) -> str | None:
    """Why a build's WAR or JAR cannot run on its slot, or None: the cluster must run an application of the same
    form (APP_WAR for a WAR, APP_JAR for a JAR) whose health path (and a WAR's context) the build shares, and the
    file must be one: a web application archive, or a JAR java -jar starts of the same kind as the cluster's
    (Spring Boot's or not: what the slot's connector settings become, tomcat-conf/run-jar.sh); and the backend
    (its class) must let one node run an image of its own."""
    if b.app is None:
        return None
    key, path = b.app
    where, setting = f"DUET_{b.name}: {key}='{path}'", APP_KEYS[key]
    if not cluster.get(setting):
        other = app_key(cluster)
        if other:
            return (f"{where}: the cluster runs {'a WAR' if other == 'WAR' else 'an executable JAR'} "
                    f"({APP_KEYS[other]}): give the build's as {other}=")
        shared = "APP_CONTEXT and APP_HEALTH" if key == "WAR" else "APP_HEALTH and APP_JAR_ARGS"
        return (f"{where} needs the cluster to run an application: set {setting} (the baseline's {key}), {shared}, "
                "which both builds share; the Grinder's builds differ in VARIANT")
    if not backend.own_node_images:
        return (f"{where}: a build of its own {key} runs on Compose's slots only (BACKEND={backend.name} gives "
                "every node one application image)")
    if not Path(path).is_file():
        return f"{where} is not a file: use the path of a .{key.lower()} on this machine"
    if key == "JAR":
        return jar_problem(where, path, cluster[setting])
    try:
        with zipfile.ZipFile(path) as war:
            webapp = any(name.startswith("WEB-INF/") for name in war.namelist())
    except (OSError, zipfile.BadZipFile):
        webapp = False
    return None if webapp else f"{where} is not a web application archive: use a .war (a zip holding WEB-INF/)"


def jar_kind(path: str) -> tuple[int, str]:
    """capbench/hosts/app_jar.py's answer on a JAR: (0, "spring-boot VERSION" or "main CLASS"), else its exit status
    and why."""
    done = subprocess.run([sys.executable, str(APP_JAR_READER), path], capture_output=True, text=True)
    return done.returncode, done.stdout.strip()


def jar_problem(where: str, path: str, cluster_jar: str) -> str | None:
    status, said = jar_kind(path)
    if status != 0:
        return f"{where} is not an executable JAR: {said}"
    cluster_status, cluster_said = jar_kind(cluster_jar)
    if cluster_status == 0 and said.split()[0] != cluster_said.split()[0]:
        return (f"{where} is {said} and the cluster's APP_JAR {cluster_said}: both builds must be Spring Boot's, "
                "or neither (the connector settings the slots get depend on it)")
    return None


def node_problems(*builds: Build) -> list[str]:
    """Each build's WAR or JAR and node values as the cluster's own rules judge them (on node1: the values, not the
    node, are checked)."""
    problems = []
    if any(b.app for b in builds):
        try:
            chosen = backend_class()
        except BackendError as refused:
            return [str(refused)]
        cluster = cluster_settings()
        problems += [p for b in builds if (p := app_problem(b, cluster, chosen))]
    for b in builds:
        if b.node:
            try:
                cluster_settings({(k if k in TUNABLE_KEYS else f"NODE1_{k}"): v for k, v in b.node.items()})
            except SettingsRefused as refused:
                problems += [f"DUET_{b.name}: {line}" for line in str(refused).splitlines()]
    return problems


# What Twins.place changed.
RE_CREATED, QUOTAS = "re-created", "quotas"


class Twins:
    """The slots' nodes: what each runs with now, and re-creating one when its build needs other settings.
    `recreate(nodes, env)` re-creates nodes at once with the cluster's settings `env` over the run's (monitoring
    paused);
    `set_cpus(node, cpus)` changes a running node's CPU quota (None where the backend cannot): builds that differ
    in CPUS alone then swap slots without a re-creation, and the JVMs keep what they compiled."""

    def __init__(self, configured: dict[str, str], recreate, set_cpus=None):
        self.configured = configured
        self.recreate = recreate
        self.set_cpus = set_cpus
        self.base = self.own("node1")
        self.running = {node: self.own(node) for node in SLOTS}

    def own(self, node: str) -> dict[str, str]:
        """What the cluster's settings give a node: its twin keys, the connector's and pool's settings every node
        shares, and the cluster's image."""
        return {**{k: self.configured[f"{node.upper()}_{k}"] for k in TWIN_KEYS},
                **{k: self.configured[k] for k in TUNABLE_KEYS}, IMAGE: ""}

    def wanted(self, build_: Build) -> dict[str, str]:
        return {**self.base, **build_.node}

    def place(self, assignment: dict[str, Build], fresh: bool = False) -> str:
        """Each slot's node with its build's settings; what changed: RE_CREATED, QUOTAS (the running nodes' CPU
        quotas alone) or "" (nothing). When one slot's node must be re-created, both are, and with `fresh` (a duet's
        start) always: a JVM just started is slower for minutes (compiling, sizing its heap), and two slots of
        different ages would measure that."""
        wanted = {node: self.wanted(build_) for node, build_ in assignment.items()}
        if not fresh and all(wanted[node] == self.running[node] for node in assignment):
            return ""
        if not fresh and self._quotas_alone(wanted):
            return QUOTAS
        for node, build_ in assignment.items():
            shown = {k: v for k, v in wanted[node].items() if k in TWIN_KEYS or v != self.base[k]}
            say(f"duet: {node} re-created for build {build_.name} ({', '.join(f'{k}={v}' for k, v in shown.items())})")
        self._recreate(wanted)
        return RE_CREATED

    def _recreate(self, wanted: dict[str, dict[str, str]], alike: bool = True) -> None:
        """The nodes re-created at once with their settings (together where the backend can). Where running
        quotas can change, `alike` nodes all start on the largest of their quotas and then each gets its own:
        JVMs started alike size their collector's and compiler's threads alike, as they keep them through every
        swap of quotas; and a JVM starts slowly on a small quota (docs/findings.md, why the duet is built as it is)."""
        cpus = max((want["CPUS"] for want in wanted.values()), key=float) if self.set_cpus and alike else None
        started = {node: {**want, "CPUS": cpus or want["CPUS"]} for node, want in wanted.items()}
        self.recreate(tuple(started), {f"{node.upper()}_{k}": v for node, start in started.items()
                                       for k, v in start.items()})
        self.running.update(started)
        self._quotas_alone(wanted)

    def _quotas_alone(self, wanted: dict[str, dict[str, str]]) -> bool:
        """Where only the CPU quotas differ, each changed on the running node; False (nothing changed) where the
        backend cannot."""
        if self.set_cpus is None:
            return False
        if any({k: v for k, v in want.items() if k != "CPUS"}
               != {k: v for k, v in self.running[node].items() if k != "CPUS"} for node, want in wanted.items()):
            return False
        for node, want in wanted.items():
            if want["CPUS"] != self.running[node]["CPUS"]:
                if not self.set_cpus(node, want["CPUS"]):
                    return False
                say(f"duet: {node}'s CPU quota set to {want['CPUS']} (running, its JVM kept)")
                self.running[node] = want
        return True

    def restore(self) -> None:
        """Each slot's node back to the cluster's own settings."""
        back = {}
        for node in SLOTS:
            own = self.own(node)
            if self.running[node] != own and not self._quotas_alone({node: own}):
                say(f"duet: {node} back to the cluster's settings")
                back[node] = own
        if back:
            self._recreate(back, alike=False)  # as the cluster starts them
