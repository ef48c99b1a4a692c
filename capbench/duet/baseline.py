"""The build a gate's baseline stands for, as a duet's words (capbench/duet/builds.py), and the build make gate measures
beside it.

make baseline keeps it in the mark (capbench/rundata/history.py's BaselineMark.build): the accepted run's build as every
word a duet's build may set (the Grinder's VARIANT, the connector's and pool's settings, node1's HEAP and GC: the
slots are node1's twins) and its application's WAR or executable JAR, copied into results/builds/ (a path says nothing of what the
file held at the time). An accepted duet run stands for its candidate, B. make gate, a duet by default, runs the
last build kept as A beside the build as configured now as B, naming only the words in which they differ."""
from __future__ import annotations

import shutil
from pathlib import Path

from capbench.duet.builds import APP_KEYS, IMAGE, TUNABLE_KEYS, app_key, parse_words
from capbench.duet.findings import DuetFindings
from capbench.hosts.cluster_settings import war_sha256
from capbench.rundata import jsonl
from capbench.rundata.history import BaselineMark
from capbench.rundata.layout import RunPaths, results_dir
from capbench.rundata.run import RunRecord

NODE_BUILD_KEYS = ("HEAP", "GC")  # a run's build settings of node1 that are a slot's build words
SHORT_SHA = 16  # the digits of an application's sha256 its node image is tagged with (cluster/app.sh build)


class BuildNotKept(ValueError):
    """The accepted run's build cannot be kept for a duet (its WAR or JAR is gone or changed since the run)."""


def builds_dir() -> Path:
    return results_dir() / "builds"


def words_of(settings: dict, cluster: dict[str, str]) -> dict[str, str]:
    """The duet words of a build from a run's (or this checkout's) bench and cluster settings, without its
    application file.
    A setting left empty (Tomcat's own default) is no word: a slot cannot be given one of its own."""
    words = {"VARIANT": str(settings["variant"])} if settings.get("variant") else {}
    if settings.get("work_pct", 100) != 100:
        words["WORK_PCT"] = str(settings["work_pct"])
    words.update({key: cluster[key] for key in TUNABLE_KEYS if cluster.get(key)})
    words.update({key: cluster[f"NODE1_{key}"] for key in NODE_BUILD_KEYS if f"NODE1_{key}" in cluster})
    return words


def keep_app(key: str, file: Path, sha256: str) -> str:
    """The application file (a WAR or JAR, by its word `key`) copied into results/builds/ under its sha256 (once),
    named .war or .jar whatever its own name; its path there."""
    kept = builds_dir() / f"{sha256[:SHORT_SHA]}.{key.lower()}"
    if not kept.is_file():
        kept.parent.mkdir(parents=True, exist_ok=True)
        partial = kept.with_name(kept.name + ".tmp")
        shutil.copyfile(file, partial)
        partial.replace(kept)
    return str(kept)


def _file_as_run(key: str, path: str, sha_prefix: str, run_id: str) -> tuple[Path, str]:
    """The WAR or JAR at `path` and its sha256, when it still holds what the run deployed (its sha256 starts with
    `sha_prefix`)."""
    file = Path(path)
    if len(sha_prefix) < SHORT_SHA:
        raise BuildNotKept(f"run {run_id} did not record what its {key} {path} held (no sha256)")
    if not file.is_file():
        raise BuildNotKept(f"run {run_id} ran the {key} {path}, which is no longer there")
    sha = war_sha256(str(file))
    if not sha.startswith(sha_prefix):
        raise BuildNotKept(f"the {key} {path} changed since run {run_id} deployed it (sha256 {sha_prefix[:16]}…)")
    return file, sha


def accepted_build(folder: Path) -> dict[str, str]:
    """The build of the run in `folder`, as duet words with its WAR or JAR kept; BuildNotKept saying why it
    cannot be."""
    run = RunRecord.read(RunPaths(folder).run_json)
    words = words_of(run.settings, run.cluster_settings)
    candidate = parse_words(str(run.settings.get("b") or "")) if run.kind == "duet" else {}
    words.update({key: value for key, value in candidate.items() if key not in APP_KEYS})
    app = None
    own = next((key for key in APP_KEYS if key in candidate), None)
    if own:  # its node image is tagged with the start of the file's sha256 (cluster/app.sh build)
        duet = DuetFindings.in_summary(jsonl.read_json(RunPaths(folder).summary) or {})
        image = duet.builds[1].node.get(IMAGE, "") if len(duet.builds) > 1 else ""
        app = (own, candidate[own], image.rpartition(":")[2])
    elif key := app_key(run.cluster_settings):
        sha = run.cluster_settings.get("APP_SHA256")
        if not sha:
            raise BuildNotKept(f"run {run.run_id} did not record its {key}'s sha256 (a run from before it was)")
        app = (key, run.cluster_settings[APP_KEYS[key]], sha)
    if app:
        key, path, sha = app
        words[key] = keep_app(key, *_file_as_run(key, path, sha, run.run_id))
    return words


def baseline_words(mark: BaselineMark, settings: dict, cluster: dict[str, str]) -> dict[str, str]:
    """Build A's words for a duet gate: the mark's build where it differs from this one (a WAR or JAR that
    differs in its content); {} when it is this build. BuildNotKept when its kept file is gone."""
    now = words_of(settings, cluster)
    differ = {key: value for key, value in mark.build.items() if key not in APP_KEYS and now.get(key) != value}
    for key, setting in APP_KEYS.items():
        kept = mark.build.get(key)
        if not kept:
            continue
        if not Path(kept).is_file():
            raise BuildNotKept(f"the {key} kept for the baseline run {mark.run_id} is gone ({kept}): accept a "
                               "baseline again (make baseline), or name the builds (DUET_A, DUET_B)")
        if not cluster.get(setting) or war_sha256(kept) != war_sha256(cluster[setting]):
            differ = {key: kept, **differ}
    return differ


def chosen_mark(marks: list[BaselineMark], wanted: str | None, app: str | None) -> BaselineMark | None:
    """The mark whose build a duet gate runs: BASELINE's (a tag, else a run id's prefix), else the last one kept
    for a cluster like this one (whose application is a WAR, a JAR, or the Grinder: `app`, app_key's)."""
    kept = [m for m in marks if m.build]
    if wanted:
        chosen = [m for m in kept if m.tag == wanted] or [m for m in kept if m.run_id.startswith(wanted)]
    else:
        chosen = [m for m in kept if next((key for key in APP_KEYS if key in m.build), None) == app]
    return chosen[-1] if chosen else None
