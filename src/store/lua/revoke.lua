-- Appends a revoked pass to the revocation log (src/store/revocation.rs).
-- KEYS[1] = log (ZSET member -> sequence number), KEYS[2] = expiries (ZSET member ->
-- expiry, ms), KEYS[3] = the sequence (STRING).
-- ARGV[1] = member ("room visitor serial expires_ms"), ARGV[2] = its expiry (ms),
-- ARGV[3] = most expired entries swept by this call.
-- Sweeps expired entries, then, unless this one has expired too, writes it at the next
-- sequence number (a member written again moves to the new number). The three keys live
-- a second past the latest expiry they hold, so an idle log disappears by itself.
-- Returns the sequence number, or 0 when nothing was written. Redis TIME is the clock.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local old = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))
if #old > 0 then
  redis.call('ZREM', KEYS[1], unpack(old))
  redis.call('ZREM', KEYS[2], unpack(old))
end
local exp = tonumber(ARGV[2])
if exp <= now then return 0 end
local seq = redis.call('INCR', KEYS[3])
redis.call('ZADD', KEYS[1], seq, ARGV[1])
redis.call('ZADD', KEYS[2], exp, ARGV[1])
local ttl = exp - now + 1000
for i = 1, 3 do
  if redis.call('PTTL', KEYS[i]) < ttl then redis.call('PEXPIRE', KEYS[i], ttl) end
end
return seq
