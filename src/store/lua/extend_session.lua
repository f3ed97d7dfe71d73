-- extend_session(visitor, serial, ttl_ms, cap_ms): renews a live session on activity
-- (a room's renew_on_activity): its expiry becomes now + ttl_ms, but never later than
-- its issue time + cap_ms, and never earlier than it already was. Only the live session
-- with this serial: an ended, expired or newer session of the visitor is left alone.
-- Returns {serial, issued_ms, expires_ms} of the session, {} when there is no such live
-- session, or {'no_room'}.
local v, serial = ARGV[1], tonumber(ARGV[2])
local cfg = load_cfg()
if not cfg then return {'no_room'} end
local now = now_ms()
if not is_admitted(v, now) then return {} end
local s = redis.call('HGET', K_SESS, v)
if not s then return {} end
local held, issued = parse_session(s)
if held ~= serial then return {} end
local exp = tonumber(redis.call('ZSCORE', K_ACT, v))
local want = math.min(now + tonumber(ARGV[3]), issued + tonumber(ARGV[4]))
if want > exp then
  redis.call('ZADD', K_ACT, string.format('%d', want), v)
  forget_active()
  exp = want
end
return {serial, issued, exp}
