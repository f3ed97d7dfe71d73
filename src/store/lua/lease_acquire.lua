-- Take or renew a lease: KEYS[1] = lease, ARGV[1] = holder token, ARGV[2] = ttl (ms).
-- Free → SET NX PX (taken); held by this token → PEXPIRE (renewed); else refused.
-- Returns 1 when the caller holds the lease afterwards.
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
