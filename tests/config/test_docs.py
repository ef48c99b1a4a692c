"""The manual stays true: docs/reference/ is what `make docs` writes from the code today; every make target,
setting and record field that README.md and docs/ name exists; every one that exists is described; every link
between the pages leads somewhere; every path in backticks, in a page, a README or a docstring, is in the tree."""
from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import pytest

from capbench.commands import docs_records, docs_reference
from capbench.duet.builds import BUILD_KEYS
from capbench.kinds import KINDS
from capbench.settings.bench import BenchSettings, GateKeys
from capbench.settings.fields import declared
from conftest import ROOT

PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
# Every folder's README, for its links: the pages above, and those beside the code (capbench/hosts/README.md, ...).
FOLDER_READMES = sorted(p for p in ROOT.glob("*/**/README.md")
                        if p.parts[len(ROOT.parts)] not in (".venv", ".capbench", "results", "docs", ".git"))
CODE = ("*.py", "*.sh", "*.env", "*.yaml", "*.yml", "*.cfg", "*.xml", "*.java", "Makefile", "Vagrantfile", "*.lua")
# Capitalised words in backticks that are not ours: HTTP methods and headers, signals, states, other tools' variables.
NOT_SETTINGS = {"GET", "POST", "HEAD", "PUT", "PATCH", "DELETE", "SIGKILL", "SIGTERM", "SIGSTOP", "SIGCONT", "JSESSIONID", "DOWN", "UP", "MAINT",
                "BLOCKED", "WAITING", "RUNNABLE", "NOTE", "PASS", "FAIL", "FELL", "DEGRADED", "README", "CPU", "GC", "E", "N", "X",
                "PCP", "KILL", "PARTIAL", "KEY", "VALUE", "UTC", "META", "WEB", "BOOT", "DOCKER_HOST",
                "ROOT",  # Tomcat's name of the context at /
                "NET_ADMIN", "CONFIG_NET_SCH_NETEM",  # a Linux capability, a kernel option
                "APP_SHA256", "APP_MIGRATED_SHA256",  # run.json's names of what the application's WARs held
                "SMOKE", "RUN", "TESTBED", "HELD", "SHORT",  # the console's marks: SMOKE RUN, TESTBED-BOUND, HELD SHORT
                "CAPBENCH_SETTINGS_TRACE"}  # cluster/load-settings.sh's count of its resolutions, for the tests


def settings_classes() -> list[type]:
    return [BenchSettings, GateKeys, *(k.own_settings for k in KINDS.values() if k.own_settings is not None)]


def known_settings() -> set[str]:
    keys = {s.key for cls in settings_classes() for s in declared(cls)}
    keys |= {s.quick_key for cls in settings_classes() for s in declared(cls) if s.quick is not None}
    for name in docs_reference.ENV_FILES:
        keys |= {k for k, _, _ in docs_reference.env_file_settings(ROOT / name)}
    for profile in docs_reference.PROFILES.glob("*.env"):
        keys |= {k for k, _, _ in docs_reference.env_file_settings(profile)}
    # A duet's build words (DUET_B="CPUS=0.43"): what a user types, declared in capbench/duet/builds.py.
    return keys | set(docs_reference.VARIABLES) | set(docs_reference.PARAMETERS) | set(BUILD_KEYS)


def backticked(text: str) -> list[str]:
    return re.findall(r"`([^`\n]+)`", text)


def test_the_reference_is_what_make_docs_writes_today():
    for name, page in docs_reference.PAGES.items():
        path = docs_reference.REFERENCE / name
        assert path.is_file() and path.read_text() == page(), f"{path.relative_to(ROOT)} is stale: run make docs"


def test_every_make_target_named_exists():
    targets = {t for t, _ in docs_reference.make_targets()}
    missing = set()
    for page in PAGES:
        for quoted in backticked(page.read_text()):
            # make bench-KIND (or bench-<kind>) stands for every kind
            named = re.findall(r"\bmake ([a-z][a-z0-9-]*[a-z0-9])\b(?![-<])", quoted)
            missing |= {f"{page.relative_to(ROOT)}: make {t}" for t in named if t not in targets}
    assert not missing, sorted(missing)


def test_every_setting_named_exists():
    known, missing = known_settings(), set()
    for page in PAGES:
        for quoted in backticked(page.read_text()):
            for word in re.findall(r"(?<![\w./-])([A-Z][A-Z0-9_]*[A-Z0-9])(?==|\b)", quoted):
                spelt = word if word in known else word.removeprefix("CAPBENCH_")  # CAPBENCH_STEP_S names STEP_S
                if spelt not in known and word not in NOT_SETTINGS and not re.fullmatch(r"NODE[0-9]+_[A-Z]+", word):
                    missing.add(f"{page.relative_to(ROOT)}: {word}")
    assert not missing, sorted(missing)


