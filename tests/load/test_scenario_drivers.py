"""SCENARIO_FILE through the drivers: oha's command line and its status count against `success`, wrk2's
arguments and report, the scenario table capbench.lua reads, and capbench.lua's own functions (the weighted
pick, each user's cookies, the success count) run in LuaJIT with a stub `wrk` table where LuaJIT is installed
(wrk2 embeds LuaJIT; these test our Lua, not wrk2)."""
from __future__ import annotations

import json
import shutil
import subprocess
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from capbench.load.drivers import DriverError, Envelope, StepPlan
from capbench.load.drivers.oha import OhaDriver
from capbench.load.drivers.per_response import failed_statuses
from capbench.load.drivers.wrk2 import Wrk2Driver, lua_string, parse_run as wrk2_parse_run, scenario_table
from capbench.rundata.records import Tool
from capbench.settings import scenario_file as user_scenario
from conftest import ROOT

DATA = Path(__file__).parent / "data"
SCRIPT = ROOT / "load/wrk2/capbench.lua"
LUAJIT = shutil.which("luajit")
needs_luajit = pytest.mark.skipif(LUAJIT is None, reason="no luajit to run capbench.lua's functions "
                                  "(apt-get install luajit)")


def plan(**scenario) -> StepPlan:
    base = StepPlan(url="http://lb:8080/a", rate=100, duration_s=20, connections=16, threads=2, timeout_s=10,
                    users_file=None, urls_file=None, session_requests=10)
    return replace(base, **scenario)


def scenario_of(tmp_path: Path, text: str) -> user_scenario.UserScenario:
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    return user_scenario.load(str(path))


def test_oha_sends_a_uniform_scenario_from_its_weighted_urls_file():
    argv = OhaDriver("oha").argv(plan(urls_file="/w/urls.txt", method="PUT", headers=(("X-A", "b c"),),
                                      body_file="/w/body", success=(200, 204)))
    assert argv[argv.index("-m") + 1] == "PUT"
    assert argv[argv.index("-H") + 1] == "X-A: b c"
    assert argv[argv.index("-D") + 1] == "/w/body"
    assert argv[-2:] == ["--urls-from-file", "/w/urls.txt"]


def test_oha_sends_a_get_without_method_or_body_options():
    argv = OhaDriver("oha").argv(plan(urls_file="/w/urls.txt", success=(200,)))
    assert not {"-m", "-H", "-D"} & set(argv)


@pytest.mark.parametrize("success, failed", [(None, 3), ((200,), 5), ((200, 302), 3), ((200, 302, 404, 503), 0)])
def test_oha_counts_statuses_against_success(success, failed):
    assert failed_statuses({"200": 10, "302": 2, "404": 1, "503": 2}, success) == failed


def test_an_oha_step_counts_its_status_failures_against_the_scenarios_success():
    files = {p.name: p.read_bytes() for p in (DATA / "oha-status-400").iterdir()}
    envelope = Envelope.parse(files["envelope"].decode())
    step = plan(rate=50, duration_s=2, connections=4, urls_file="urls.txt")
    assert OhaDriver().parse(files, step, envelope, "oha").result.errors["status"] == 100
    assert OhaDriver().parse(files, replace(step, success=(200,)), envelope, "oha").result.errors["status"] == 100
    result = OhaDriver().parse(files, replace(step, success=(400,)), envelope, "oha").result
    assert result.errors["status"] == 0 and result.failure_pct == 0


def test_wrk2_gets_the_scenario_and_its_users_as_script_arguments():
    argv = Wrk2Driver("wrk2").argv(plan(users_file="/w/users.txt", urls_file="/w/urls.txt",
                                        requests_file="/w/requests.lua", success=(200,)))
    assert argv[argv.index("-s") + 1:] == [
        "/opt/capbench/load/wrk2/capbench.lua", "http://lb:8080/a", "--", "/w/users.txt", "10", "/w/requests.lua"]
    single = Wrk2Driver("wrk2").argv(plan(requests_file="/w/requests.lua", success=(200,)))
    assert single[single.index("--") + 1:] == ["-", "10", "/w/requests.lua"]
    kept = Wrk2Driver("wrk2").argv(plan(users_file="/w/users.txt", requests_file="/w/requests.lua", success=(200,),
                                        cookie_jar="/w/cookies-node1-1"))
    assert kept[kept.index("--") + 1:] == ["/w/users.txt", "10", "/w/requests.lua", "/w/cookies-node1-1"]
    no_users = Wrk2Driver("wrk2").argv(plan(requests_file="/w/requests.lua", success=(200,), cookie_jar="/w/c"))
    assert no_users[no_users.index("--") + 1:] == ["-", "10", "/w/requests.lua"]  # no users, no cookies kept


