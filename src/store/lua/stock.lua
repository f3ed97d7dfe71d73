-- stock(mode, n, max): mode 'set' (stock = n), 'add' (stock += n, at most max; unlimited
-- stays unlimited) or 'unlimited'. Atomic with admissions, which decrement it. Then
-- promotes. `max` is MAX_STOCK from Rust (store/mod.rs), passed so it is written once.
-- A change of value bumps the config `version` (admissions consuming units do not).
-- Returns {old, new, {admitted...}} with -1 meaning unlimited.
local cfg = load_cfg()
if not cfg then return {'no_room'} end
local old = cfg.stock
local new = old
if ARGV[1] == 'set' then new = tonumber(ARGV[2])
elseif ARGV[1] == 'add' then if old >= 0 then new = math.min(old + tonumber(ARGV[2]), tonumber(ARGV[3])) end
elseif ARGV[1] == 'unlimited' then new = -1 end
redis.call('HSET', K_CFG, 'stock', string.format('%d', new))
if new ~= old then
  redis.call('HINCRBY', K_CFG, 'version', 1)
  cfg_written()
end
if new == 0 and old ~= 0 then event('sold_out') end
cfg.stock = new
return {old, new, promote(cfg, now_ms(), PROMOTE_LIMIT)}
