-- away(visitor, grace_ms): the visitor's page went to the background (a hidden tab, a
-- locked phone) and said so: a queued visitor keeps the place for grace_ms from now
-- without a heartbeat, by moving the heartbeat forward (never back: every heartbeat write
-- is ZADD GT). Returns 1 if the visitor is queued (held), else 0.
local v, grace = ARGV[1], tonumber(ARGV[2])
local cfg = load_cfg()
if not cfg then return {'no_room'} end
if not redis.call('ZSCORE', K_Q, v) then return 0 end
local now = now_ms()
if grace > cfg.hb_ms then
  redis.call('ZADD', K_HB, 'GT', now + grace - cfg.hb_ms, v)
end
return 1
