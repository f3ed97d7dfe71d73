-- join_many(n, then join's seven arguments for each of n visitors): the joins an instance
-- took together (store/join_batch.rs), one after the other in arrival order, each exactly
-- as join would take it alone, with the room's configuration read and the clock read once
-- for all, and what a batch can write once written once, at its end (DEFER in common.lua:
-- the admission serial, the minute's counters, one admission message). Returns one flat
-- list, {'no_room'} aside: the fields the replies share (SHARED.<field>: the room's
-- settings and the clock, the same for every visitor of the call), then each visitor's
-- own (BATCH.<field>, in order; a refusal as state 'too_many_places', or 'held' with the
-- ms as position). One list rather than a list per visitor, because Redis's conversion
-- of the replies cost more than the joins' commands (store/redis/library.rs, SHARED_FIELDS).
local cfg = load_cfg()
if not cfg then return {'no_room'} end
local now = now_ms()
local out = SHARED_NEW
out[SHARED.capacity] = cfg.capacity
out[SHARED.ttl_ms] = cfg.ttl_ms
out[SHARED.rate_cap] = cfg.rate_cap
out[SHARED.target] = cfg.target
out[SHARED.now_ms] = now
local n = #out
defer_writes()
for i = 0, tonumber(ARGV[1]) - 1 do
  local r = join_one(cfg, now, ARGV, 1 + i * 7)
  local rec = BATCH_NEW
  if r[1] == 'too_many_places' or r[1] == 'held' then
    for j = 1, #rec do rec[j] = 0 end
    rec[BATCH.state] = r[1]
    rec[BATCH.position] = r[2] or 0
    rec[BATCH.promoted] = ''
    rec[BATCH.line_epoch] = ''
  else
    rec[BATCH.state] = r[SNAP.state]
    rec[BATCH.position] = r[SNAP.position]
    rec[BATCH.queue_length] = r[SNAP.queue_length]
    rec[BATCH.active] = r[SNAP.active]
    rec[BATCH.stock] = r[SNAP.stock]
    rec[BATCH.serial] = r[SNAP.serial]
    rec[BATCH.issued_ms] = r[SNAP.issued_ms]
    rec[BATCH.expires_ms] = r[SNAP.expires_ms]
    rec[BATCH.promoted] = table.concat(r[SNAP.promoted], ' ')
    rec[BATCH.away] = r[SNAP.away]
    rec[BATCH.admits] = r[SNAP.admits]
    rec[BATCH.ticket] = r[SNAP.ticket]
    rec[BATCH.joined_ms] = r[SNAP.joined_ms]
    rec[BATCH.heartbeat_ms] = r[SNAP.heartbeat_ms]
    rec[BATCH.line_epoch] = r[SNAP.line_epoch]
    rec[BATCH.line_seq] = r[SNAP.line_seq]
  end
  for j = 1, #rec do out[n + j] = rec[j] end
  n = n + #rec
end
flush_deferred()
return out
