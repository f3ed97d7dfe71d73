-- KEYS[1] = sockets HASH; ARGV[1] = forget entries older than this (ms).
-- Returns {field, count, age_ms, ...} for the rest.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local h = redis.call('HGETALL', KEYS[1])
local out = {}
for i = 1, #h, 2 do
  local v = h[i + 1]
  local sep = string.find(v, ':', 1, true)
  local age = now - tonumber(string.sub(v, sep + 1))
  if age > tonumber(ARGV[1]) then
    redis.call('HDEL', KEYS[1], h[i])
  else
    out[#out + 1] = h[i]
    out[#out + 1] = tonumber(string.sub(v, 1, sep - 1))
    out[#out + 1] = age
  end
end
return out
