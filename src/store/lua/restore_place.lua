-- restore_place(visitor, ticket, joined_ms): puts back a place that a store which lost its
-- data forgot (a hub's socket knows its ticket), with its original ticket, so places put
-- back by any instance in any order keep their original order; later tickets start after
-- it (`seq` is raised). It does not promote: the promoter lets the restored in, in ticket
-- order, once the instances have put their places back. Idempotent: a visitor who holds a
-- place or a session keeps it. Returns the reply (with the place), or {'no_room'}.
local v, ticket, joined = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local cfg = load_cfg()
if not cfg then return {'no_room'} end
local now = now_ms()
if is_admitted(v, now) then return reply('admitted', v, cfg, now, {}) end
local r = redis.call('ZRANK', K_Q, v)
if r then
  beat(cfg, now, v)
  return reply(waiting_state(cfg, true), v, cfg, now, {}, false, r + 1, place_of(v))
end
if cfg.closed then return reply('closed', v, cfg, now, {}) end
redis.call('ZADD', K_Q, string.format('%d', ticket), v)
beat(cfg, now, v, true)
-- A place put back may be ahead of others: the hubs' local counts must hear of it.
log_line('b', {{string.format('%d', ticket), v}})
redis.call('HSET', K_JT, v, string.format('%d', joined))
if (tonumber(redis.call('HGET', K_ST, 'seq')) or 0) < ticket then
  redis.call('HSET', K_ST, 'seq', string.format('%d', ticket))
end
return reply(waiting_state(cfg, true), v, cfg, now, {}, false, nil, {ticket, joined})
