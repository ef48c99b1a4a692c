"""What the user named, resolved once per command: only that counts.

A setting comes from four places, each over the one before it:
  1. a settings file the user names (SETTINGS_FILE=path: KEY=VALUE lines, # comments),
  2. an environment variable spelt with the prefix, CAPBENCH_USERS=5,
  3. make's command line (make hands it down in MAKEFLAGS: capbench/commands/setting_names.py),
  4. the command's own KEY=VALUE words.
A variable that merely exists in the shell (USERS=5, exported for another tool) changes nothing: every setting's
plain name is taken out of the environment the command and the processes it starts run in, then what the user
named is put back, under both spellings so that resolving that environment again gives the same (the command
restarts itself in it once: capbench/commands/cli.py). A name that is not a setting is refused, each one, with the
closest known names, before anything starts.

Variables of the tools around capbench keep their own spelling and are read from the environment as they are
(FROM_THE_ENVIRONMENT): they say where things are, not what to measure."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

from capbench.commands import setting_names

PREFIX = "CAPBENCH_"
FILE_KEY = "SETTINGS_FILE"
# Read from the environment as spelt: where the checkout is, Compose's project, Vagrant's names.
FROM_THE_ENVIRONMENT = frozenset({"CAPBENCH_HOME", "COMPOSE_PROJECT_NAME", "VAGRANT_VM_PREFIX",
                                  "VAGRANT_LIBVIRT_DRIVER"})
# What capbench's own scripts and tests pass between themselves under the prefix: not settings, not refused.
# Where each named setting came from, carried into the environment the command restarts in (it would otherwise
# see them all as CAPBENCH_ variables).
SOURCES = "CAPBENCH_NAMED_FROM"
INTERNAL = frozenset({SOURCES, "CAPBENCH_CLAIMS", "CAPBENCH_START_S", "CAPBENCH_NODE_IMAGE", "CAPBENCH_NODES_LIST",
                      "CAPBENCH_MONITORED", "CAPBENCH_MONITORED_LIST", "CAPBENCH_VAGRANT_EMULATED",
                      # the cluster's settings resolved once for the command (capbench/hosts/cluster_settings.py)
                      "CAPBENCH_RESOLVED", "CAPBENCH_RESOLVED_ADDED", "CAPBENCH_SETTINGS_TRACE"})
FILE_LINE = re.compile(r"^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$")


class NamedWrongly(ValueError):
    """Every problem with what the user named, one line each."""

    def __init__(self, lines: list[str]):
        super().__init__("\n".join(lines))
        self.lines = lines


@dataclass(frozen=True)
class Configuration:
    named: Mapping[str, str]    # each setting the user named (and each variable of FROM_THE_ENVIRONMENT), its value
    source: Mapping[str, str]   # each setting the user named, where: "the command", "make's command line", ...
    environ: Mapping[str, str]  # the environment the command and every process it starts run in

    def with_setting(self, key: str, value: str, source: str) -> Configuration:
        """This configuration with one more setting (a choice the command makes once for all it starts: BACKEND)."""
        named, sources = {**self.named, key: value}, {**self.source, key: source}
        return Configuration(MappingProxyType(named), MappingProxyType(sources),
                             MappingProxyType(children_environment(self.environ, named, sources)))


def is_setting(name: str) -> bool:
    return name not in FROM_THE_ENVIRONMENT and setting_names.known(name)


def settings_file(path_text: str) -> tuple[dict[str, str], dict[str, str], list[str]]:
    """(settings, where each is, problems) of a KEY=VALUE file; a value may be quoted once, as in an env file."""
    path = Path(path_text).expanduser()
    if not path.is_file():
        return {}, {}, [f"{FILE_KEY}='{path_text}' is not a file: give the path of a file of KEY=VALUE lines"]
    settings, where, problems = {}, {}, []
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        at = f"{path_text}:{number}"
        if not (match := FILE_LINE.match(line)):
            problems.append(f"{at}: '{line}' is not KEY=VALUE")
            continue
        key, value = match[1], match[2].strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        if key == FILE_KEY:
            problems.append(f"{at}: a settings file cannot name another ({FILE_KEY})")
        elif not is_setting(key):
            problems.append(f"{at}: {setting_names.refusal(key)}")
        else:
            settings[key], where[key] = value, at
    return settings, where, problems


def from_the_environment(environ: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """The CAPBENCH_ variables that name settings; an unknown one refused (CAPBENCH_STEPS_S)."""
    settings, problems = {}, []
    for name, value in environ.items():
        if not name.startswith(PREFIX) or name in FROM_THE_ENVIRONMENT or name in INTERNAL:
            continue
        key = name.removeprefix(PREFIX)
        if is_setting(key):
            settings[key] = value
        else:
            problems.append(f"{name}: {setting_names.refusal(key)}")
    return settings, problems


def resolve(words: Mapping[str, str], environ: Mapping[str, str]) -> Configuration:
    """The command's configuration from its words and the environment it was started in; NamedWrongly with a line
    for each name that is not a setting, wherever it was given."""
    prefixed, problems = from_the_environment(environ)
    make_line = setting_names.make_line(environ.get("MAKEFLAGS"))
    problems += [setting_names.refusal(k) for k in dict.fromkeys([*make_line, *words]) if not setting_names.known(k)]
    layers = [(prefixed, "the environment (CAPBENCH_)"), (make_line, "make's command line"), (words, "the command")]
    named, source = {}, {}
    try:
        carried = json.loads(environ.get(SOURCES) or "{}")
    except ValueError:
        carried = {}
    file_path = next((layer[FILE_KEY] for layer, _ in reversed(layers) if layer.get(FILE_KEY)), None)
    if file_path:
        from_file, where, file_problems = settings_file(file_path)
        named.update(from_file)
        source.update(where)
        problems += file_problems
    for layer, where in layers:
        for key, value in layer.items():
            if setting_names.known(key):
                named[key], source[key] = value, (carried.get(key, where) if layer is prefixed else where)
    if problems:
        raise NamedWrongly(problems)
    return Configuration(MappingProxyType(named), MappingProxyType(source),
                         MappingProxyType(children_environment(environ, named, source)))


def children_environment(environ: Mapping[str, str], named: Mapping[str, str],
                         source: Mapping[str, str]) -> dict[str, str]:
    """The environment without any setting the user did not name, with those they did under both spellings (and
    where each came from)."""
    kept = {k: v for k, v in environ.items() if k != SOURCES and not is_setting(k)
            and not (k.startswith(PREFIX) and k not in INTERNAL and k not in FROM_THE_ENVIRONMENT)}
    twins = {PREFIX + k: v for k, v in named.items() if is_setting(k)}
    carried = {SOURCES: json.dumps({k: source[k] for k in named if is_setting(k)}, sort_keys=True)} if twins else {}
    return {**kept, **named, **twins, **carried}
