"""Every setting name capbench knows, so that a name it does not know is refused before anything starts, with
the closest known ones: `STEPS_S=10` would otherwise run another experiment than the one asked for, silently.

The names are the code's own tables: the bench's, the gate's and each kind's declared settings (and their QUICK_
twins), the cluster's files (tomcat-conf/tunables.env, cluster/app.env, cluster/topology.env, the profiles), each
node's keys for any node count (NODE7_CPUS, a duet slot's NODE1_TOMCAT_MAX_THREADS), make tune's sweep parameters
and the other variables the commands read (docs_reference.VARIABLES).

What the user named is the command's KEY=VALUE words and, when make runs it, the variables on make's command line
(make hands them down in MAKEFLAGS, after its options and a `--`)."""
from __future__ import annotations

import difflib
import functools
import re

from capbench.checkout import ROOT
from capbench.commands.docs_reference import ENV_FILES, PROFILES, VARIABLES, env_file_settings
from capbench.commands.sweep import PARAMETERS
from capbench.kinds import KINDS
from capbench.settings.bench import BenchSettings, GateKeys
from capbench.settings.fields import declared

# The cluster's settings load-settings.sh reads beside its files (the networks' prefixes: cluster/load-settings.sh).
CLUSTER_EXTRA = ("BENCH_NET_PREFIX", "DATA_NET_PREFIX")
# A node's own keys beyond its profile fields: the image a duet's slot runs (NODE1_IMAGE: capbench/duet/builds.py).
NODE_EXTRA = ("IMAGE",)
PER_NODE = re.compile(r"^NODE([1-9][0-9]*)_([A-Z][A-Z0-9_]*)$")


@functools.cache
def _tables() -> tuple[frozenset[str], frozenset[str], int]:
    """(every name but the per-node ones, the fields a node's key may end in, the most nodes)."""
    classes = [BenchSettings, GateKeys, *(k.own_settings for k in KINDS.values() if k.own_settings is not None)]
    names = {s.key for cls in classes for s in declared(cls)}
    names |= {s.quick_key for cls in classes for s in declared(cls) if s.quick is not None}
    files = {key: value for name in ENV_FILES for key, value, _ in env_file_settings(ROOT / name)}
    names |= set(files)
    profile_keys = {key for path in PROFILES.glob("*.env") for key, _, _ in env_file_settings(path)}
    node_fields = {m[2] for key in profile_keys if (m := PER_NODE.match(key))}
    node_fields |= {key.removeprefix("NODE_") for key in profile_keys if key.startswith("NODE_")}
    tunables = {key for key, _, _ in env_file_settings(ROOT / "tomcat-conf" / "tunables.env")}
    names |= {key for key in profile_keys if not PER_NODE.match(key)}
    names |= set(PARAMETERS) | set(VARIABLES) | set(CLUSTER_EXTRA)
    return frozenset(names), frozenset(node_fields | tunables | set(NODE_EXTRA)), int(files["MAX_NODES"])


def known(name: str) -> bool:
    names, node_fields, most = _tables()
    if name in names:
        return True
    per_node = PER_NODE.match(name)
    return bool(per_node) and int(per_node[1]) <= most and per_node[2] in node_fields


def closest(name: str) -> list[str]:
    """The known names nearest to `name` (for a node's key, the first three nodes' keys stand for every node's)."""
    names, node_fields, _ = _tables()
    candidates = set(names)
    if name.startswith("NODE"):
        candidates |= {f"NODE{i}_{field}" for i in (1, 2, 3) for field in node_fields}
    return difflib.get_close_matches(name, sorted(candidates), n=2, cutoff=0.75)


def refusal(name: str) -> str:
    near = closest(name)
    hint = f"did you mean {' or '.join(near)}?" if near else \
        "capbench COMMAND --help lists a command's settings, docs/reference/settings.md every one"
    return f"{name} is not a setting: {hint}"


def unknown(names) -> list[str]:
    """One line for each name capbench does not know, in the order given."""
    return [refusal(name) for name in dict.fromkeys(names) if not known(name)]


def make_line(makeflags: str | None) -> dict[str, str]:
    """The KEY=VALUE variables on make's command line, from the MAKEFLAGS make gives its recipes (`s -- A=1 B=x\\ y`:
    its one-letter options, then after `--` each variable, a space inside a value escaped with a backslash)."""
    if not makeflags or " -- " not in f" {makeflags} ":
        return {}
    words, word, escaped = [], "", False
    for char in f" {makeflags} ".split(" -- ", 1)[1]:
        if escaped:
            word, escaped = word + char, False
        elif char == "\\":
            escaped = True
        elif char == " ":
            words, word = ([*words, word] if word else words), ""
        else:
            word += char
    words += [word] if word else []
    return dict(w.split("=", 1) for w in words if re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w))
