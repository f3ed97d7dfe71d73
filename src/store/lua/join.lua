-- join(visitor, group, max, lane): idempotent. ARGV[1] = visitor id; ARGV[2] = the group
-- a new place counts against ('' for none: see PlaceLimit in store/mod.rs), ARGV[3] = the
-- most places or live sessions the group may hold, ARGV[4] = the lane a new place goes in
-- ('' = the general line; see enqueue), ARGV[5] = a candidate event seed (64 hex; kept
-- only if the room has none when this join opens its pre-queue), ARGV[6] = the new place's
-- ticket in `random` mode ('' otherwise), ARGV[7] = '1' when the instance drew the visitor
-- id for this join (a new visitor, in no key of the room: join_one skips looking), else ''.
-- Returns the reply, or {'too_many_places'} (nothing taken), or {'held', ms left} while a
-- re-created room holds new places (put_room). The work is join_one's (join_one.lua),
-- which join_many shares.
local cfg = load_cfg()
if not cfg then return {'no_room'} end
return join_one(cfg, now_ms(), ARGV, 0)
