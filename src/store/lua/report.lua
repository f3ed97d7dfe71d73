-- report(minutes): room figures for the admin view: {room_view, admits, reaped,
-- {minute, fields...}...} for the last `minutes` minutes that have data, lane_counts}.
local cfg = load_cfg()
if not cfg then return {'no_room'} end
local now = now_ms()
local st = redis.call('HMGET', K_ST, 'admits', 'reaped')
local current = math.floor(now / 60000)
local minutes = {}
for m = current - tonumber(ARGV[1]) + 1, current do
  local h = redis.call('HGETALL', K_ST .. ':m:' .. m)
  if #h > 0 then
    minutes[#minutes + 1] = m
    minutes[#minutes + 1] = h
  end
end
return {room_view(cfg, now), tonumber(st[1]) or 0, tonumber(st[2]) or 0, minutes, lane_counts(cfg)}
