-- stats(): room figures. Returns {queue_length, active, capacity, paused, closed, stock,
-- admits, reaped}.
local cfg = load_cfg()
if not cfg then return {'no_room'} end
local now = now_ms()
local s = redis.call('HMGET', K_ST, 'admits', 'reaped')
return {redis.call('ZCARD', K_Q), active_count(now), cfg.capacity, cfg.paused and 1 or 0,
  cfg.closed and 1 or 0, cfg.stock, tonumber(s[1]) or 0, tonumber(s[2]) or 0}
