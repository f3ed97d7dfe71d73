-- event_seed(candidate): the room's event seed (64 lowercase hex), set to `candidate`
-- if the room has none (HSETNX: every instance reads the one written first). Only its
-- SHA-256 is published until the shuffle (Store::fairness computes it in Rust: Lua has
-- no SHA-256). Returns the seed.
local cfg = load_cfg()
if not cfg then return {'no_room'} end
redis.call('HSETNX', K_ST, 'seed', ARGV[1])
return redis.call('HGET', K_ST, 'seed')
