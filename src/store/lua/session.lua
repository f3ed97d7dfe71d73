-- session_live(visitor, serial): is this exact admission still live? A live one is
-- claimed (its visitor is there: a pass checked, or a socket told of the admission).
-- ARGV[1] = visitor id, ARGV[2] = admission serial. Returns 1 or 0.
local v = ARGV[1]
if not is_admitted(v, now_ms()) then return 0 end
local s = redis.call('HGET', K_SESS, v)
if not s then return 0 end
local sep = string.find(s, ':', 1, true)
if string.sub(s, 1, sep - 1) == ARGV[2] then
  claim(v)
  return 1
end
return 0
