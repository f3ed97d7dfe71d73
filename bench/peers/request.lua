-- One wrk script for every system and endpoint of bench/peers, chosen by environment
-- variables: PEER_KIND = anteroom | simple | nextjs, PEER_OP = join | status, PEER_IDS
-- (status: a file of ids or tokens of visitors already queued), PEER_ROOM (anteroom).
--
-- join: each request is a new visitor.
--   anteroom  POST /api/rooms/<room>/join            (no cookie: a new visitor)
--   simple    POST /waiting/add {"userId": <new id>}
--   nextjs    GET  /api/waiting-room/status, cookie __wr_id=<new id> (its join: tryAdmit
--             queues an unknown id; /api/waiting-room/init only sets the cookie)
-- status: the visitors of PEER_IDS in turn.
--   anteroom  GET /api/rooms/<room>/status, Authorization: Bearer <visitor token>
--   simple    GET /waiting/check?userId=<id>
--   nextjs    GET /api/waiting-room/status, cookie __wr_id=<id>
package.path = debug.getinfo(1, "S").source:match("@(.*/)") .. "?.lua;" .. package.path
local common = require("common")

local kind = os.getenv("PEER_KIND")
local op = os.getenv("PEER_OP")
local room = os.getenv("PEER_ROOM") or "bench"
local run = os.getenv("PEER_RUN") or "0"

setup = common.setup
done = common.done

local ids, n, i = {}, 0, 0

function init(args)
  if op == "status" then
    ids = common.load_ids()
    n = #ids
    i = (tid * 7919) % n -- threads start apart
  end
end

local function new_id()
  i = i + 1
  return string.format("r%s-t%d-%d", run, tid, i)
end

local function next_id()
  i = i % n + 1
  return ids[i]
end

if kind == "anteroom" and op == "join" then
  local path = "/api/rooms/" .. room .. "/join"
  request = function() return wrk.format("POST", path, {["Content-Length"] = "0"}) end
elseif kind == "anteroom" then
  local path = "/api/rooms/" .. room .. "/status"
  request = function()
    return wrk.format("GET", path, {["Authorization"] = "Bearer " .. next_id()})
  end
elseif kind == "simple" and op == "join" then
  request = function()
    return wrk.format("POST", "/waiting/add", {["Content-Type"] = "application/json"},
      '{"userId":"' .. new_id() .. '"}')
  end
elseif kind == "simple" then
  request = function() return wrk.format("GET", "/waiting/check?userId=" .. next_id()) end
elseif kind == "nextjs" then
  local pick = op == "join" and new_id or next_id
  request = function()
    return wrk.format("GET", "/api/waiting-room/status", {["Cookie"] = "__wr_id=" .. pick()})
  end
elseif kind == "ceiling" then
  request = function() return wrk.format("GET", "/") end
else
  error("PEER_KIND / PEER_OP: " .. tostring(kind) .. " / " .. tostring(op))
end
