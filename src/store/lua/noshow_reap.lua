-- noshow_reap(batch): ends up to `batch` no-shows (docs/outflow.md#no-shows). In a room
-- with a claim timeout (`claim_ms`), admit() gives each session a deadline to present its
-- pass at the origin (`<st>:claim`, visitor -> deadline ms) and session.lua's present
-- clears it. A session still live past its deadline ends here, as a release ends it
-- (`<st>:gone`: no recovery puts it back); its visitor is marked (`<st>:noshow`, visitor ->
-- the session's expiry: status says `no_show` until then, or until they are let in again),
-- counted (`noshows` in `st`, and the minute's `n`), and `no_show` goes to the stream. A
-- deadline whose session ended otherwise (released, removed, expired) is dropped. Promotes
-- nobody: the caller revokes the passes first, then promotes.
-- ARGV[1] = batch (0: only the count). Returns {noshows so far, {visitor, serial,
-- issued_ms, expires_ms, ...}} of the sessions it ended, soonest deadline first.
local cfg = load_cfg()
if not cfg then return {'no_room'} end
local batch = tonumber(ARGV[1])
local ended = {}
local kc, kn = K_ST .. ':claim', K_ST .. ':noshow'
if cfg.claim_ms > 0 and batch > 0 then
  local now = now_ms()
  local due = redis.call('ZRANGEBYSCORE', kc, '-inf', now, 'LIMIT', 0, batch)
  if #due > 0 then
    redis.call('ZREM', kc, unpack(due))
    local keep = 0
    for i = 1, #due do
      local v = due[i]
      local exp = tonumber(redis.call('ZSCORE', K_ACT, v))
      local s = redis.call('HGET', K_SESS, v)
      if exp and exp > now and s then
        local serial, issued = parse_session(s)
        redis.call('ZREM', K_ACT, v)
        redis.call('HDEL', K_SESS, v)
        redis.call('ZADD', kn, exp, v)
        if exp - now > keep then keep = exp - now end
        redis.call('ZADD', K_GONE, now, v)
        event('no_show', v, serial)
        for _, x in ipairs({v, serial, issued, exp}) do ended[#ended + 1] = x end
      end
    end
    local n = #ended / 4
    if n > 0 then
      redis.call('HINCRBY', K_ST, 'noshows', n)
      record(now, 'n', n)
      redis.call('ZREMRANGEBYSCORE', K_GONE, '-inf', now - GONE_KEEP_MS)
      redis.call('PEXPIRE', K_GONE, GONE_KEEP_MS)
      -- The marks outlive their last entry by nothing: the key goes with it.
      if redis.call('PTTL', kn) < keep then redis.call('PEXPIRE', kn, keep) end
    end
  end
  redis.call('ZREMRANGEBYSCORE', kn, '-inf', now)
end
return {tonumber(redis.call('HGET', K_ST, 'noshows')) or 0, ended}
