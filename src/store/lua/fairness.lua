-- fairness(): what the fairness record is read from. Returns {pq_at, open_at, close_at,
-- mode, seed ('' when none), shuffled (0|1), pre-queue count, shuffles, now, closed
-- (0|1), ended (0|1)}; times '' when unset. The seed is always returned: Rust decides
-- whether it may be shown (store::seed_revealed).
local cfg = load_cfg()
if not cfg then return {'no_room'} end
local now = now_ms()
local st = redis.call('HMGET', K_ST, 'seed', 'shuffled', 'shuffles')
local t = function(x) return x and string.format('%d', x) or '' end
return {t(cfg.pq_at), t(cfg.open_at), t(cfg.close_at), cfg.mode, st[1] or '',
  st[2] == '1' and 1 or 0, redis.call('ZCARD', K_PQ), tonumber(st[3]) or 0, now,
  cfg.closed and 1 or 0, cfg.ended and 1 or 0}
