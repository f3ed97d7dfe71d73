-- flush(): empties the queue (admitted sessions are kept). Returns how many were queued.
local cfg = load_cfg()
if not cfg then return {'no_room'} end
local n = redis.call('ZCARD', K_Q)
redis.call('DEL', K_Q, K_HB, K_JT)
return n
