-- Reads the revocation log from a cursor (src/store/revocation.rs).
-- KEYS[1] = log (ZSET member -> sequence number), KEYS[2] = the sequence (STRING).
-- ARGV[1] = cursor (the last sequence number read; 0 at first), ARGV[2] = limit.
-- A cursor past the sequence means the log was lost (FLUSHALL, a restart without
-- persistence, the keys expired): the read starts again from 0.
-- Returns {cursor used, member, number, member, number, ...}: at most limit + 1 entries,
-- so the caller sees whether more are waiting.
local seq = tonumber(redis.call('GET', KEYS[2]) or '0')
local cursor = tonumber(ARGV[1])
if cursor > seq then cursor = 0 end
local rows = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. cursor, '+inf', 'WITHSCORES',
  'LIMIT', 0, tonumber(ARGV[2]) + 1)
table.insert(rows, 1, cursor)
return rows
