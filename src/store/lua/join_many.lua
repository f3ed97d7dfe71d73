-- join_many(n, then join's seven arguments for each of n visitors): the joins an instance
-- took together (store/join_batch.rs), one after the other in arrival order, each exactly
-- as join would take it alone, with the room's configuration read and the clock read once
-- for all, and what a batch can write once written once, at its end (DEFER in common.lua:
-- the admission serial, the minute's counters, one admission message). Returns the list
-- of their replies (each as join's: a reply, {'too_many_places'} or {'held', ms}), or
-- {'no_room'}.
local cfg = load_cfg()
if not cfg then return {'no_room'} end
local now = now_ms()
local out = {}
defer_writes()
for i = 0, tonumber(ARGV[1]) - 1 do
  out[i + 1] = join_one(cfg, now, ARGV, 1 + i * 7)
end
flush_deferred()
return out
