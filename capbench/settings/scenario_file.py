"""The user's own requests as the scenario (SCENARIO_FILE=path.yaml): the YAML file read and checked, every
problem with its line, before anything starts. docs/guides/scenario-file.md describes the format:

    success: [200, 302]          # the statuses that count as answered (default [200])
    requests:
      - path: /examples/servlets/servlet/HelloWorldExample
        weight: 3                # default 1
      - path: /examples/servlets/servlet/RequestParamExample
        method: POST             # default GET
        headers: {Content-Type: application/x-www-form-urlencoded}
        body: form.txt           # a file, relative to the scenario file

Each user (USERS, SESSION_REQUESTS, THINK_MS as for WORKLOAD=session) sends SESSION_REQUESTS requests, each
drawn by weight. The drivers turn the checked scenario into what their tool reads: oha a URLs file where each
request is written `weight` times (capbench/load/drivers/oha.py), wrk2 a Lua table for capbench.lua (capbench/load/drivers/wrk2.py)."""
from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from functools import reduce
from pathlib import Path

import yaml

from capbench.hosts.balancer_address import base_url

METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")
TOP_KEYS = ("success", "requests")
REQUEST_KEYS = ("path", "method", "headers", "body", "weight")
DEFAULT_SUCCESS = (200,)
# The oha URLs file holds each request `weight` times (after dividing the weights by their common divisor), so
# the weights are kept to sizes whose file stays small.
MAX_WEIGHT = 1000
MAX_BODY_BYTES = 1024 * 1024
# The generators set these themselves: Host names the target (the balancer or a node), Content-Length comes from
# the body, and Cookie carries the user's own cookies (wrk2 keeps them per user); a value here would contradict
# theirs.
TOOL_HEADERS = {"host": "the generator sets Host to the target (the balancer or a node)",
                "content-length": "the generator sets Content-Length from the body",
                "cookie": "wrk2 sends each user the cookies the application set for them (oha sends none)"}
# RFC 9110's token: the characters a header name may have.
HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
YAML_INT = "tag:yaml.org,2002:int"


class ScenarioError(ValueError):
    """Every problem of a scenario file, one per line."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class ScenarioRequest:
    """One entry of the scenario: what a request asks for, and how often it is drawn against the others."""
    path: str  # path and query, from the host's root
    method: str = "GET"
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes | None = None
    weight: int = 1
    line: int = 0  # where the entry starts in the file (1-based), for messages

    def differs(self, other: "ScenarioRequest") -> list[str]:
        """Which of method, headers and body differ from the other's: one oha command line sends one of each."""
        return [name for name in ("method", "headers", "body") if getattr(self, name) != getattr(other, name)]


