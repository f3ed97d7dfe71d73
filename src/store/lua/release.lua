-- release(visitor): ends the session or leaves the queue at once, then promotes.
-- ARGV[1] = visitor id, ARGV[2] = promote limit. Returns {released 0|1, {admitted...},
-- serial, issued_ms, expires_ms} where the last three describe the live session it ended
-- (0, 0, 0 when none was live), so the caller can revoke that session's passes.
local v = ARGV[1]
local cfg = load_cfg()
if not cfg then return {'no_room'} end
local now = now_ms()
local exp = redis.call('ZSCORE', K_ACT, v)
local ended_serial, ended_issued, ended_exp = 0, 0, 0
if exp then
  exp = tonumber(exp)
  -- Releasing is being there: the session was a stay.
  if exp > now then
    claim(v)
    local s = redis.call('HGET', K_SESS, v)
    if s then
      ended_serial, ended_issued = parse_session(s)
      ended_exp = exp
    end
  end
  session_ended(v, exp < now and exp or now)
end
local ticket = redis.call('ZSCORE', K_Q, v)
local left = 0
if ticket then
  redis.call('ZREM', K_Q, v)
  left = 1
  log_line('l', {{ticket, v}})
end
-- Leaving the pre-queue before the shuffle placed it (after, the pre-queue is the
-- record the fairness digests are computed from, and stays).
if cfg.phase ~= 'open' and not redis.call('ZSCORE', K_ST .. ':pqd', v) then
  left = left + redis.call('ZREM', K_PQ, v)
end
if left > 0 then left_line(cfg, {v}, false) end
local n = redis.call('ZREM', K_ACT, v) + left
forget_active()
redis.call('HDEL', K_SESS, v)
redis.call('ZREM', K_HB, v)
redis.call('HDEL', K_JT, v)
if ended_serial > 0 then event('release', v, ended_serial) end
-- Remember the visitor left: an instance about to put back a session it knew (after the
-- store lost its data or failed over) must not revive one that ended after it was issued.
redis.call('ZREMRANGEBYSCORE', K_GONE, '-inf', now - GONE_KEEP_MS)
redis.call('ZADD', K_GONE, now, v)
redis.call('PEXPIRE', K_GONE, GONE_KEEP_MS)
return {n > 0 and 1 or 0, promote(cfg, now, tonumber(ARGV[2])), ended_serial, ended_issued, ended_exp}
