-- flush(): empties the queue (admitted sessions are kept). Returns how many were queued.
local cfg = load_cfg()
if not cfg then return {'no_room'} end
local n = redis.call('ZCARD', K_Q)
redis.call('DEL', K_Q, K_HB, K_JT, K_LANEV, K_LOG)
-- The line starts afresh: hubs see a new epoch and read their sockets' places again.
redis.call('HDEL', K_ST, 'lepoch')
-- When: every place taken before it ended, and instances that keep what ended read it
-- (sessions.lua) so that no receipt puts such a place back after a data loss.
redis.call('HSET', K_ST, 'flushed', now_ms())
-- No one waits in any lane now (the admitted counts stay).
for _, f in ipairs(redis.call('HKEYS', K_LANES)) do
  if string.sub(f, 1, 2) == 'w:' then redis.call('HDEL', K_LANES, f) end
end
return n
