-- shuffle(seed, first_rank, last, visitor...): one step of the pre-queue's shuffle
-- (domain/drops.rs sorts the pre-queue by HMAC-SHA256(seed, visitor id) and calls this
-- in chunks, under a lease). Puts each listed visitor still unplaced in the line with
-- ticket pq_base + (rank + 1) * LANE_STRIDE, rank = first_rank + its index (0-based), so
-- the line follows the published order, ahead of everyone who joined after open_at
-- (reserve_prequeue). Placed visitors are remembered in `st:pqd`, so a step run twice
-- (a holder that crashed, a retry) places nobody twice. With last = '1' the room is
-- marked shuffled (exactly once: `shuffled` is checked first), an `opened` event added
-- to the room's stream, and the line promoted.
-- Returns {'placed', n} | {'done'} (already shuffled) | {'wrong_seed'} | {'not_due'}.
local cfg = load_cfg()
if not cfg then return {'no_room'} end
local now = now_ms()
if redis.call('HGET', K_ST, 'shuffled') == '1' then return {'done'} end
if not (cfg.pq_at and cfg.open_at) or now < cfg.open_at then return {'not_due'} end
local seed = redis.call('HGET', K_ST, 'seed')
if (seed or '') ~= ARGV[1] then return {'wrong_seed'} end
reserve_prequeue()
local base = tonumber(redis.call('HGET', K_ST, 'pq_base'))
local first = tonumber(ARGV[2])
local placed_key = K_ST .. ':pqd'
local placed = 0
for i = 4, #ARGV do
  local v = ARGV[i]
  local joined = redis.call('ZSCORE', K_PQ, v)
  if joined and not redis.call('ZSCORE', placed_key, v) then
    local rank = first + i - 4
    redis.call('ZADD', placed_key, rank, v)
    if not is_admitted(v, now) then
      redis.call('ZADD', K_Q, string.format('%d', base + (rank + 1) * LANE_STRIDE), v)
      beat(cfg, now, v, true)
      redis.call('HSET', K_JT, v, joined)
    end
    placed = placed + 1
  end
end
if ARGV[3] == '1' then
  redis.call('HSET', K_ST, 'shuffled', '1')
  redis.call('HINCRBY', K_ST, 'shuffles', 1)
  -- The sale is open: the stream says so, in the script that opens it.
  event('opened')
  cfg.phase = 'open'
  promote(cfg, now, PROMOTE_LIMIT)
end
return {'placed', placed}