def wrk2_report(**more) -> dict:
    return {"duration_us": 20_000_000, "requests": 1000, "bytes": 1, "latency_count": 500, "slow_share": 0,
            "errors": {"connect": 0, "read": 0, "write": 0, "status": 7, "timeout": 0},
            "latency_us": {"min": 1, "mean": 1, "p50": 1, "p90": 1, "p99": 1, "p99.9": 1, "max": 1}, **more}


ENVELOPE = Envelope(start_epoch=1.0, end_epoch=21.0, cpu_start=0, cpu_end=1, cpus=2, exit_status=0)


def test_wrk2_counts_the_scenarios_non_success_statuses_not_its_own():
    tool = Tool("wrk2", "wrk 4.0.0", [])
    assert wrk2_parse_run(wrk2_report(), plan(), ENVELOPE, tool).result.errors["status"] == 7
    scenario_step = plan(requests_file="r.lua", success=(200,))
    result = wrk2_parse_run(wrk2_report(not_success=42), scenario_step, ENVELOPE, tool).result
    assert result.errors["status"] == 42
    with pytest.raises(DriverError, match="lacks 'not_success'"):
        wrk2_parse_run(wrk2_report(), scenario_step, ENVELOPE, tool)


def test_the_scenario_table_is_a_lua_chunk_of_escaped_strings(tmp_path):
    (tmp_path / "form.txt").write_bytes(b'a="1"\\\n]]')
    scenario = scenario_of(tmp_path, "success: [200, 302]\nrequests:\n  - {path: /a, weight: 3}\n"
                                     "  - path: /b?x=1\n    method: POST\n    headers: {X-A: 'say \"hi\"'}\n"
                                     "    body: form.txt\n")
    lines = scenario_table(scenario).decode().splitlines()
    assert lines[0] == f'-- capbench scenario "scenario.yaml", sha256 {scenario.sha256}'
    assert lines[1:4] == ["return {", "  success = {200, 302},", "  requests = {"]
    assert lines[4] == '    {method = "GET", path = "/a", headers = {}, body = nil, weight = 3},'
    assert lines[5] == ('    {method = "POST", path = "/b?x=1", headers = {["X-A"] = "say \\034hi\\034"}, '
                        'body = "a=\\0341\\034\\092\\010]]", weight = 1},')
    assert lines[6:] == ["  },", "}"]


def test_lua_strings_escape_everything_but_printable_ascii():
    assert lua_string(b'ok "q" \\ \n\x00\xff') == '"ok \\034q\\034 \\092 \\010\\000\\255"'


def run_lua(tmp_path: Path, body: str, env: dict | None = None) -> list:
    """capbench.lua loaded under a stub `wrk` whose format() returns the request as JSON, then `body`, whose
    print()ed lines are read back as JSON."""
    harness = tmp_path / "harness.lua"
    harness.write_text(f"""
wrk = {{path = "/grind?variant=v1", headers = {{}}}}
local function quote(s) return string.format("%q", s):gsub("\\\\\\n", "\\\\n") end
function wrk.format(method, path, headers, body)
   local names = {{}}
   for name, value in pairs(headers or {{}}) do names[#names + 1] = quote(name) .. ": " .. quote(value) end
   table.sort(names)
   return "{{" .. '"method": ' .. quote(method or "GET") .. ', "path": ' .. quote(path) .. ', "headers": {{'
      .. table.concat(names, ", ") .. '}}, "body": ' .. (body and quote(body) or "null") .. "}}"
end
dofile({json.dumps(str(SCRIPT))})
{body}
""")
    done = subprocess.run([LUAJIT, str(harness)], capture_output=True, text=True, timeout=30,
                          env={"PATH": "/usr/bin:/bin", **(env or {})})
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def put_scenario(tmp_path: Path, text: str, users: list[str] | None = None) -> tuple[str, str]:
    scenario = scenario_of(tmp_path, text)
    (tmp_path / "requests.lua").write_bytes(scenario_table(scenario))
    users_file = "-"
    if users is not None:
        (tmp_path / "users.txt").write_text("".join(f"{u}\n" for u in users))
        users_file = str(tmp_path / "users.txt")
    return str(tmp_path / "requests.lua"), users_file


WEIGHTED = ("requests:\n  - {path: /a, weight: 1}\n  - {path: /b, weight: 3}\n  - {path: /c, weight: 2}\n"
            "  - {path: /d, method: DELETE, headers: {X-A: b}}\n")


