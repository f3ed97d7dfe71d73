-- reap(batch): drops up to `batch` queued visitors whose last heartbeat is older than
-- the room's heartbeat timeout and prunes up to `batch` expired sessions. Bounded so
-- Redis is never blocked for long; the caller repeats while a batch comes back full.
-- ARGV[1] = batch, ARGV[2] = how long a dropped visitor is remembered (AWAY_KEEP_MS in
-- store/mod.rs). Returns {dropped, expired, vouched}.
--
-- Liveness (docs/design.md#socket-updates): a visitor held by a live hub (in the set
-- `<st>:hold:<instance>` of an instance whose lease in K_HOLDERS has not run out) has an
-- open socket: it is not dropped however old its heartbeat, only taken out of K_HB
-- (`vouched`). Once an instance's lease lapses, its held visitors go back to K_HB with
-- the time it last vouched for them, so they are dropped a heartbeat timeout after that
-- unless they come back; at most `batch` of them per call.
local cfg = load_cfg()
if not cfg then return {'no_room'} end
local now = now_ms()
local batch = tonumber(ARGV[1])
local lapsed = redis.call('ZRANGEBYSCORE', K_HOLDERS, '-inf', now, 'WITHSCORES', 'LIMIT', 0, 1)
if #lapsed > 0 then
  local k = K_ST .. ':hold:' .. lapsed[1]
  local vouched_at = tonumber(lapsed[2]) - HOLD_LEASE_MS
  local held = redis.call('SPOP', k, batch)
  for i = 1, #held do
    if redis.call('ZSCORE', K_Q, held[i]) then redis.call('ZADD', K_HB, 'GT', vouched_at, held[i]) end
  end
  if redis.call('EXISTS', k) == 0 then redis.call('ZREM', K_HOLDERS, lapsed[1]) end
end
local candidates = redis.call('ZRANGEBYSCORE', K_HB, '-inf', now - cfg.hb_ms, 'LIMIT', 0, batch)
local stale, vouched = candidates, {}
if #candidates > 0 then
  local live = redis.call('ZRANGEBYSCORE', K_HOLDERS, '(' .. now, '+inf')
  if #live > 0 then
    local held = {}
    for j = 1, #live do
      local m = redis.call('SMISMEMBER', K_ST .. ':hold:' .. live[j], unpack(candidates))
      for i = 1, #m do if m[i] == 1 then held[i] = true end end
    end
    stale = {}
    for i = 1, #candidates do
      if held[i] then vouched[#vouched + 1] = candidates[i] else stale[#stale + 1] = candidates[i] end
    end
    if #vouched > 0 then redis.call('ZREM', K_HB, unpack(vouched)) end
  end
end
if #stale > 0 then
  local left = {}
  local tickets = redis.call('ZMSCORE', K_Q, unpack(stale))
  for i = 1, #stale do
    if tickets[i] then left[#left + 1] = {tickets[i], stale[i]} end
  end
  redis.call('ZREM', K_Q, unpack(stale))
  left_line(cfg, stale, false)
  log_line('l', left)
  redis.call('ZREM', K_HB, unpack(stale))
  redis.call('HDEL', K_JT, unpack(stale))
  redis.call('HINCRBY', K_ST, 'reaped', #stale)
  record(now, 'r', #stale)
  for i = 1, #stale do redis.call('ZADD', K_AWAY, now, stale[i]) end
end
local keep = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', K_AWAY, '-inf', now - keep)
if #stale > 0 then redis.call('PEXPIRE', K_AWAY, keep) end
local flat = redis.call('ZRANGEBYSCORE', K_ACT, '-inf', now, 'WITHSCORES', 'LIMIT', 0, batch)
local expired = {}
for i = 1, #flat, 2 do
  expired[#expired + 1] = flat[i]
  session_ended(flat[i], tonumber(flat[i + 1]))
  event('expiry', flat[i], session_serial(flat[i]))
end
if #expired > 0 then
  redis.call('ZREM', K_ACT, unpack(expired))
  redis.call('HDEL', K_SESS, unpack(expired))
end
return {#stale, #expired, #vouched}
