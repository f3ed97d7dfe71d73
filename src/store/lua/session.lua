-- session_live(visitor, serial[, present]): is this exact admission still live? A live
-- one is claimed (its visitor is there: a pass checked, or a socket told of the admission).
-- ARGV[1] = visitor id, ARGV[2] = admission serial, ARGV[3] = '1' when the pass was
-- presented at the origin (the gateway or `verify`): a live session's no-show deadline
-- is cleared (docs/outflow.md#no-shows; one more call, made once per session per
-- instance: crate::domain::presented). Returns 1 or 0.
local v = ARGV[1]
if not is_admitted(v, now_ms()) then return 0 end
local s = redis.call('HGET', K_SESS, v)
if not s then return 0 end
local sep = string.find(s, ':', 1, true)
if string.sub(s, 1, sep - 1) == ARGV[2] then
  claim(v)
  if ARGV[3] == '1' then redis.call('ZREM', K_ST .. ':claim', v) end
  return 1
end
return 0
