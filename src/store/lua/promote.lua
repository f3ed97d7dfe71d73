-- promote(limit): admits queue heads while capacity, stock and the rate cap allow.
-- ARGV[1] = most admissions in this call. Returns {{admitted...}}.
local cfg = load_cfg()
if not cfg then return {'no_room'} end
return {promote(cfg, now_ms(), tonumber(ARGV[1]))}
