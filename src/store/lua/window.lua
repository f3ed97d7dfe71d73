-- Fixed-window counter: KEYS[1] = counter, ARGV[1] = window (ms).
-- Returns {count, ms until the window resets}.
local c = redis.call('INCR', KEYS[1])
if c == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  -- A counter without expiry (e.g. a crash between INCR and PEXPIRE on an old server)
  -- would block the visitor forever; give it a window.
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {c, ttl}
