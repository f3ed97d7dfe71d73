-- find(visitor...): where each of the given visitors stands, for an admin's search (the
-- candidates come from a ZSCAN over `q` and `act` done outside, in steps, so a long queue
-- never blocks Redis). Read-only: unlike watch, it refreshes no heartbeat, so looking a
-- visitor up never keeps a silent one in line.
-- Returns 4 integers per visitor, as watch does.
local cfg = load_cfg()
if not cfg then return {'no_room'} end
local now = now_ms()
return places_of(place, ARGV, now)
