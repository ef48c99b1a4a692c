"""capbench COMMAND [KEY=VALUE ...]: the testbed's one way in; the make targets call it.

Settings are KEY=VALUE words, as on a make line; or make's line itself, CAPBENCH_KEY variables and a
SETTINGS_FILE (capbench/commands/configuration.py): a plain variable of the shell changes nothing. A command that
measures checks every setting first, then builds what the hosts run (make's file rules), brings the cluster up and
runs. The exit status is the command's own, unchanged (make turns every failure into 2): 0 done, 1 failed, 2 bad
input or the cluster not up, 130 interrupted; `capbench gate`: 3 capacity fell, 4 cannot tell, 5 a p99 threshold
broken.

The command restarts itself once in the environment its configuration gives (entry()), before it runs
anything: the run, and every process it starts, see what the user named and nothing else, and the cluster's
settings resolved once (capbench/hosts/cluster_settings.py's resolved_environment), which the scripts it runs
find marked and do not resolve again."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

from capbench.checkout import ROOT, problem as no_checkout
from capbench.hosts.cluster_settings import resolved_environment, unresolved

SETTING = re.compile(r"^([A-Z][A-Z0-9_]*)=(.*)$", re.DOTALL)
BAD_INPUT = 2

# name: (what it does, the arguments besides KEY=VALUE words, its flags)
COMMANDS = {
    "bench": ("check, build, bring the cluster up and run a bench kind (make bench-KIND)", "KIND", ("--check-only",)),
    "tune": ("capacity per setting of a sweep (make tune)", "", ("--check-only",)),
    "gate": ("this build against the accepted baseline, exit 0 holds, 3 fell, 4 cannot tell, 5 p99 over (make gate)",
             "", ("--check-only", "--up-only", "--aa", "--calibrate")),
    "report": ("rebuild a run's report.html and figures from its folder (make report)", "[RUN]", ()),
    "compare": ("capacity change between two runs, with its noise band (make compare)", "[A [B]]", ()),
    "history": ("capacity across runs: a table and results/history.png (make history)", "", ()),
    "baseline": ("accept a run as the gate's baseline, its build kept (make baseline)", "[RUN]", ("--tag",)),
    "status": ("one row per host: state, health, CPU quota, memory, heap, balancer status (make status)", "", ()),
    "up": ("bring the cluster to the current settings, wait until healthy (make up)", "", ()),
    "down": ("stop the cluster; results/ and the images stay (make down)", "", ()),
    "docs": ("write docs/reference/ from the code's own tables (make docs)", "", ()),
}
FLAG_HELP = {
    "--check-only": "check the settings, run nothing",
    "--up-only": "check, build and bring the cluster up, measure nothing (a pipeline's step before the gate)",
    "--aa": "an A/A duet: DUET_A against itself, how far two equal builds look apart here (make gate-aa)",
    "--calibrate": "A/A duets and known 5 % drops: what a duet gate can call here (make gate-calibrate)",
    "--tag": "--tag NAME: a name for the accepted baseline, for BASELINE= to find",
}
# The commands that ask the cluster: they choose a backend and resolve the cluster's settings once.
CLUSTER_COMMANDS = ("bench", "tune", "gate", "status", "up", "down")
# The words a command reads from its KEY=VALUE words as its arguments, as make passes them.
ARGUMENT_KEYS = {"report": ("RUN",), "compare": ("A", "B"), "baseline": ("RUN",)}


class UsageError(ValueError):
    pass


def usage() -> str:
    lines = [__doc__.split("\n\n")[0], "", "commands:"]
    lines += [f"  {name:<9} {what}" for name, (what, _, _) in COMMANDS.items()]
    lines += ["", "capbench COMMAND --help: its arguments and every setting it reads, with defaults and rules.",
              "The manual: docs/README.md; every setting: docs/reference/settings.md."]
    return "\n".join(lines)


def split_words(words: list[str]) -> tuple[dict[str, str], list[str], list[str]]:
    """KEY=VALUE settings, the arguments and the flags, in the order given."""
    settings, arguments, flags = {}, [], []
    words = list(words)
    while words:
        word = words.pop(0)
        if word == "--tag" and words:  # its value is the next word
            word = f"--tag={words.pop(0)}"
        if match := SETTING.match(word):
            settings[match[1]] = match[2]
        elif word.startswith("-"):
            flags.append(word)
        elif "=" in word:
            raise UsageError(f"'{word}' is not a setting: give KEY=VALUE with an upper-case KEY, e.g. STEP_S=10")
        else:
            arguments.append(word)
    return settings, arguments, flags


def setting_lines(title: str, cls: type) -> list[str]:
    """A settings class's keys for --help: default, what is allowed, and what each does."""
    from capbench.settings.fields import declared

    lines = ["", f"{title}:"]
    for s in declared(cls):
        lines.append(f"  {s.key}={s.default}  ({s.rule.allowed}"
                     + (f"; {s.quick_key}={s.quick} under QUICK=1" if s.quick is not None else "") + ")")
        lines += textwrap.wrap(s.help, 110, initial_indent="      ", subsequent_indent="      ")
    return lines


