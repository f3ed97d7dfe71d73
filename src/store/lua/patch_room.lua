-- patch_room(field, value, ...): changes only the given config fields, atomically, then
-- promotes (a raised capacity or a resume admits at once, on every instance, because
-- the admissions are published). Never touches `stock`, which admissions decrement.
-- Returns {{admitted...}}.
local cfg = load_cfg()
if not cfg then return {'no_room'} end
if #ARGV > 0 then redis.call('HSET', K_CFG, unpack(ARGV)) end
cfg = load_cfg()
return {promote(cfg, now_ms(), 1000)}
