-- KEYS[1] = sockets HASH; ARGV = instance, then room, count pairs. Each field
-- "<instance>|<room>" holds "<count>:<Redis time ms>"; readers skip stale entries.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i = 2, #ARGV, 2 do
  redis.call('HSET', KEYS[1], ARGV[1] .. '|' .. ARGV[i], ARGV[i + 1] .. ':' .. now)
end
return 1
