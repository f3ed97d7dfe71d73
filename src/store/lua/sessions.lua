-- sessions(expires_from, gone_after, limit): the room's live sessions whose expiry is at
-- or after ARGV[1] (from now on when that is past), soonest expiry first, at most ARGV[3]
-- of them; and, when ARGV[2] is not '', the releases (`st:gone`) at or after it. Returns
-- {now, {visitor, serial, issued_ms, expires_ms, ...}, {visitor, released_ms, ...},
-- flushed_ms or false}: the last flush of the queue, so instances know which places
-- ended with it (src/domain/ended.rs).
-- Each instance keeps a picture of the live sessions this way to put them back if the
-- store loses its data: pages of a full listing now and then, and in between only what
-- changed (sessions that expire later than any it has seen, and releases since).
-- Records are read 1,000 at a time: unpack() of more arguments than Lua's stack holds
-- (about 8,000) fails.
local cfg = load_cfg()
if not cfg then return {'no_room'} end
local now = now_ms()
local from = tonumber(ARGV[1])
local lo = from > now and string.format('%d', from) or ('(' .. now)
local act = redis.call('ZRANGEBYSCORE', K_ACT, lo, '+inf', 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[3]))
local out = {}
local i = 1
while i <= #act do
  local vs, exps = {}, {}
  while i <= #act and #vs < 1000 do
    vs[#vs + 1] = act[i]
    exps[#exps + 1] = act[i + 1]
    i = i + 2
  end
  local recs = redis.call('HMGET', K_SESS, unpack(vs))
  for j = 1, #vs do
    if recs[j] then
      local serial, issued = parse_session(recs[j])
      out[#out + 1] = vs[j]
      out[#out + 1] = serial
      out[#out + 1] = issued
      out[#out + 1] = tonumber(exps[j])
    end
  end
end
local gone = {}
if ARGV[2] ~= '' then
  gone = redis.call('ZRANGEBYSCORE', K_GONE, ARGV[2], '+inf', 'WITHSCORES')
end
local flushed = redis.call('HGET', K_ST, 'flushed')
return {now, out, gone, flushed and tonumber(flushed) or false}