def test_every_setting_target_and_variable_is_described():
    undescribed = [s.key for cls in settings_classes() for s in declared(cls) if not s.help.strip()]
    for name in docs_reference.ENV_FILES:
        undescribed += [k for k, _, h in docs_reference.env_file_settings(ROOT / name) if not h.strip()]
    undescribed += [k for k, h in docs_reference.VARIABLES.items() if not h.strip()]
    phony = set(re.search(r"^\.PHONY:((?:.*\\\n)*.*)$", (ROOT / "Makefile").read_text(), re.MULTILINE)[1]
                .replace("\\\n", " ").split())
    described = {t for t, h in docs_reference.make_targets() if h.strip()}
    undescribed += [f"make {t}" for t in sorted(phony - described)]
    assert not undescribed, undescribed


def source_words() -> set[str]:
    words = set()
    for pattern in CODE:
        for path in ROOT.rglob(pattern):
            if ".venv" not in path.parts and ".git" not in path.parts and "node_modules" not in path.parts:
                words |= set(re.findall(r"[a-z_][a-z0-9_]*", path.read_text(errors="replace")))
    return words


def test_every_variable_the_reference_lists_is_read_by_the_code():
    read_by = [ROOT / "Makefile", ROOT / "Vagrantfile", *ROOT.glob("*/*.py"), *ROOT.glob("*/*.sh"),
               *ROOT.glob("*/*/*.sh"), *ROOT.glob("*/*/*.py")]
    words = " ".join(path.read_text() for path in read_by if ".venv" not in path.parts)
    unread = [k for k in docs_reference.VARIABLES if not re.search(rf"\b{k}\b", words)]
    unread += [p for p in docs_reference.PARAMETERS if not re.search(rf"\b{p}\b", words)]
    assert not unread, unread


def test_every_record_field_named_exists():
    fields = {f.name for classes in docs_records.FILES.values() for cls in classes for f in dataclasses.fields(cls)}
    words, missing = source_words(), set()
    for page in PAGES:
        for quoted in backticked(page.read_text()):
            for word in re.fullmatch(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+", quoted) and [quoted] or []:
                if word not in fields and word not in words:
                    missing.add(f"{page.relative_to(ROOT)}: {word}")
    assert not missing, sorted(missing)


def test_every_record_field_is_described():
    undescribed = [f"{cls.__name__}.{name}" for classes in docs_records.FILES.values() for cls in classes
                   for name, _, doc in docs_records.record_fields(cls) if not doc.strip()]
    assert not undescribed, undescribed


@pytest.mark.parametrize("page", PAGES + FOLDER_READMES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_leads_somewhere(page):
    broken = []
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
        if not re.match(r"[a-z]+://", target) and not (page.parent / target).exists():
            broken.append(target)
    assert not broken, broken


# Where a backticked path may point outside the checkout: what runs and tools write, never part of the tree.
WRITTEN = ("results/", ".capbench/", ".venv/", "target/", "/")
OURS_SKIPPED = {".git", ".venv", ".capbench", "results", "node_modules", "target", "__pycache__"}
SOURCE_NAME = re.compile(r"[\w.-]+\.(?:py|sh|lua|java)")
PATH = re.compile(r"(?<![\w./<>{}$@:~-])((?:\.\.?/)*[\w.-]+(?:/[\w.-]+)+/?|[\w.-]+\.(?:py|sh|lua|java))(?![\w/<>{}*@-])")


def tree_files() -> list:
    return [p for p in ROOT.rglob("*") if p.is_file() and not OURS_SKIPPED & set(p.relative_to(ROOT).parts)]


def backticked_in_docstrings(path) -> list[str]:


    spans = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            spans += backticked(ast.get_docstring(node) or "")
    return spans


def test_every_backticked_path_exists():
    """A path in backticks, in a page, a README or a docstring, names a file or folder of this tree: from the
    root, from the text's own folder, or as the end of one of the tree's paths (`drivers/oha.py` in load's
    files); a bare file name of source (`runner.py`) names a file somewhere in the tree. Run output, tools'
    folders and absolute paths on the hosts are not the tree's; a word whose first part is not a folder of the
    tree (`B/A`, `WEB-INF/lib`, `capacity/s`) is not a path."""
    files = tree_files()
    relative = [p.relative_to(ROOT).as_posix() for p in files]
    names = {p.name for p in files}
    folders = {parent.as_posix() for r in relative for parent in Path(r).parents}
    top = {r.split("/")[0] for r in relative}

    def exists(token: str, base) -> bool:
        token = token.rstrip("/")
        for start in (ROOT, base):
            resolved = (start / token).resolve()
            if resolved.is_relative_to(ROOT) and resolved.exists():
                return True
        if "/" not in token:
            return token in names
        return any(r.endswith("/" + token) or f"/{token}/" in f"/{r}" for r in relative) or token in folders

    texts = [p for p in files if p.suffix == ".md"] + [p for p in files if p.suffix == ".py"]
    missing = []
    for text in texts:
        spans = backticked(text.read_text()) if text.suffix == ".md" else backticked_in_docstrings(text)
        for span in spans:
            if "://" in span:
                continue
            for token in PATH.findall(span):
                first = token.split("/")[0]
                if token.startswith(WRITTEN) or ("/" in token and first not in top and first not in ("..", ".")):
                    continue
                if "/" not in token and not SOURCE_NAME.fullmatch(token):
                    continue
                if not exists(token, text.parent):
                    missing.append(f"{text.relative_to(ROOT)}: {token}")
    assert not missing, missing
