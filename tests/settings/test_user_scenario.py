"""SCENARIO_FILE: the scenario file read and checked (every problem with its line), the settings check that
refuses it before anything starts, and the driver limits (oha: one method, headers and body; wrk2: no HEAD)."""
from __future__ import annotations

from pathlib import Path

import pytest

from capbench.kinds import read_settings
from capbench.settings import scenario_file as user_scenario
from capbench.settings.bench import SettingsError, check_for_driver
from capbench.settings.scenario_file import ScenarioError
from conftest import ROOT

EXAMPLE = ROOT / "examples/scenarios/tomcat-examples.yaml"
EXAMPLES = sorted((ROOT / "examples/scenarios").glob("*.yaml"))


def write(tmp_path: Path, text: str, name: str = "scenario.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_the_example_scenario_reads():
    scenario = user_scenario.load(str(EXAMPLE))
    assert scenario.name == "tomcat-examples.yaml" and scenario.success == (200,)
    assert [(r.path, r.weight, r.method, r.body) for r in scenario.requests] == [
        ("/examples/index.html", 4, "GET", None),
        ("/examples/servlets/servlet/HelloWorldExample", 3, "GET", None),
        ("/examples/servlets/servlet/SessionExample", 2, "GET", None),
        ("/examples/jsp/jsp2/el/basic-arithmetic.jsp", 2, "GET", None),
        ("/examples/jsp/dates/date.jsp", 1, "GET", None)]
    assert scenario.mixed() is None


def test_a_full_scenario_reads_with_defaults_bodies_and_lines(tmp_path):
    (tmp_path / "form.txt").write_bytes(b"a=1&b=\"2\"\n")
    path = write(tmp_path, """\
# a comment
success: [302, 200, 302]
requests:
  - path: /app/list?page=1
  - path: /app/save
    method: POST
    headers: {Content-Type: application/x-www-form-urlencoded, X-Count: 5}
    body: form.txt
    weight: 3
""")
    scenario = user_scenario.load(path)
    assert scenario.success == (200, 302)
    first, second = scenario.requests
    assert (first.path, first.method, first.headers, first.body, first.weight, first.line) == (
        "/app/list?page=1", "GET", (), None, 1, 4)
    assert (second.method, second.body, second.weight, second.line) == ("POST", b"a=1&b=\"2\"\n", 3, 5)
    assert second.headers == (("Content-Type", "application/x-www-form-urlencoded"), ("X-Count", "5"))
    assert scenario.mixed() is second and second.differs(first) == ["method", "headers", "body"]


def test_the_digest_covers_the_body_files(tmp_path):
    (tmp_path / "b.txt").write_text("one")
    path = write(tmp_path, "requests:\n  - {path: /a, method: PUT, body: b.txt}\n")
    before = user_scenario.load(path).sha256
    (tmp_path / "b.txt").write_text("two")
    assert user_scenario.load(path).sha256 != before


def test_the_success_list_defaults_to_200(tmp_path):
    assert user_scenario.load(write(tmp_path, "requests: [{path: /}]\n")).success == (200,)


BAD = """\
success: [200, 700, x]
extra: 1
requests:
  - path: examples/index.html
    weight: 0
  - path: /a b
    method: get
  - path: /ok
    headers: {Host: x, Content-Length: 3, Cookie: y}
    body: missing.txt
  - path: /w
    weight: 2.5
    colour: red
  - just text
  - method: GET
  - path: /h
    headers: [X-A]
    weight: 1001
"""


def test_every_problem_is_said_at_once_with_its_line_in_the_files_order(tmp_path):
    path = write(tmp_path, BAD)
    with pytest.raises(ScenarioError) as refused:
        user_scenario.load(path)
    found = refused.value.problems
    expected = [
        (1, "success '700' is not allowed: use a list of HTTP statuses, whole numbers from 100 to 599"),
        (1, "success 'x' is not allowed"),
        (2, "'extra' is not a key of the top level: use success, requests"),
        (4, "request 1's path 'examples/index.html' is not allowed: use a path from the host's root, starting "
            "with '/'"),
        (5, "request 1's weight '0' is not allowed: use a whole number from 1 to 1000"),
        (6, "request 2's path '/a b' is not allowed"),
        (7, "request 2's method 'get' is not allowed: use one of GET, HEAD, POST, PUT, PATCH, DELETE"),
        (9, "request 3's header 'Host' is not allowed: the generator sets Host"),
        (9, "request 3's header 'Content-Length' is not allowed: the generator sets Content-Length from the body"),
        (9, "request 3's header 'Cookie' is not allowed: wrk2 sends each user the cookies"),
        (10, "request 3's body file 'missing.txt' cannot be read (No such file or directory)"),
        (12, "request 4's weight '2.5' is not allowed"),
        (13, "'colour' is not a key of request 4: use path, method, headers, body, weight"),
        (14, "request 5 must be a mapping with a 'path'"),
        (15, "request 6 has no 'path'"),
        (17, "request 7's headers must be a mapping of header names to text values"),
        (18, "request 7's weight '1001' is not allowed"),
    ]
    assert len(found) == len(expected), "\n".join(found)
    for line, (number, text) in zip(found, expected):
        assert line.startswith(f"SCENARIO_FILE {path}:{number}: ") and text in line, line


@pytest.mark.parametrize("text, line, message", [
    ("requests: [\n  - {path: /a\n", 2, "not YAML"),
    ("- path: /a\n", 1, "the file must be a mapping with 'requests'"),
    ("", 1, "the file must be a mapping with 'requests'"),
    ("success: [200]\n", 1, "no requests: 'requests' must be a list of at least one request"),
    ("requests: []\n", 1, "no requests"),
    ("success: 200\nrequests: [{path: /}]\n", 1, "success must be a list of HTTP statuses"),
    ("requests: [{path: /}]\nrequests: [{path: /b}]\n", 2, "'requests' is given twice in the top level"),
    ("requests:\n  - path: /\n    headers: {X-A: 1, x-a: 2}\n", 3, "request 1's header 'x-a' is given twice"),
    ("requests:\n  - path: /\n    headers: {'X A': 1}\n", 3, "request 1's header name 'X A' is not allowed"),
    ("requests:\n  - path: /\n    headers: {X-A: [1]}\n", 3, "header 'X-A' must have a text value on one line"),
    ("requests:\n  - path: /\n    weight: true\n", 3, "request 1's weight 'true' is not allowed"),
])
def test_each_refusal_names_its_line(tmp_path, text, line, message):
    path = write(tmp_path, text)
    problems = user_scenario.problems(path)
    assert len(problems) == 1 and problems[0].startswith(f"SCENARIO_FILE {path}:{line}: ") and message in problems[0], \
        problems


def test_a_missing_file_or_a_folder_is_refused(tmp_path):
    assert user_scenario.problems(str(tmp_path / "none.yaml")) == [
        f"SCENARIO_FILE='{tmp_path / 'none.yaml'}' cannot be read (No such file or directory): give the path of a "
        "scenario YAML file (docs/guides/scenario-file.md)"]
    assert "cannot be read (Is a directory)" in user_scenario.problems(str(tmp_path))[0]


def test_a_body_over_1_mb_or_a_folder_is_refused(tmp_path):
    (tmp_path / "big.bin").write_bytes(b"x" * (1024 * 1024 + 1))
    (tmp_path / "dir").mkdir()
    path = write(tmp_path, "requests:\n  - {path: /a, method: POST, body: big.bin}\n"
                           "  - {path: /b, method: POST, body: dir}\n")
    first, second = user_scenario.problems(path)
    assert f"{path}:2: request 1's body file 'big.bin' has 1048577 bytes: at most 1048576 (1 MB)" in first
    assert f"{path}:3: request 2's body file 'dir' cannot be read" in second


def test_weights_become_repeated_lines_for_a_pick_at_random(tmp_path):
    path = write(tmp_path, "requests:\n  - {path: /a, weight: 4}\n  - path: /b?x=1\n    weight: 2\n"
                           "  - {path: /c, weight: 6}\n")
    assert user_scenario.load(path).weighted_urls("lb").splitlines() == (
        ["http://lb:8080/a"] * 2 + ["http://lb:8080/b?x=1"] + ["http://lb:8080/c"] * 3)


def test_the_settings_check_refuses_a_bad_scenario_with_its_lines(tmp_path):
    path = write(tmp_path, "requests:\n  - {path: x, weight: 0}\n")
    with pytest.raises(SettingsError) as refused:
        read_settings({"SCENARIO_FILE": path})
    assert str(refused.value).splitlines() == [
        f"SCENARIO_FILE {path}:2: request 1's path 'x' is not allowed: use a path from the host's root, starting "
        "with '/', without spaces (encode them as %20)",
        f"SCENARIO_FILE {path}:2: request 1's weight '0' is not allowed: use a whole number from 1 to 1000"]


def test_settings_read_the_scenario_and_run_json_records_its_name_and_digest():
    settings = read_settings({"SCENARIO_FILE": str(EXAMPLE)})
    recorded = settings.as_dict()
    assert recorded["scenario_file"] == str(EXAMPLE)
    assert recorded["scenario_sha256"] == settings.user_scenario.sha256
    assert "user_scenario" not in recorded
    plain = read_settings({}).as_dict()
    assert plain.get("scenario_file") is None and "scenario_sha256" not in plain  # as runs before it recorded


def test_oha_refuses_a_scenario_whose_requests_differ_naming_the_entry(tmp_path):
    (tmp_path / "form.txt").write_text("a=1")
    path = write(tmp_path, "requests:\n  - path: /a\n  - path: /b\n    method: POST\n    body: form.txt\n")
    settings = read_settings({"SCENARIO_FILE": path})
    with pytest.raises(SettingsError) as refused:
        check_for_driver(settings, "oha")
    assert str(refused.value) == (
        f"SCENARIO_FILE {path}:3: this request's method and body differ from the first request's (line 2), and oha "
        "sends the same for every request: use LOADGEN=wrk2 (WRK2=/path/to/wrk2), or give every request the same")
    assert check_for_driver(settings, "wrk2").user_scenario is settings.user_scenario


def test_oha_takes_a_scenario_whose_requests_share_method_headers_and_body(tmp_path):
    path = write(tmp_path, "requests:\n  - {path: /a, method: PUT, headers: {X-A: b}}\n"
                           "  - {path: /b, method: PUT, headers: {X-A: b}, weight: 2}\n")
    settings = read_settings({"SCENARIO_FILE": path})
    assert check_for_driver(settings, "oha") is settings


def test_wrk2_refuses_head(tmp_path):
    path = write(tmp_path, "requests:\n  - {path: /a, method: HEAD}\n  - {path: /b, method: HEAD}\n")
    settings = read_settings({"SCENARIO_FILE": path})
    with pytest.raises(SettingsError, match=f"SCENARIO_FILE {path}:2: wrk2 cannot send HEAD: .* use LOADGEN=oha"):
        check_for_driver(settings, "wrk2")
    assert check_for_driver(settings, "oha") is settings


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda path: path.name)
def test_every_example_scenario_reads_and_oha_can_send_it(example):
    """The scenarios shipped beside the example applications: read without a problem, GETs without a body."""
    assert user_scenario.problems(str(example)) == []
    assert all(r.method == "GET" and r.body is None for r in user_scenario.load(str(example)).requests)
