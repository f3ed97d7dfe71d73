-- restore_session(visitor, serial, issued_ms, expires_ms): puts back an admission that a
-- store which lost its data (or a failover) forgot, from the visitor's unexpired pass, so
-- it counts against capacity again. `admits` is raised to its serial whether or not it is
-- put back, so no later admission reuses a serial someone was given. Nothing is put back
-- if the pass has expired, the visitor holds a session (the answer: is it this one) or a
-- place in line (they joined again), or released after this admission was issued
-- (st:gone). Returns 1 if the admission is live now, else 0; or {'no_room'}.
local v, serial = ARGV[1], tonumber(ARGV[2])
local issued, expires = tonumber(ARGV[3]), tonumber(ARGV[4])
local cfg = load_cfg()
if not cfg then return {'no_room'} end
local now = now_ms()
if (tonumber(redis.call('HGET', K_ST, 'admits')) or 0) < serial then
  redis.call('HSET', K_ST, 'admits', string.format('%d', serial))
end
if expires <= now then return 0 end
if is_admitted(v, now) then
  local s = redis.call('HGET', K_SESS, v)
  return (s and parse_session(s) == serial) and 1 or 0
end
if redis.call('ZSCORE', K_Q, v) then return 0 end
local gone = redis.call('ZSCORE', K_GONE, v)
if gone and tonumber(gone) >= issued then return 0 end
redis.call('ZADD', K_ACT, string.format('%d', expires), v)
redis.call('HSET', K_SESS, v, string.format('%d', serial) .. ':' .. string.format('%d', issued))
forget_active()
return 1
