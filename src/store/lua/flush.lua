-- flush(): empties the queue (admitted sessions are kept). Returns how many were queued.
local cfg = load_cfg()
if not cfg then return {'no_room'} end
local n = redis.call('ZCARD', K_Q)
redis.call('DEL', K_Q, K_HB, K_JT, K_LANEV, K_LOG)
-- The line starts afresh: hubs see a new epoch and read their sockets' places again.
redis.call('HDEL', K_ST, 'lepoch')
-- No one waits in any lane now (the admitted counts stay).
for _, f in ipairs(redis.call('HKEYS', K_LANES)) do
  if string.sub(f, 1, 2) == 'w:' then redis.call('HDEL', K_LANES, f) end
end
return n
