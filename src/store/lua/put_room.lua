-- put_room(create_only, field, value, ...): writes the live config hash atomically and
-- bumps its `version` (a new room starts at 1). With create_only = '1' an existing room
-- is left as it is. Returns 1 if written.
if ARGV[1] == '1' and redis.call('EXISTS', K_CFG) == 1 then return 0 end
local fields = {}
for i = 2, #ARGV do fields[#fields + 1] = ARGV[i] end
local strides = redis.call('HGET', K_CFG, 'lane_strides')
redis.call('HSET', K_CFG, unpack(fields))
settle_tickets(strides)
redis.call('HINCRBY', K_CFG, 'version', 1)
return 1
