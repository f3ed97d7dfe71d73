-- promote(limit): admits queue heads while capacity, stock and the rate cap allow, and
-- samples the queue length for this minute's chart (the promoter's job alone).
-- ARGV[1] = most admissions in this call. Returns {{admitted...}}.
local cfg = load_cfg()
if not cfg then return {'no_room'} end
local now = now_ms()
sample_queue(now)
return {promote(cfg, now, tonumber(ARGV[1]))}