def command_help(name: str, arguments: list[str]) -> str:
    what, args, flags = COMMANDS[name]
    lines = [f"usage: capbench {name} {args + ' ' if args else ''}[KEY=VALUE ...] "
             + " ".join(f"[{flag}]" for flag in flags), "", what]
    lines += [f"  {flag:<13} {FLAG_HELP[flag]}" for flag in flags]
    if name in ("bench", "tune", "gate"):
        from capbench.kinds import KINDS
        from capbench.settings.bench import BenchSettings, GateKeys

        if name == "bench":
            lines += ["", "kinds (capbench bench KIND --help: its own settings too):"]
            lines += [f"  {kind.name:<10} {kind.description}" for kind in KINDS.values()]
            kind = KINDS.get(arguments[0]) if arguments else None
            if kind is not None and kind.own_settings is not None:
                lines += setting_lines(f"bench-{kind.name}'s own settings", kind.own_settings)
        elif name == "tune":
            from capbench.commands.docs_reference import VARIABLES
            from capbench.commands.sweep import PARAMETERS

            lines += ["", "the sweep: a parameter given a comma-separated list of values, or SWEEP=file.yaml:"]
            lines += [f"  {p:<12} sets {s}" for p, s in PARAMETERS.items()]
            lines += [f"  {key:<12} {VARIABLES[key]}" for key in ("SWEEP", "TUNE_TARGET", "TUNE_ROUNDS", "RESUME")]
        else:
            lines += setting_lines("the gate's settings", GateKeys)
            lines += setting_lines("the duet's settings (GATE_MODE=duet)", KINDS["duet"].own_settings)
        lines += setting_lines("the settings every bench shares", BenchSettings)
        lines += ["", "The cluster's settings (PROFILE=, TOMCAT_*, NODES=, ...): docs/reference/settings.md."]
    elif name in ARGUMENT_KEYS:
        lines += ["", "The arguments may also be given as " + ", ".join(f"{k}=" for k in ARGUMENT_KEYS[name])
                  + " words, as with make."]
    return "\n".join(lines)


def built_and_up() -> int:
    """What the hosts run built (a no-op when it is) and the cluster brought to the settings (a no-op when it is)."""
    from capbench.hosts.__main__ import main as hosts
    from capbench.hosts.backend import backend_class

    target = backend_class().built
    done = subprocess.run(["make", "--no-print-directory", "--silent", target], cwd=ROOT)
    if done.returncode != 0:
        print(f"capbench: make {target} failed (exit {done.returncode})", file=sys.stderr)
        return 1
    return hosts(["up"])


def checked_then_run(run, flags: list[str]) -> int:
    """run(flags) with --check-only first; then built and up; then run(flags) for real."""
    if "--check-only" in flags:
        return run(flags)
    code = run([*flags, "--check-only"])
    if code != 0:
        return code
    code = built_and_up()
    if code != 0 or "--up-only" in flags:
        return code
    return run(flags)


def dispatch(name: str, arguments: list[str], flags: list[str], config) -> int:
    if name == "bench":
        from capbench.commands import bench

        if len(arguments) != 1:
            raise UsageError("capbench bench takes one KIND, e.g. capbench bench cluster (--help lists them)")

        # Checked once: the settings read, the check and the run share them.
        ready = bench.prepared(arguments[0], dict(config.environ))
        if isinstance(ready, int):  # refused before any make or cluster is asked
            return ready
        kind, settings, driver, wrk2_local = ready
        return checked_then_run(lambda f: bench.run(kind, settings, driver, wrk2_local, f"make bench-{kind.name}",
                                                    check_only="--check-only" in f)[0], flags)
    if name == "tune":
        from capbench.commands import tune

        ready = tune.prepared()  # checked once: the check pass and the run share it
        return ready if isinstance(ready, int) else checked_then_run(lambda f: ready("--check-only" in f), flags)
    if name == "gate":
        from capbench.commands import gate

        ready = gate.prepared("--aa" in flags, "--calibrate" in flags)
        return ready if isinstance(ready, int) else checked_then_run(lambda f: ready("--check-only" in f), flags)
    if name in ("report", "compare", "history", "baseline"):
        from capbench.commands import report

        verb = "build" if name == "report" else name
        if name == "report" and not arguments:
            arguments = [""]  # refused by report's own check, naming RUN, as make report without it is
        tag = [f.split("=", 1)[1] for f in flags if f.startswith("--tag=")] or \
            ([config.named["TAG"]] if name == "baseline" and config.named.get("TAG") else [])
        return report.run([verb, *arguments, *(["--tag", tag[0]] if tag else [])])
    if name in ("status", "up", "down"):
        from capbench.hosts.__main__ import main as hosts

        return hosts([name])
    from capbench.commands import docs_reference

    return docs_reference.main()


