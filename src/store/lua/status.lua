-- status(visitor, place): where the visitor stands; refreshes a queued visitor's
-- heartbeat. ARGV[1] = visitor id; ARGV[2] = '1' to report a queued visitor's ticket and
-- join time too (for a place receipt: two more reads).
local v = ARGV[1]
local cfg = load_cfg()
if not cfg then return {'no_room'} end
local now = now_ms()
if is_admitted(v, now) then
  claim(v)
  return reply('admitted', v, cfg, now, {})
end
local r = redis.call('ZRANK', K_Q, v)
if r then redis.call('ZADD', K_HB, 'GT', now, v) end
local place = nil
if r and ARGV[2] == '1' then place = place_of(v) end
return reply(waiting_state(cfg, r ~= false), v, cfg, now, {}, false, r and r + 1 or 0, place)
