-- watch(visitor...): one call serves a batch of connected visitors (the WebSocket hub
-- calls it once per tick per room per 1,000 sockets). Refreshes each queued visitor's
-- heartbeat, so an open socket keeps its place, and claims each admitted visitor's
-- session (the socket is there to be told).
-- Returns {room_view, entries} where entries holds 4 integers per visitor:
--   kind (0 queued, 1 admitted, -1 neither), position or serial, issued_ms, expires_ms.
local cfg = load_cfg()
if not cfg then return {'no_room'} end
local now = now_ms()
local entries = {}
-- An open socket in the pre-queue's time is in the pre-queue: a page left open while the
-- event was scheduled is enrolled when the pre-queue opens, as its join would have been.
local enrol = cfg.phase == 'prequeue' and cfg.open_at and now < cfg.open_at and cfg.stock ~= 0
local ahead = unplaced(cfg, now)
for i = 1, #ARGV do
  local kind, a, b, c = place(ARGV[i], now)
  if enrol and kind == -1 then redis.call('ZADD', K_PQ, 'NX', now, ARGV[i]) end
  if kind == 0 then beat(cfg, now, ARGV[i]) end
  if kind == 1 then claim(ARGV[i]) end
  if kind == 0 then a = a + ahead end
  push_place(entries, kind, a, b, c)
end
return {room_view(cfg, now), entries}