@needs_luajit
def test_lua_pick_gives_each_request_the_share_of_its_weight(tmp_path):
    requests, _ = put_scenario(tmp_path, WEIGHTED)
    picked = run_lua(tmp_path, f"""
local s = load_scenario({json.dumps(requests)})
for draw = 1, s.total do print('"' .. pick(s, draw).path .. '"') end
""")
    assert picked == ["/a", "/b", "/b", "/b", "/c", "/c", "/d"]


@needs_luajit
def test_lua_requests_are_drawn_by_weight_with_method_headers_and_body(tmp_path):
    requests, users = put_scenario(tmp_path, WEIGHTED)
    sent = run_lua(tmp_path, f"""
init({{[0] = "http://lb:8080/a", {json.dumps(users)}, "10", {json.dumps(requests)}}})
for _ = 1, 7000 do print(request()) end
""")
    counts = Counter(r["path"] for r in sent)
    for path, weight in (("/a", 1), ("/b", 3), ("/c", 2), ("/d", 1)):
        assert counts[path] == pytest.approx(1000 * weight, rel=0.15), counts
    delete = next(r for r in sent if r["path"] == "/d")
    assert delete == {"method": "DELETE", "path": "/d", "headers": {"X-A": "b"}, "body": None}
    assert all("Cookie" not in r["headers"] for r in sent)  # no users: no cookies


@needs_luajit
def test_lua_keeps_each_users_cookie_and_sends_it_back(tmp_path):
    requests, users = put_scenario(tmp_path, "requests:\n  - {path: /a}\n", users=["u1", "u2"])
    # math.random made to draw u1 for the first session of 2 requests, then u2, then u1 again.
    sent = run_lua(tmp_path, f"""
init({{[0] = "http://lb:8080/a", {json.dumps(users)}, "2", {json.dumps(requests)}}})
local draws = {{1, 1, 1, 1, 2, 1, 2, 1, 1, 1, 1, 1}}
local n = 0
math.random = function(high) n = n + 1; return high == 1 and 1 or draws[n] end
print(request())                                                        -- u1, no cookie yet
response(200, {{["Set-Cookie"] = "JSESSIONID=ABC.node1; Path=/a; HttpOnly"}}, "")
print(request())                                                        -- u1 again: its cookie
print(request())                                                        -- u2: none
response(200, {{["set-cookie"] = "theme=dark"}}, "")                     -- u1's second answer
response(200, {{["Set-Cookie"] = "JSESSIONID=XYZ.node2; Path=/a"}}, "")  -- u2's first
print(request())                                                        -- u2 again: its own
print(request())                                                        -- u1: both of its cookies
response(200, {{}}, "")                                                 -- u2's
response(200, {{["Set-Cookie"] = "theme=x; Max-Age=0"}}, "")             -- u1's: the theme removed
response(200, {{["Set-Cookie"] = "JSESSIONID=LATE.node3"}}, "")          -- no request waits: dropped
print(request())                                                        -- u1 again
""")
    assert [r["headers"].get("Cookie") for r in sent] == [
        None, "JSESSIONID=ABC.node1", None, "JSESSIONID=XYZ.node2", "JSESSIONID=ABC.node1; theme=dark",
        "JSESSIONID=ABC.node1"]


@needs_luajit
def test_lua_a_users_cookies_outlive_the_step_within_a_search(tmp_path):
    requests, users = put_scenario(tmp_path, "requests:\n  - {path: /a}\n", users=["u1", "u2"])
    jar = json.dumps(str(tmp_path / "cookies-node1-1"))
    # Step 1, thread 2 (a wrk2 process): u1 gets a session, u2 a session and then a theme, later removed.
    run_lua(tmp_path, f"""
thread_id = 2
init({{[0] = "http://lb:8080/a", {json.dumps(users)}, "1", {json.dumps(requests)}, {jar}}})
local draws = {{1, 1, 1, 2, 1, 2}}
local n = 0
math.random = function(high) n = n + 1; return high == 1 and 1 or draws[n] end
request(); request(); request()
response(200, {{["x-capbench-user"] = "u1", ["set-cookie"] = "JSESSIONID=ONE.node1"}}, "")
response(200, {{["x-capbench-user"] = "u2", ["set-cookie"] = "JSESSIONID=TWO.node1"}}, "")
response(200, {{["x-capbench-user"] = "u2", ["set-cookie"] = "theme=a=b"}}, "")
""")
    # Step 2, another process, thread 1: both users come back with the session the application gave them.
    sent = run_lua(tmp_path, f"""
thread_id = 1
init({{[0] = "http://lb:8080/a", {json.dumps(users)}, "1", {json.dumps(requests)}, {jar}}})
local draws = {{1, 1, 1, 2}}
local n = 0
math.random = function(high) n = n + 1; return high == 1 and 1 or draws[n] end
print(request())
print(request())
""")
    assert [r["headers"].get("Cookie") for r in sent] == ["JSESSIONID=ONE.node1", "JSESSIONID=TWO.node1; theme=a=b"]
    assert (tmp_path / "cookies-node1-1-2").read_text().splitlines()[0] == "u1\tJSESSIONID=ONE.node1"
    # Without a jar (a new search), a user starts without cookies.
    fresh = run_lua(tmp_path, f"""
init({{[0] = "http://lb:8080/a", {json.dumps(users)}, "1", {json.dumps(requests)}}})
math.random = function(high) return 1 end
print(request())
""")
    assert fresh[0]["headers"].get("Cookie") is None


