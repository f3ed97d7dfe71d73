-- join(visitor): idempotent. ARGV[1] = visitor id.
local v = ARGV[1]
local cfg = load_cfg()
if not cfg then return {'no_room'} end
local now = now_ms()
if is_admitted(v, now) then return reply('admitted', v, cfg, now, {}) end
if cfg.closed then return reply('closed', v, cfg, now, {}) end
-- Fill freed slots from the head first, so a newcomer never overtakes the queue.
local promoted = promote(cfg, now, PROMOTE_LIMIT)
for i = 1, #promoted do
  if promoted[i] == v then return reply('admitted', v, cfg, now, promoted) end
end
local r = redis.call('ZRANK', K_Q, v)
if r then
  redis.call('ZADD', K_HB, now, v)
  return reply(waiting_state(cfg, true), v, cfg, now, promoted, false, r + 1)
end
-- Dropped for silence earlier? Then this join puts them at the back, and says so.
local away = redis.call('ZREM', K_AWAY, v) == 1
if cfg.stock == 0 then return reply('sold_out', v, cfg, now, promoted) end
if not cfg.paused and redis.call('ZCARD', K_Q) == 0 and free_slots(cfg, now) > 0 then
  publish({admit(cfg, v, now)})
  return reply('admitted', v, cfg, now, promoted)
end
local ticket = redis.call('HINCRBY', K_ST, 'seq', 1)
redis.call('ZADD', K_Q, ticket, v)
redis.call('ZADD', K_HB, now, v)
redis.call('HSET', K_JT, v, now)
return reply(waiting_state(cfg, true), v, cfg, now, promoted, away)
