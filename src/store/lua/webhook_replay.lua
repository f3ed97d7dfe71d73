-- Moves webhook dead letters back to the retries (src/store/webhook.rs).
-- KEYS[1] = the kept letters (LIST of JSON, newest first), KEYS[2] = the retries (ZSET
-- event id -> due ms), KEYS[3] = their records (HASH event id -> JSON).
-- ARGV[1] = when the retries are due (ms), then a triple per letter: the letter exactly
-- as kept (a LIST member), its event id, and the retry record to park (JSON, built by the
-- caller: no JSON is made here).
-- A letter is moved only if this call removed it from the list, so two replays of one
-- letter (two admins at once) move it once. Returns the event ids moved.
local moved = {}
for i = 2, #ARGV, 3 do
  if redis.call('LREM', KEYS[1], 1, ARGV[i]) == 1 then
    redis.call('ZADD', KEYS[2], ARGV[1], ARGV[i + 1])
    redis.call('HSET', KEYS[3], ARGV[i + 1], ARGV[i + 2])
    moved[#moved + 1] = ARGV[i + 1]
  end
end
return moved
