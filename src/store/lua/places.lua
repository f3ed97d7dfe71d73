-- places(visitor...): where each listed visitor stands, read by a hub that counts
-- positions itself (a cursor it lost, a socket whose place changed under it). Unlike
-- watch it refreshes no heartbeat: the hub's lease vouches for its sockets.
-- Returns {room_view, entries, epoch, seq}: entries holds 4 integers per visitor, as
-- placed(); epoch and seq are the log's cursor the entries are exact at.
local cfg = load_cfg()
if not cfg then return {'no_room'} end
local now = now_ms()
local entries = places_of(placed, ARGV, now)
local cursor = log_cursor()
return {room_view(cfg, now), entries, cursor[1], cursor[2]}
