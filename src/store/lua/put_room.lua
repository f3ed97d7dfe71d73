-- put_room(create_only, hold_ms, field, value, ...): writes the live config hash
-- atomically and bumps its `version` (a new room starts at 1). With create_only = '1' an
-- existing room is left as it is. hold_ms > 0 (a room re-created after the store lost its
-- data) holds admissions and new places for that long (`hold_until`, Redis time): the
-- instances put back the places and sessions they know first. Returns 1 if written.
if ARGV[1] == '1' and redis.call('EXISTS', K_CFG) == 1 then return 0 end
local fields = {}
for i = 3, #ARGV do fields[#fields + 1] = ARGV[i] end
local strides = redis.call('HGET', K_CFG, 'lane_strides')
local old_mode = redis.call('HGET', K_CFG, 'mode')
local times = event_times()
redis.call('HSET', K_CFG, unpack(fields))
event_reset(times)
local hold = tonumber(ARGV[2]) or 0
if hold > 0 then
  redis.call('HSET', K_CFG, 'hold_until', string.format('%d', now_ms() + hold))
end
settle_tickets(strides)
settle_after_random(old_mode)
redis.call('HINCRBY', K_CFG, 'version', 1)
cfg_written()
return 1
