"""A duet's parts: the two builds it compares and the twin slots they run on.

A build is what the user changes between A and B, as KEY=VALUE words (DUET_A, DUET_B): the Grinder's VARIANT (its
requests ask for it), or a node's CPUS, MEM, HEAP or GC (the slot's node is re-created with it). Nothing given:
the build as the run's settings and the cluster's say. The slots are node1 and node2, made twins: both get
node1's CPU quota, memory, heap, collector and maxconn (node2 is re-created when it differs), then each its
build's own values. Each slot is reached through its own port on the balancer (haproxy/start), so both are
measured at once through the same HAProxy. At the end each slot's node is brought back to the cluster's settings."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from hosts.cluster_settings import SettingsRefused, cluster_settings
from load.bench_settings import VARIANTS, BenchSettings
from load.progress import say
from load.setting_fields import Rule

SLOTS = ("node1", "node2")
NODE_KEYS = ("CPUS", "MEM", "HEAP", "GC")  # a build may change these of its slot's node
TWIN_KEYS = (*NODE_KEYS, "MAXCONN")  # the slots are alike in these (node1's), before the builds change theirs
BUILD_KEYS = ("VARIANT", *NODE_KEYS)


@dataclass(frozen=True)
class Build:
    """One side of a duet: its name (A or B), the words that define it, its VARIANT (None: the run's) and the
    node settings it gives its slot."""
    name: str
    text: str
    variant: str | None = None
    node: dict[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        return self.text or "as configured"

    def settings(self, run: BenchSettings) -> BenchSettings:
        """The run's settings with this build's VARIANT: what its slot's requests ask for."""
        return replace(run, variant=self.variant) if self.variant else run

    def as_dict(self) -> dict:
        return {"name": self.name, "text": self.text, "variant": self.variant, "node": self.node}


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
        values[key] = value
    return values


def build_rule() -> Rule:
    return Rule(f"KEY=VALUE words separated by spaces, KEY one of {', '.join(BUILD_KEYS)} (empty: as configured)",
                lambda text: " ".join(f"{k}={v}" for k, v in parse_words(text).items()))


def build(name: str, text: str) -> Build:
    words = parse_words(text)
    return Build(name, text, words.get("VARIANT"), {k: v for k, v in words.items() if k in NODE_KEYS})


def node_problems(*builds: Build) -> list[str]:
    """Each build's node values as the cluster's own rules judge them (on node1: the values, not the node, are
    checked)."""
    problems = []
    for b in builds:
        if b.node:
            try:
                cluster_settings({f"NODE1_{k}": v for k, v in b.node.items()})
            except SettingsRefused as refused:
                problems += [f"DUET_{b.name}: {line}" for line in str(refused).splitlines()]
    return problems


class Twins:
    """The slots' nodes: what each runs with now, and re-creating one when its build needs other settings.
    `recreate(nodes, env)` re-creates nodes at once with the cluster's settings `env` over the run's (monitoring
    paused);
    `set_cpus(node, cpus)` changes a running node's CPU quota where the backend can (False where not): builds that
    differ in CPUS alone then swap slots without a re-creation, and the JVMs keep what they compiled."""

    def __init__(self, configured: dict[str, str], recreate, set_cpus=lambda node, cpus: False):
        self.configured = configured
        self.recreate = recreate
        self.set_cpus = set_cpus
        self.base = {k: configured[f"NODE1_{k}"] for k in TWIN_KEYS}
        self.running = {node: {k: configured[f"{node.upper()}_{k}"] for k in TWIN_KEYS} for node in SLOTS}

    def wanted(self, build_: Build) -> dict[str, str]:
        return {**self.base, **build_.node}

    def place(self, assignment: dict[str, Build], fresh: bool = False) -> bool:
        """Each slot's node with its build's settings; True when they were re-created. When one slot's node must
        be, both are, and with `fresh` (a duet's start) always: a JVM just started is slower for minutes
        (compiling, sizing its heap), and two slots of different ages would measure that."""
        wanted = {node: self.wanted(build_) for node, build_ in assignment.items()}
        if not fresh and all(wanted[node] == self.running[node] for node in assignment):
            return False
        if not fresh and self._quotas_alone(wanted):
            return False
        for node, build_ in assignment.items():
            say(f"duet: {node} re-created for build {build_.name} "
                f"({', '.join(f'{k}={v}' for k, v in wanted[node].items())})")
        self._recreate(wanted)
        return True

    def _recreate(self, wanted: dict[str, dict[str, str]]) -> None:
        """The nodes re-created at once with their settings (together where the backend can)."""
        self.recreate(tuple(wanted), {f"{node.upper()}_{k}": v for node, want in wanted.items()
                                      for k, v in want.items()})
        self.running.update(wanted)

    def _quotas_alone(self, wanted: dict[str, dict[str, str]]) -> bool:
        """Where only the CPU quotas differ, each changed on the running node; False (nothing changed) where the
        backend cannot."""
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
            own = {k: self.configured[f"{node.upper()}_{k}"] for k in TWIN_KEYS}
            if self.running[node] != own and not self._quotas_alone({node: own}):
                say(f"duet: {node} back to the cluster's settings")
                back[node] = own
        if back:
            self._recreate(back)
