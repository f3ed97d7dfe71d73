-- stock(mode, n): mode 'set' (stock = n), 'add' (stock += n; unlimited stays unlimited)
-- or 'unlimited'. Atomic with admissions, which decrement it. Then promotes.
-- Returns {old, new, {admitted...}} with -1 meaning unlimited.
local cfg = load_cfg()
if not cfg then return {'no_room'} end
local old = cfg.stock
local new = old
if ARGV[1] == 'set' then new = tonumber(ARGV[2])
elseif ARGV[1] == 'add' then if old >= 0 then new = old + tonumber(ARGV[2]) end
elseif ARGV[1] == 'unlimited' then new = -1 end
redis.call('HSET', K_CFG, 'stock', new)
cfg.stock = new
return {old, new, promote(cfg, now_ms(), 1000)}