@dataclass(frozen=True)
class UserScenario:
    name: str  # the file's name, as the records and the console show it
    sha256: str  # of the file and each body file in order: a changed body is a changed scenario
    success: tuple[int, ...]
    requests: tuple[ScenarioRequest, ...]

    def url(self, request: ScenarioRequest, host: str, port: int = 8080) -> str:
        return f"{base_url(host, port)}{request.path}"

    def weighted_urls(self, host: str, port: int = 8080) -> str:
        """Each request's URL `weight` times, weights divided by their common divisor: a tool that picks a line
        at random (oha's --urls-from-file) draws each as often as its weight says."""
        divisor = reduce(math.gcd, (r.weight for r in self.requests))
        return "".join(f"{self.url(r, host, port)}\n" * (r.weight // divisor) for r in self.requests)

    def mixed(self) -> ScenarioRequest | None:
        """The first request whose method, headers or body differ from the first request's (None: all alike)."""
        return next((r for r in self.requests[1:] if r.differs(self.requests[0])), None)


def load(path: str) -> UserScenario:
    """The scenario file read and checked; ScenarioError naming every problem, each with its line."""
    reader = _Reader(Path(path), path)
    scenario = reader.read()
    if reader.problems:
        raise ScenarioError([text for _, text in sorted(reader.problems, key=lambda found: found[0])])
    return scenario


def problems(path: str) -> list[str]:
    try:
        load(path)
    except ScenarioError as error:
        return error.problems
    return []


class _Reader:
    """Walks the file's YAML nodes (not the loaded values) so every problem can say its line."""

    def __init__(self, path: Path, shown: str):
        self.path = path
        self.shown = shown
        self.problems: list[tuple[int, str]] = []  # (line, message), said in the file's order
        self.digest = hashlib.sha256()

    def problem(self, node_or_line, text: str) -> None:
        line = node_or_line if isinstance(node_or_line, int) else node_or_line.start_mark.line + 1
        self.problems.append((line, f"SCENARIO_FILE {self.shown}:{line}: {text}"))

    def read(self) -> UserScenario | None:
        try:
            data = self.path.read_bytes()
        except OSError as error:
            self.problems.append((0, f"SCENARIO_FILE='{self.shown}' cannot be read ({error.strerror or error}): "
                                     "give the path of a scenario YAML file (docs/guides/scenario-file.md)"))
            return None
        self.digest.update(data)
        try:
            root = yaml.compose(data.decode("utf-8"), Loader=yaml.SafeLoader)
        except UnicodeDecodeError:
            self.problem(1, "the file is not UTF-8 text: a scenario is a YAML file")
            return None
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            self.problem(mark.line + 1 if mark else 1,
                         f"not YAML: {getattr(error, 'problem', None) or error}")
            return None
        if not isinstance(root, yaml.MappingNode):
            self.problem(root or 1, "the file must be a mapping with 'requests' (and optionally 'success')")
            return None
        top = self.mapping(root, TOP_KEYS, "the top level")
        success = self.success(top["success"]) if "success" in top else DEFAULT_SUCCESS
        requests = self.requests(top.get("requests"), root)
        return UserScenario(self.path.name, self.digest.hexdigest(), success, requests)

    def mapping(self, node: yaml.MappingNode, allowed: tuple[str, ...], where: str) -> dict[str, yaml.Node]:
        """The mapping's values by key; an unknown or repeated key is a problem."""
        found: dict[str, yaml.Node] = {}
        for key, value in node.value:
            name = key.value if isinstance(key, yaml.ScalarNode) else None
            if name not in allowed:
                self.problem(key, f"'{name if name is not None else '?'}' is not a key of {where}: use "
                             + ", ".join(allowed))
            elif name in found:
                self.problem(key, f"'{name}' is given twice in {where}")
            else:
                found[name] = value
        return found

    def success(self, node: yaml.Node) -> tuple[int, ...]:
        allowed = "a list of HTTP statuses, whole numbers from 100 to 599 (e.g. [200, 302])"
        if not isinstance(node, yaml.SequenceNode) or not node.value:
            self.problem(node, f"success must be {allowed}")
            return DEFAULT_SUCCESS
        statuses = []
        for item in node.value:
            if _whole(item) is None or not 100 <= _whole(item) <= 599:
                self.problem(item, f"success '{_text(item)}' is not allowed: use {allowed}")
            else:
                statuses.append(_whole(item))
        return tuple(sorted(set(statuses)))

    def requests(self, node: yaml.Node | None, root: yaml.Node) -> tuple[ScenarioRequest, ...]:
        if node is None or not isinstance(node, yaml.SequenceNode) or not node.value:
            self.problem(node or root, "no requests: 'requests' must be a list of at least one request, each a "
                         "mapping with a 'path'")
            return ()
        found = []
        for index, item in enumerate(node.value, 1):
            request = self.request(item, index)
            if request is not None:
                found.append(request)
        return tuple(found)

    def request(self, node: yaml.Node, index: int) -> ScenarioRequest | None:
        where = f"request {index}"
        if not isinstance(node, yaml.MappingNode):
            self.problem(node, f"{where} must be a mapping with a 'path' (and optionally method, headers, body, "
                         "weight)")
            return None
        given = self.mapping(node, REQUEST_KEYS, where)
        before = len(self.problems)
        path = self.path_of(given.get("path"), node, where)
        method = self.method(given["method"], where) if "method" in given else "GET"
        headers = self.headers(given["headers"], where) if "headers" in given else ()
        body = self.body(given["body"], where) if "body" in given else None
        weight = self.weight(given["weight"], where) if "weight" in given else 1
        if len(self.problems) > before:
            return None
        return ScenarioRequest(path, method, headers, body, weight, node.start_mark.line + 1)

    def path_of(self, node: yaml.Node | None, entry: yaml.Node, where: str) -> str:
        if node is None:
            self.problem(entry, f"{where} has no 'path': give the path and query asked, from '/'")
            return ""
        text = _text(node)
        if not isinstance(node, yaml.ScalarNode) or not text.startswith("/") or re.search(r"[\s\x00-\x1f\x7f]",
                                                                                          text):
            self.problem(node, f"{where}'s path '{text}' is not allowed: use a path from the host's root, starting "
                         "with '/', without spaces (encode them as %20)")
        return text

    def method(self, node: yaml.Node, where: str) -> str:
        text = _text(node)
        if not isinstance(node, yaml.ScalarNode) or text not in METHODS:
            self.problem(node, f"{where}'s method '{text}' is not allowed: use one of " + ", ".join(METHODS))
        return text

    def weight(self, node: yaml.Node, where: str) -> int:
        value = _whole(node)
        if value is None or not 1 <= value <= MAX_WEIGHT:
            self.problem(node, f"{where}'s weight '{_text(node)}' is not allowed: use a whole number from 1 to "
                         f"{MAX_WEIGHT}")
            return 1
        return value

    def headers(self, node: yaml.Node, where: str) -> tuple[tuple[str, str], ...]:
        if not isinstance(node, yaml.MappingNode):
            self.problem(node, f"{where}'s headers must be a mapping of header names to text values")
            return ()
        found: list[tuple[str, str]] = []
        for key, value in node.value:
            name = _text(key)
            if not isinstance(key, yaml.ScalarNode) or not HEADER_NAME.fullmatch(name):
                self.problem(key, f"{where}'s header name '{name}' is not allowed: use a header name (letters, "
                             "digits, '-')")
            elif name.lower() in TOOL_HEADERS:
                self.problem(key, f"{where}'s header '{name}' is not allowed: {TOOL_HEADERS[name.lower()]}")
            elif name.lower() in {n.lower() for n, _ in found}:
                self.problem(key, f"{where}'s header '{name}' is given twice")
            elif not isinstance(value, yaml.ScalarNode) or re.search(r"[\r\n\x00]", value.value):
                self.problem(value, f"{where}'s header '{name}' must have a text value on one line")
            else:
                found.append((name, value.value))
        return tuple(found)

    def body(self, node: yaml.Node, where: str) -> bytes | None:
        text = _text(node)
        if not isinstance(node, yaml.ScalarNode) or not text:
            self.problem(node, f"{where}'s body must name a file, relative to the scenario file")
            return None
        file = self.path.parent / text
        try:
            size = file.stat().st_size
            if not file.is_file():
                raise IsADirectoryError(21, "not a file")
            if size > MAX_BODY_BYTES:
                self.problem(node, f"{where}'s body file '{text}' has {size} bytes: at most {MAX_BODY_BYTES} "
                             "(1 MB) are allowed")
                return None
            data = file.read_bytes()
        except OSError as error:
            self.problem(node, f"{where}'s body file '{text}' cannot be read ({error.strerror or error}): name a "
                         "file relative to the scenario file")
            return None
        self.digest.update(data)
        return data


def _text(node: yaml.Node | None) -> str:
    """A node's text as written (a scalar's), or its kind for a list or mapping."""
    if isinstance(node, yaml.ScalarNode):
        return node.value
    return "a list" if isinstance(node, yaml.SequenceNode) else "a mapping"


def _whole(node: yaml.Node) -> int | None:
    """A plain whole number in decimal (not 3.0, not '3', not true)."""
    if isinstance(node, yaml.ScalarNode) and node.tag == YAML_INT and re.fullmatch(r"[0-9]{1,9}", node.value):
        return int(node.value)
    return None