@needs_luajit
def test_lua_names_each_user_and_gives_a_cookie_to_the_user_the_balancer_echoes(tmp_path):
    requests, users = put_scenario(tmp_path, "requests:\n  - {path: /a}\n", users=["u1", "u2"])
    # u1's session, then u2's (one request each); their answers come back the other way round, each with the
    # user the balancer echoed (lowercased as HAProxy sends header names).
    sent = run_lua(tmp_path, f"""
init({{[0] = "http://lb:8080/a", {json.dumps(users)}, "1", {json.dumps(requests)}}})
local draws = {{1, 1, 1, 2, 1, 1, 1, 2}}  -- every other draw picks the user (the others, the request)
local n = 0
math.random = function(high) n = n + 1; return high == 1 and 1 or draws[n] end
print(request())                                                                -- u1
print(request())                                                                -- u2
response(200, {{["x-capbench-user"] = "u2", ["set-cookie"] = "JSESSIONID=TWO"}}, "")
response(200, {{["x-capbench-user"] = "u1", ["set-cookie"] = "JSESSIONID=ONE"}}, "")
print(request())                                                                -- u1 again
print(request())                                                                -- u2 again
""")
    assert [r["headers"].get("X-Capbench-User") for r in sent] == ["u1", "u2", "u1", "u2"]
    assert [r["headers"].get("Cookie") for r in sent] == [None, None, "JSESSIONID=ONE", "JSESSIONID=TWO"]


@needs_luajit
def test_lua_counts_statuses_outside_success_in_its_report(tmp_path):
    requests, users = put_scenario(tmp_path, "success: [200, 302]\nrequests:\n  - {path: /a}\n", users=["u1"])
    run_lua(tmp_path, f"""
setup({{set = function(self, name, value) _G[name] = value end, get = function(self, name) return _G[name] end}})
init({{[0] = "http://lb:8080/a", {json.dumps(users)}, "10", {json.dumps(requests)}}})
for _, status in ipairs({{200, 302, 404, 500, 200}}) do request(); response(status, {{}}, "") end
local latency = {{min = 0, max = 0, mean = 0, percentile = function(self, p) return 0 end}}
done({{duration = 20000000, requests = 5, bytes = 0,
       errors = {{connect = 0, read = 0, write = 0, status = 2, timeout = 0}}}}, latency, nil)
""", env={"CAPBENCH_STEP_DIR": str(tmp_path)})
    report = json.loads((tmp_path / "wrk2.json").read_text())
    assert report["not_success"] == 2
    result = wrk2_parse_run(report, plan(requests_file="r.lua", success=(200, 302)), ENVELOPE,
                            Tool("wrk2", "wrk 4.0.0", [])).result
    assert result.errors["status"] == 2


@needs_luajit
def test_lua_without_a_scenario_sends_the_url_with_a_user_and_wants_no_responses(tmp_path):
    (tmp_path / "users.txt").write_text("u1\n")
    sent = run_lua(tmp_path, f"""
init({{[0] = "http://lb:8080/grind?variant=v1", {json.dumps(str(tmp_path / "users.txt"))}, "10"}})
print(request())
print(response == nil and "true" or "false")
""")
    assert sent[0]["path"] == "/grind?variant=v1&user=u1" and sent[1] is True


@needs_luajit
def test_lua_reads_any_body_bytes_back_from_the_scenario_table(tmp_path):
    (tmp_path / "all.bin").write_bytes(bytes(range(256)))
    requests, _ = put_scenario(tmp_path, "requests:\n  - {path: /a, method: POST, body: all.bin}\n")
    read = run_lua(tmp_path, f"""
local body = load_scenario({json.dumps(requests)}).requests[1].body
local bytes = {{}}
for i = 1, #body do bytes[i] = string.byte(body, i) end
print("[" .. table.concat(bytes, ", ") .. "]")
""")
    assert read == [list(range(256))]
