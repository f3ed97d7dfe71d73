-- status(visitor): where the visitor stands; refreshes a queued visitor's heartbeat.
-- ARGV[1] = visitor id.
local v = ARGV[1]
local cfg = load_cfg()
if not cfg then return {'no_room'} end
local now = now_ms()
if is_admitted(v, now) then return reply('admitted', v, cfg, now, {}) end
local queued = redis.call('ZSCORE', K_Q, v) ~= false
if queued then redis.call('ZADD', K_HB, now, v) end
return reply(waiting_state(cfg, queued), v, cfg, now, {})