def configured(words: dict[str, str], environ):
    """The command's configuration (capbench/commands/configuration.py); UsageError naming every wrong name."""
    from capbench.commands.configuration import NamedWrongly, resolve

    try:
        return resolve(words, environ)
    except NamedWrongly as wrong:
        raise UsageError("\ncapbench: ".join(wrong.lines)) from None


def named_line(config) -> str:
    """What the user named and where, for --check-only: what a shell's variable did not change is not in it."""
    given = [f"{key}={value} ({config.source[key]})" for key, value in config.named.items()]
    return "the settings named: " + ", ".join(given) if given else "no setting named: every one at its default"


def main(argv: list[str] | None = None, restart: bool = False) -> int:
    """The command; with restart, first started again in its configuration's environment when this one differs
    (a setting not named, a CAPBENCH_ twin missing), with the cluster's settings resolved into it for a command
    that asks the cluster: once, since that environment resolves to itself."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(usage())
        return 0 if argv else BAD_INPUT
    name, words = argv[0], argv[1:]
    try:
        if name not in COMMANDS:
            raise UsageError(f"'{name}' is not a command: use one of {', '.join(COMMANDS)} (capbench --help)")
        if (missing := no_checkout(os.environ.get("CAPBENCH_HOME"))) and not {"-h", "--help"} & set(words):
            raise UsageError(missing)
        settings, arguments, flags = split_words(words)
        # What the user named, from the environment as it was before the cluster's settings were resolved into it.
        started_in = unresolved(os.environ)
        config = configured(settings, started_in)
        arguments += [config.named[key] for key in ARGUMENT_KEYS.get(name, ())[len(arguments):]
                      if config.named.get(key)]
        if "-h" in flags or "--help" in flags:
            print(command_help(name, arguments))
            return 0
        most = {"bench": 1, "report": 1, "compare": 2, "baseline": 1}.get(name, 0)
        if len(arguments) > most:
            raise UsageError(f"capbench {name}: '{arguments[most]}' is neither a setting (KEY=VALUE) nor one of its "
                             f"arguments ({COMMANDS[name][1] or 'it takes none'})")
        allowed = COMMANDS[name][2]
        if unknown := [f for f in flags if f not in allowed and not (name == "baseline" and f.startswith("--tag="))]:
            raise UsageError(f"capbench {name}: no option {unknown[0]}; it takes "
                             + (", ".join(allowed) if allowed else "none") + " and KEY=VALUE settings")
        if name in CLUSTER_COMMANDS:
            from capbench.hosts.backend import BackendError, detect

            try:  # one choice for every process this command starts, as make's
                chosen = detect(config.named.get("BACKEND", ""))
            except BackendError as problem:
                raise UsageError(str(problem)) from None
            if chosen != config.named.get("BACKEND"):
                config = config.with_setting("BACKEND", chosen, "chosen: the one running, else the default")
        if restart:
            environ = dict(config.environ)
            if started_in is not os.environ and environ == dict(started_in):
                environ = dict(os.environ)  # restarted: the cluster's settings resolved already, for these
            elif name in CLUSTER_COMMANDS:  # resolved once, for every process the command starts
                environ = resolved_environment(environ) or environ
            if environ != dict(os.environ):
                os.execve(sys.executable, [sys.executable, "-m", "capbench", *argv], environ)
        code = dispatch(name, arguments, flags, config)
        if code == 0 and "--check-only" in flags:
            print(f"capbench: checked; {named_line(config)}")
        return code
    except UsageError as problem:
        print(f"capbench: {problem}", file=sys.stderr)
        return BAD_INPUT
    except KeyboardInterrupt:
        return 130


def entry() -> None:
    """The console script (and python -m capbench)."""
    sys.exit(main(restart=True))


if __name__ == "__main__":
    entry()
