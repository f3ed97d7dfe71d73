-- tick(instance, epoch, seq, n, held..., released...): the one call a hub makes per room
-- per tick (docs/design.md#socket-updates). Cost: O(1) plus the changes, never the
-- number of open sockets.
-- * Renews the instance's lease on the visitors it holds open sockets for (K_HOLDERS),
--   adds the n visitors whose sockets opened since its last tick to its hold set (and
--   takes them out of K_HB: the lease vouches for them, see reap), and removes the rest
--   (sockets closed: they go back to K_HB from now, if still queued).
-- * Returns {room_view, epoch, seq, exact, gap, changes, places, rehold}: the log's cursor now;
--   exact = 1 when the hub may count positions itself (no lanes, not random mode, no event
--   before its shuffle: every new place is at the back); gap = 1 when the log cannot say what changed since (epoch, seq) (another
--   epoch, or trimmed past it: read the places again), else changes holds each entry of
--   the log after seq (`<seq>:<kind>:<ticket>:<visitor>`); places holds 4 integers per
--   newly held visitor, as placed(); rehold = 1 when the instance held nothing here or its
--   lease had lapsed (the reaper may have let its visitors go): it holds them all again.
local cfg = load_cfg()
if not cfg then return {'no_room'} end
local now = now_ms()
local inst = ARGV[1]
local k_hold = K_ST .. ':hold:' .. inst
local prev = redis.call('ZSCORE', K_HOLDERS, inst)
local rehold = (not prev or tonumber(prev) <= now) and 1 or 0
redis.call('ZADD', K_HOLDERS, now + HOLD_LEASE_MS, inst)
local n = tonumber(ARGV[4])
for i = 5 + n, #ARGV do
  local v = ARGV[i]
  redis.call('SREM', k_hold, v)
  if redis.call('ZSCORE', K_Q, v) then beat(cfg, now, v) end
end
local places = {}
if n > 0 then
  local held = {}
  for i = 5, 4 + n do held[#held + 1] = ARGV[i] end
  redis.call('SADD', k_hold, unpack(held))
  redis.call('ZREM', K_HB, unpack(held))
  places = places_of(placed, held, now)
end
local cursor = log_cursor()
local since = tonumber(ARGV[3]) or 0
local gap, changes = 1, {}
if ARGV[2] == cursor[1] and since <= cursor[2] and cursor[2] - since <= CHANGES_KEEP then
  if since < cursor[2] then
    changes = redis.call('ZRANGEBYSCORE', K_LOG, '(' .. since, cursor[2])
  end
  if #changes == cursor[2] - since then gap = 0 else changes = {} end
end
-- Exact only where every new place is at the back: no lanes, not random mode (a draw may
-- land anywhere), and no scheduled event still before its shuffle (its pre-queue is not in
-- the line yet; the shuffle places it ahead of later arrivals).
local exact = (cfg.lanes or cfg.mode == 'random' or cfg.phase ~= 'open') and 0 or 1
return {room_view(cfg, now), cursor[1], cursor[2], exact, gap, changes, places, rehold}
