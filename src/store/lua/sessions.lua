-- sessions(limit): the room's live sessions, soonest expiry first, at most ARGV[1] of
-- them, flat: {visitor, serial, issued_ms, expires_ms, ...}. Each instance keeps this
-- picture (a second old at most) to put the sessions back if the store loses its data.
local cfg = load_cfg()
if not cfg then return {'no_room'} end
local now = now_ms()
local act = redis.call('ZRANGEBYSCORE', K_ACT, '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[1]))
if #act == 0 then return {} end
local vs = {}
for i = 1, #act, 2 do vs[#vs + 1] = act[i] end
local recs = redis.call('HMGET', K_SESS, unpack(vs))
local out = {}
for i = 1, #vs do
  if recs[i] then
    local serial, issued = parse_session(recs[i])
    out[#out + 1] = vs[i]
    out[#out + 1] = serial
    out[#out + 1] = issued
    out[#out + 1] = tonumber(act[2 * i])
  end
end
return out
