-- Shared by the wrk scripts of bench/peers (wrk 4.1, LuaJIT): per-thread ids, the token
-- file of a status run, and one JSON line of figures at the end (read by bench/peers.py).
-- Each script sets `request` and may call `load_ids` in `init`.
local M = {}
local threads = {}
local counter = 1

-- setup: gives each thread its number, so ids are unique across threads.
function M.setup(thread)
  thread:set("tid", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

-- The lines of the file named by the environment variable `PEER_IDS` (one visitor id or
-- token a line), for status runs.
function M.load_ids()
  local ids = {}
  local path = os.getenv("PEER_IDS")
  if not path then return ids end
  for line in io.lines(path) do
    if #line > 0 then ids[#ids + 1] = line end
  end
  return ids
end

function M.done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests": %d, "duration_us": %d, "p50_us": %d, "p99_us": %d, "max_us": %d, ' ..
    '"errors": {"connect": %d, "read": %d, "write": %d, "status": %d, "timeout": %d}}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    latency.max, e.connect, e.read, e.write, e.status, e.timeout))
end

return M
