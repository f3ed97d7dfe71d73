-- away(visitor, grace_ms): the visitor's page went to the background (a hidden tab, a
-- locked phone) and said so: a queued visitor keeps the place until grace_ms after the
-- *first* hide of this hidden spell, without a heartbeat, by moving the heartbeat forward
-- (never back: every heartbeat write is ZADD GT). Returns 1 if the visitor is queued
-- (held), else 0.
--
-- The spell's start lives in `<st>:hidden` (ZSET visitor -> first hide, ms). Before issue
-- 28 each beacon held for grace_ms from now, so one beacon every ~10 min held a place
-- forever. Now a beacon only starts a new spell when the heartbeat has moved past what
-- the spell's hold set (the visitor was seen, heartbeating, as the hold ran out); else it
-- holds to the spell's first hide + grace_ms, no further. Entries older than two graces
-- are pruned here, and the key lapses two graces after the last beacon.
local v, grace = ARGV[1], tonumber(ARGV[2])
local cfg = load_cfg()
if not cfg then return {'no_room'} end
if not redis.call('ZSCORE', K_Q, v) then return 0 end
local now = now_ms()
if grace > cfg.hb_ms then
  local k_hidden = K_ST .. ':hidden'
  local first = tonumber(redis.call('ZSCORE', k_hidden, v))
  local hb = tonumber(redis.call('ZSCORE', K_HB, v)) or 0
  if not first or hb > first + grace - cfg.hb_ms then
    first = now
    redis.call('ZADD', k_hidden, now, v)
  end
  redis.call('ZADD', K_HB, 'GT', first + grace - cfg.hb_ms, v)
  redis.call('ZREMRANGEBYSCORE', k_hidden, '-inf', now - 2 * grace)
  redis.call('PEXPIRE', k_hidden, 2 * grace)
end
return 1
