-- watch(visitor...): one call serves a batch of connected visitors (the WebSocket hub
-- calls it once per tick per room per 1,000 sockets). Refreshes each queued visitor's
-- heartbeat, so an open socket keeps its place.
-- Returns {room_view, entries} where entries holds 4 integers per visitor:
--   kind (0 queued, 1 admitted, -1 neither), position or serial, issued_ms, expires_ms.
local cfg = load_cfg()
if not cfg then return {'no_room'} end
local now = now_ms()
local entries = {}
for i = 1, #ARGV do
  local v = ARGV[i]
  local exp = redis.call('ZSCORE', K_ACT, v)
  if exp and tonumber(exp) > now then
    local s = redis.call('HGET', K_SESS, v) or '0:0'
    local sep = string.find(s, ':', 1, true)
    entries[#entries + 1] = 1
    entries[#entries + 1] = tonumber(string.sub(s, 1, sep - 1))
    entries[#entries + 1] = tonumber(string.sub(s, sep + 1))
    entries[#entries + 1] = tonumber(exp)
  else
    local r = redis.call('ZRANK', K_Q, v)
    if r then
      redis.call('ZADD', K_HB, now, v)
      entries[#entries + 1] = 0
      entries[#entries + 1] = r + 1
    else
      entries[#entries + 1] = -1
      entries[#entries + 1] = 0
    end
    entries[#entries + 1] = 0
    entries[#entries + 1] = 0
  end
end
return {room_view(cfg, now), entries}
