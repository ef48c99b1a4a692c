-- capbench's script for a wrk2 binary the user supplies: builds each request for the scenario, and at the end
-- writes the results as JSON (wrk2's done() reporter) to $CAPBENCH_STEP_DIR/wrk2.json.
--   wrk2 ... -s capbench.lua URL -- USERS_FILE SESSION_REQUESTS
-- With a users file: the study's user, SESSION_REQUESTS requests in succession with one user id, then a new
-- random id from the file. Without arguments: every request is the URL as given.

local slow_us = 5000 * 1000  -- the study counts responses slower than 5 s as failures

-- Runs once per thread in the main script state, before the threads start.
local thread_count = 0
function setup(thread)
   thread_count = thread_count + 1
   thread:set("thread_id", thread_count)
end

local users = nil
local session_requests = 0
local sent_in_session = 0
local path_with_user = nil

function init(args)
   if #args >= 2 then
      users = {}
      for line in io.lines(args[1]) do
         if line ~= "" then users[#users + 1] = line end
      end
      session_requests = tonumber(args[2])
      local sep = string.find(wrk.path, "?", 1, true) and "&" or "?"
      path_with_user = wrk.path .. sep .. "user="
      -- Each thread its own sequence of users (thread_id is set by setup() below).
      math.randomseed(os.time() * 1000 + (thread_id or 0))
   end
end

local current_user = nil

function request()
   if users == nil then
      return wrk.format(nil, wrk.path)
   end
   if sent_in_session == 0 then
      current_user = users[math.random(#users)]
   end
   sent_in_session = (sent_in_session + 1) % session_requests
   return wrk.format(nil, path_with_user .. current_user)
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

-- The latency spectrum's percentiles: the same as load/step.py's SPECTRUM_PERCENTILES, then 100 (the max).
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
   local path = (os.getenv("CAPBENCH_STEP_DIR") or ".") .. "/wrk2.json"
   local out = assert(io.open(path, "w"))
   out:write("{" .. table.concat(fields, ", ") .. "}\n")
   out:close()
end
