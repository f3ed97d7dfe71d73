-- eta_basis(): what the ETA model (domain/eta.rs) needs, read once a second per room
-- per instance. Returns {now, capacity, ttl_ms, rate_cap, stock, paused, closed,
-- queue_length, active, sessions, ends, window, admitted_5min, reaped_5min} where
-- sessions = {issued_ms, expires_ms, ...} of up to BASIS_SESSIONS live sessions, soonest
-- expiry first; ends = the last session ends as `end_ms:duration_ms`, newest first;
-- window = admission times of the last WINDOW_MS (only with a rate cap).
local cfg = load_cfg()
if not cfg then return {'no_room'} end
local now = now_ms()
local act = redis.call('ZRANGEBYSCORE', K_ACT, '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0,
  BASIS_SESSIONS)
local sessions = {}
for i = 1, #act, 2 do
  local s = redis.call('HGET', K_SESS, act[i]) or '0:0'
  sessions[#sessions + 1] = tonumber(string.sub(s, string.find(s, ':', 1, true) + 1))
  sessions[#sessions + 1] = tonumber(act[i + 1])
end
local window = {}
if cfg.rate_cap > 0 then
  local w = redis.call('ZRANGEBYSCORE', K_WIN, now - WINDOW_MS, '+inf', 'WITHSCORES')
  for i = 2, #w, 2 do window[#window + 1] = tonumber(w[i]) end
end
local m = math.floor(now / 60000)
local a, r = 0, 0
for i = 0, 4 do
  local v = redis.call('HMGET', K_ST .. ':m:' .. (m - i), 'a', 'r')
  a = a + (tonumber(v[1]) or 0)
  r = r + (tonumber(v[2]) or 0)
end
return {now, cfg.capacity, cfg.ttl_ms, cfg.rate_cap, cfg.stock, cfg.paused and 1 or 0,
  cfg.closed and 1 or 0, redis.call('ZCARD', K_Q), active_count(now), sessions,
  redis.call('LRANGE', K_ENDS, 0, -1), window, a, r}
