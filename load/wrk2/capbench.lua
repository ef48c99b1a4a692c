-- capbench's script for a wrk2 binary the user supplies: builds each request for the scenario, and at the end
-- writes the results as JSON (wrk2's done() reporter) to $CAPBENCH_STEP_DIR/wrk2.json.
--   wrk2 ... -s capbench.lua URL -- USERS_FILE SESSION_REQUESTS [REQUESTS_FILE [JAR_PREFIX]]
-- With a users file: the study's user, SESSION_REQUESTS requests in succession with one user id, then a new
-- random id from the file. Without arguments: every request is the URL as given.
-- With a requests file (SCENARIO_FILE, as capbench/load/drivers/wrk2.py's scenario_table writes it): each request is
-- one of the file's, drawn by weight; a user (USERS_FILE '-': none) keeps the cookies the application sets
-- and sends them back, and responses whose status is not in the file's success list are counted. With a
-- JAR_PREFIX a user's cookies outlive the step: each thread appends every change of a user's cookies to the file
-- JAR_PREFIX-<thread>, and every thread of the next step (a new wrk2 process) reads all of them first, so a user
-- who comes back in a later step of the same search brings the session the application gave them, as in
-- production, instead of starting a new one at every step.

local slow_us = 5000 * 1000  -- the study counts responses slower than 5 s as failures

-- Runs once per thread in the main script state, before the threads start; done() reads each thread's counts.
local thread_count = 0
local threads = {}
function setup(thread)
   thread_count = thread_count + 1
   threads[thread_count] = thread
   thread:set("thread_id", thread_count)
end

local users = nil
local session_requests = 0
local sent_in_session = 0
local path_with_user = nil
local current_user = nil

-- The scenario file's requests, the running sum of their weights (for the pick), and the statuses that count
-- as answered (a set).
local scenario = nil
-- Each user's cookies (name -> value), in this thread: a user drawn again sends what the application set.
local jars = {}
-- JAR_PREFIX's file of this thread, open for appending (nil: cookies last one step).
local jar_out = nil
local MAX_THREADS = 64  -- the harness's THREADS limit: the files a step's threads may have written
-- wrk2 does not say which request a response answers, so each request names its user in USER_HEADER and the
-- balancer echoes it into the response (haproxy/haproxy.cfg), which gives a Set-Cookie to that user. Where no
-- echo comes back (a server reached without our balancer), the oldest user waiting takes it: right while
-- responses come back in the order sent; a request that fails without a response (a timeout) shifts this by
-- one, and a user then takes the cookie of the one before, still a real session on a real node.
USER_HEADER = "X-Capbench-User"
local waiting, waiting_first, waiting_next = {}, 1, 1
-- Responses whose status is not in the scenario's success list; nil without a scenario (done() reads it).
not_success = nil

function load_scenario(path)
   local data = dofile(path)
   local cumulative, total = {}, 0
   for i, r in ipairs(data.requests) do
      total = total + r.weight
      cumulative[i] = total
   end
   local success = {}
   for _, status in ipairs(data.success) do success[status] = true end
   return {requests = data.requests, cumulative = cumulative, total = total, success = success}
end

-- The request whose share of the total weight holds `draw` (1..total): the first with a running sum >= draw.
function pick(s, draw)
   local low, high = 1, #s.cumulative
   while low < high do
      local mid = math.floor((low + high) / 2)
      if s.cumulative[mid] < draw then low = mid + 1 else high = mid end
   end
   return s.requests[low]
end

-- A Set-Cookie value into the jar: its name=value, or the cookie removed when it is emptied or expired now.
function remember(jar, set_cookie)
   local name, value = string.match(set_cookie, "^%s*([^=;%s]+)%s*=%s*([^;]*)")
   if not name then return end
   local attributes = string.lower(string.match(set_cookie, ";(.*)$") or "")
   if value == "" or string.find(attributes, "max%-age=0", 1) then
      jar[name] = nil
   else
      jar[name] = value
   end
end

function cookie_header(jar)
   local parts = {}
   for name, value in pairs(jar or {}) do parts[#parts + 1] = name .. "=" .. value end
   table.sort(parts)  -- the same order every time, as a browser keeps it
   return #parts > 0 and table.concat(parts, "; ") or nil
end

local function next_user()
   if sent_in_session == 0 then
      current_user = users[math.random(#users)]
   end
   sent_in_session = (sent_in_session + 1) % session_requests
   return current_user
end

local function scenario_request()
   local r = pick(scenario, math.random(scenario.total))
   local headers = {}  -- a fresh table: wrk.format adds Host and Content-Length to the one it is given
   for name, value in pairs(r.headers) do headers[name] = value end
   if users ~= nil then
      local user = next_user()
      headers["Cookie"] = cookie_header(jars[user])
      headers[USER_HEADER] = user
      waiting[waiting_next], waiting_next = user, waiting_next + 1
   end
   return wrk.format(r.method, r.path, headers, r.body)
end

-- response() is set only with a scenario: wrk2 hands every response's headers and body to Lua when it exists.
local function scenario_response(status, headers, body)
   if not scenario.success[status] then not_success = not_success + 1 end
   if users == nil or waiting_first == waiting_next then return end
   local user = waiting[waiting_first]
   waiting[waiting_first], waiting_first = nil, waiting_first + 1
   local set_cookie = nil
   for name, value in pairs(headers) do
      name = string.lower(name)
      if name == "x-capbench-user" then
         user = value
      elseif name == "set-cookie" then
         set_cookie = value  -- wrk2 keeps one value per header name: of several Set-Cookie headers, the last
      end
   end
   if set_cookie ~= nil then
      jars[user] = jars[user] or {}
      remember(jars[user], set_cookie)
      if jar_out ~= nil then jar_out:write(user, "\t", cookie_header(jars[user]) or "", "\n") end
   end
end

-- Every user's cookies as the threads of the search's earlier steps left them: each line of JAR_PREFIX-<n> is
-- "user<TAB>name=value; name=value", the user's whole jar after a change (an empty one: removed); later lines win.
function read_jars(prefix)
   local found = {}
   for n = 1, MAX_THREADS do
      local file = io.open(prefix .. "-" .. n, "r")
      if file ~= nil then
         for line in file:lines() do
            local user, header = string.match(line, "^([^\t]+)\t(.*)$")
            if user ~= nil then
               local jar = {}
               for name, value in string.gmatch(header, "([^=;%s]+)=([^;]*)") do jar[name] = value end
               found[user] = next(jar) ~= nil and jar or nil
            end
         end
         file:close()
      end
   end
   return found
end

local function read_users(path)
   local found = {}
   for line in io.lines(path) do
      if line ~= "" then found[#found + 1] = line end
   end
   return found
end

function init(args)
   -- Each thread its own sequence of users (thread_id is set by setup() above).
   math.randomseed(os.time() * 1000 + (thread_id or 0))
   if args[3] then
      scenario = load_scenario(args[3])
      if args[1] ~= "-" then users = read_users(args[1]) end
      if users ~= nil and args[4] then
         jars = read_jars(args[4])
         jar_out = assert(io.open(args[4] .. "-" .. (thread_id or 1), "a"))
         jar_out:setvbuf("line")  -- each change on disk as it happens: wrk2 ends without closing the thread's state
      end
      session_requests = tonumber(args[2])
      not_success = 0
      response = scenario_response
   elseif #args >= 2 then
      users = read_users(args[1])
      session_requests = tonumber(args[2])
      local sep = string.find(wrk.path, "?", 1, true) and "&" or "?"
      path_with_user = wrk.path .. sep .. "user="
   end
end

function request()
   if scenario ~= nil then
      return scenario_request()
   end
   if users == nil then
      return wrk.format(nil, wrk.path)
   end
   return wrk.format(nil, path_with_user .. next_user())
end

-- The share of recorded latencies above limit_us, by bisection on the histogram's percentiles.
local function share_above(latency, limit_us)
   if latency.max <= limit_us then return 0 end
   local low, high = 0.0, 100.0
   for _ = 1, 50 do
      local mid = (low + high) / 2
      if latency:percentile(mid) > limit_us then high = mid else low = mid end
   end
   return (100.0 - high) / 100.0
end

-- The latency spectrum's percentiles: the same as capbench/engine/step.py's SPECTRUM_PERCENTILES, then 100 (the max).
local spectrum_percentiles = {0, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 99.995, 99.999}

local function spectrum(latency)
   local pairs_text = {}
   for _, p in ipairs(spectrum_percentiles) do
      pairs_text[#pairs_text + 1] = string.format("[%g, %d]", p, latency:percentile(p))
   end
   pairs_text[#pairs_text + 1] = string.format("[100, %d]", latency.max)
   return "[" .. table.concat(pairs_text, ", ") .. "]"
end

-- The whole histogram as [value_us, count] runs, lowest first: latency[i] is the i-th smallest recorded value
-- (at the histogram's precision), so the harness can add what wrk2 never recorded (requests unanswered at the
-- end) and take its percentiles of everything, not of wrk2's figures.
local function histogram_runs(latency)
   local runs, value, count = {}, nil, 0
   for i = 1, #latency do
      local v = latency[i]
      if v == value then
         count = count + 1
      else
         if value then runs[#runs + 1] = string.format("[%d, %d]", value, count) end
         value, count = v, 1
      end
   end
   if value then runs[#runs + 1] = string.format("[%d, %d]", value, count) end
   return "[" .. table.concat(runs, ", ") .. "]"
end

function done(summary, latency, requests)
   local e = summary.errors
   -- Without a recorded latency wrk2's mean is NaN, which JSON cannot carry.
   local mean = #latency > 0 and latency.mean or 0
   local fields = {
      string.format('"duration_us": %d', summary.duration),
      string.format('"requests": %d', summary.requests),
      string.format('"bytes": %d', summary.bytes),
      string.format('"errors": {"connect": %d, "read": %d, "write": %d, "status": %d, "timeout": %d}',
                    e.connect, e.read, e.write, e.status, e.timeout),
      string.format('"latency_count": %d', #latency),
      string.format('"latency_us": {"min": %d, "mean": %.1f, "p50": %d, "p90": %d, "p99": %d, ' ..
                    '"p99.9": %d, "max": %d}', latency.min, mean, latency:percentile(50),
                    latency:percentile(90), latency:percentile(99), latency:percentile(99.9), latency.max),
      string.format('"slow_share": %.9f', share_above(latency, slow_us)),
      '"spectrum_us": ' .. spectrum(latency),
      '"histogram_us": ' .. histogram_runs(latency),
   }
   -- With a scenario: the responses whose status is not in its success list, over every thread.
   local failed = nil
   for _, thread in ipairs(threads) do
      local count = thread:get("not_success")
      if count ~= nil then failed = (failed or 0) + count end
   end
   if failed ~= nil then fields[#fields + 1] = string.format('"not_success": %d', failed) end
   local path = (os.getenv("CAPBENCH_STEP_DIR") or ".") .. "/wrk2.json"
   local out = assert(io.open(path, "w"))
   out:write("{" .. table.concat(fields, ", ") .. "}\n")
   out:close()
end
