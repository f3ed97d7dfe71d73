-- patch_room(expected, field, value, ...): changes only the given config fields, atomically,
-- then promotes (a raised capacity or a resume admits at once, on every instance, because
-- the admissions are published). Never touches `stock`, which admissions decrement.
-- `expected` is the configuration version the caller's change is based on ('' = none).
-- The check and the bump are in this one script, so no other write can fall between
-- them: if the room is not at `expected`, nothing is written and the reply is
-- {'stale', version}. The version (the cfg field `version`, 0 when absent) goes up by one
-- only when a value really changes. Returns {{admitted...}, version}.
local cfg = load_cfg()
if not cfg then return {'no_room'} end
local version = tonumber(redis.call('HGET', K_CFG, 'version')) or 0
if ARGV[1] ~= '' and tonumber(ARGV[1]) ~= version then return {'stale', version} end
local changed = false
for i = 2, #ARGV, 2 do
  if redis.call('HGET', K_CFG, ARGV[i]) ~= ARGV[i + 1] then changed = true end
end
if changed then
  local was_closed, was_ended = cfg.closed, cfg.ended
  local strides = redis.call('HGET', K_CFG, 'lane_strides')
  local times = event_times()
  redis.call('HSET', K_CFG, unpack(ARGV, 2))
  event_reset(times)
  settle_tickets(strides)
  settle_after_random(cfg.mode)
  version = redis.call('HINCRBY', K_CFG, 'version', 1)
  cfg_written()
  cfg = load_cfg()
  -- An event's end (or its end moved away) is told by mark_event in load_cfg.
  if cfg.closed ~= was_closed and not (cfg.ended or was_ended) then
    event(cfg.closed and 'closed' or 'opened')
  end
end
return {promote(cfg, now_ms(), PROMOTE_LIMIT), version}
