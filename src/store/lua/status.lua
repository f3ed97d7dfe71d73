-- status(visitor, place): where the visitor stands; refreshes a queued visitor's
-- heartbeat. ARGV[1] = visitor id; ARGV[2] = '1' to report a queued visitor's ticket and
-- join time too (for a place receipt: two more reads).
-- The line is looked at first: no script puts a visitor with a live session in the line
-- (join, restore_place and the walk-in check for a session first; promote takes a place
-- out before the session is made; restore_session does nothing for a queued visitor),
-- so a queued visitor's status needs no look at the sessions.
local v = ARGV[1]
local cfg = load_cfg()
if not cfg then return {'no_room'} end
local now = now_ms()
local r = redis.call('ZRANK', K_Q, v)
-- An admitted visitor's session, as the claim and the expiry read it, goes to the reply
-- (which would read both again).
local live_until = not r and admitted_until(v, now)
if live_until then
  local serial, issued = claim(v)
  return reply('admitted', v, cfg, now, {}, false, 0, {serial, issued, live_until})
end
if r then beat(cfg, now, v) end
local place = nil
if r and ARGV[2] == '1' then place = place_of(v) end
local state = waiting_state(cfg, r ~= false)
-- A no-show (reap.lua) is told so until their session would have ended.
if state == 'not_queued' and cfg.claim_ms > 0 then
  local until_ms = tonumber(redis.call('ZSCORE', K_ST .. ':noshow', v))
  if until_ms and until_ms > now then state = 'no_show' end
end
return reply(state, v, cfg, now, {}, false, r and r + 1 or 0, place)
