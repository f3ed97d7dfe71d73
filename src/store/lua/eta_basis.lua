-- eta_basis(): what the ETA model (domain/eta.rs) needs, read once a second per room
-- per instance. Returns {now, capacity, ttl_ms, rate_cap, stock, paused (or held by
-- queue_all or the reject mode: no countdown), closed,
-- queue_length, active, sessions, ends, window, admitted_5min, reaped_5min, silent, admits,
-- quiet} where sessions = {issued_ms, expires_ms, ...} of up to BASIS_SESSIONS live
-- sessions, soonest expiry first, except quiet ones (unclaimed for half the heartbeat
-- timeout: see admit in common.lua), whose expiries are in quiet; ends = the last session
-- ends as `end_ms:duration_ms` (expired sessions not yet pruned first, then the recorded
-- ones, newest first; unclaimed ones left out);
-- window = admission times of the last WINDOW_MS (only with a rate cap).
local cfg = load_cfg()
if not cfg then return {'no_room'} end
local now = now_ms()
-- Promote first: slots freed since the last promote are filled now, so the basis is
-- what every snapshot read after it sees (positions after promotion).
promote(cfg, now, PROMOTE_LIMIT)
local act = redis.call('ZRANGEBYSCORE', K_ACT, '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0,
  BASIS_SESSIONS)
local sessions, quiet = {}, {}
-- With a claim timeout, a quiet session (its visitor never came back for it) whose pass
-- was not presented ends at its no-show deadline if not before
-- (docs/outflow.md#no-shows): one ZMSCORE for them all. A session its visitor saw is a
-- stay drawn up to its expiry: they will most likely present the pass.
local deadlines = {}
if cfg.claim_ms > 0 and #act > 0 then
  local vs = {}
  for i = 1, #act, 2 do vs[#vs + 1] = act[i] end
  deadlines = redis.call('ZMSCORE', K_ST .. ':claim', unpack(vs))
end
for i = 1, #act, 2 do
  local issued, unclaimed = session_issued(act[i])
  local exp = tonumber(act[i + 1])
  if unclaimed and now - issued >= math.floor(cfg.hb_ms / 2) then
    local due = tonumber(deadlines[(i + 1) / 2])
    if due and due < exp then exp = due end
    quiet[#quiet + 1] = exp
  else
    sessions[#sessions + 1] = issued or 0
    sessions[#sessions + 1] = exp
  end
end
-- Soonest first, as the ETA reads them (a deadline may come before an earlier expiry).
table.sort(quiet)
-- Sessions past their expiry that the reaper has not pruned yet ended at their expiry.
local gone = redis.call('ZRANGEBYSCORE', K_ACT, '-inf', now, 'WITHSCORES', 'LIMIT', 0, ENDS_KEEP)
local ends = {}
for i = 1, #gone, 2 do
  local issued, unclaimed = session_issued(gone[i])
  if not unclaimed then
    local exp = tonumber(gone[i + 1])
    ends[#ends + 1] = exp .. ':' .. math.max(0, exp - (issued or 0))
  end
end
local recorded = redis.call('LRANGE', K_ENDS, 0, ENDS_KEEP - 1 - #ends)
for i = 1, #recorded do ends[#ends + 1] = recorded[i] end
local window = {}
if cfg.rate_cap > 0 then
  local w = redis.call('ZRANGEBYSCORE', K_WIN, now - WINDOW_MS, '+inf', 'WITHSCORES')
  for i = 2, #w, 2 do window[#window + 1] = tonumber(w[i]) end
end
local m = math.floor(now / 60000)
local a, r = 0, 0
for i = 0, 4 do
  local v = redis.call('HMGET', K_ST .. ':m:' .. (m - i), 'a', 'r')
  a = a + (tonumber(v[1]) or 0)
  r = r + (tonumber(v[2]) or 0)
end
-- Queued visitors silent for more than half the heartbeat timeout: likely to be reaped.
local silent = redis.call('ZCOUNT', K_HB, '-inf', now - math.floor(cfg.hb_ms / 2))
return {now, cfg.capacity, cfg.ttl_ms, cfg.rate_cap, cfg.stock,
  (cfg.paused or cfg.queue_all or cfg.mode == 'reject') and 1 or 0,
  cfg.closed and 1 or 0, redis.call('ZCARD', K_Q), active_count(now), sessions,
  ends, window, a, r, silent, tonumber(redis.call('HGET', K_ST, 'admits')) or 0, quiet,
  cfg.lanes and 1 or 0}
