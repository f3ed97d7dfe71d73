-- reap(batch): drops up to `batch` queued visitors whose last heartbeat is older than
-- the room's heartbeat timeout and prunes up to `batch` expired sessions. Bounded so
-- Redis is never blocked for long; the caller repeats while a batch comes back full.
-- ARGV[1] = batch, ARGV[2] = how long a dropped visitor is remembered (AWAY_KEEP_MS in
-- store/mod.rs). Returns {dropped, expired}.
local cfg = load_cfg()
if not cfg then return {'no_room'} end
local now = now_ms()
local batch = tonumber(ARGV[1])
local stale = redis.call('ZRANGEBYSCORE', K_HB, '-inf', now - cfg.hb_ms, 'LIMIT', 0, batch)
if #stale > 0 then
  redis.call('ZREM', K_Q, unpack(stale))
  left_line(cfg, stale, false)
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
return {#stale, #expired}
