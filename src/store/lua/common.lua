-- The shared part of the room library: loaded once per Redis node as a Redis Functions
-- library (store/redis/library.rs builds it: this file, then each room script wrapped in a
-- registered function that first calls bind(KEYS)). Every room function gets one key, the
-- room's config hash `<P>:room:{<room>}:cfg`, and bind() derives the others from it (what
-- each key holds: docs/design.md#redis-key-layout): cfg, q, hb, act, sess, st, win, units,
-- events (the pub/sub channel, hash-tagged like a key), jt, and the `<st>:*` keys below.
-- They all share the room's hash tag, so the scripts run unchanged on Redis Cluster.
-- Per-minute statistics live in `<st>:m:<epoch minute>`, derived here too.
-- The only clock is Redis TIME, so instances with skewed clocks still agree.
-- The keys of the room the running function serves, set by bind() at the start of each
-- call (Redis runs one function at a time, so these are that call's alone).
local K_CFG, K_Q, K_HB, K_ACT, K_SESS, K_ST, K_WIN, K_UNITS, C_EVENTS, K_JT
-- Visitors the reaper dropped for silence (visitor -> when), so a returning visitor can be
-- told they lost their place; derived from `st` like the minute keys (same hash tag).
local K_AWAY
-- Visitors who released (visitor -> when), kept GONE_KEEP_MS: a session issued before its
-- visitor released is not put back after a loss or a failover (restore_session).
local K_GONE
-- The room's stream of events for the shop (`admission`, `release`, `expiry`,
-- `stock_unit_claimed`, `sold_out`, `opened`, `closed`), each added by the script that
-- makes the change, trimmed to about STREAM_KEEP (see event()).
local K_STREAM
-- The last ENDS_KEEP session ends, newest first, as `end_ms:duration_ms` (the ETA's
-- basis: how long sessions really last).
local K_ENDS
-- Priority lanes, derived from `st` too: K_LANEV (visitor -> lane, for queued visitors in
-- a named lane) and K_LANES (`w:<lane>` waiting, `a:<lane>` let in while the room has
-- lanes). The line's order is the tickets': see enqueue().
local K_LANEV, K_LANES
-- The line's change log (docs/design.md#socket-updates), derived from `st` too: K_LOG, a
-- ZSET of `<seq>:<kind>:<ticket>:<visitor>` scored by seq (`st` field `lseq`, under the
-- epoch `st` field `lepoch`), kind `l` (left the line) or `b` (a place put back with its
-- ticket), trimmed to about CHANGES_KEEP; K_HOLDERS, instance -> lease end (ms) of the
-- hubs holding open sockets here, each with its set `<st>:hold:<instance>`.
local K_LOG, K_HOLDERS
-- Defined before this file from the Rust constants (`lua_prelude` in store/redis/library.rs), one
-- source for both: WINDOW_MS (rate-cap window), ENDS_KEEP and BASIS_SESSIONS (ETA basis),
-- PROMOTE_LIMIT (most admissions per call), HB_STEPS (heartbeat steps: beat), LANE_STRIDE (ticket spacing: enqueue), MINUTE_TTL_MS (how long a minute's figures
-- live), GONE_KEEP_MS (how long a release is remembered), PLACE_GROUP_TTL_MS (how long a group's places are remembered: join), WAIT_BOUNDS (upper bounds in ms of the wait histogram buckets h0..h13; h14 is
-- everything longer). The library is built with each reply field's place written in: an
-- index SNAP.<field> or VIEW.<field> becomes the number, and the list's `_NEW` token a
-- list of as many placeholders (`place_fields` in store/redis/library.rs), so building a reply by
-- name costs nothing at run time. The config hash's reader, CFG_READ and cfg_decode, is
-- generated there too (read_cfg below).

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- A scheduled time or override from the config hash ('' or absent: none).
local function opt_num(x)
  if x == nil or x == false or x == '' then return nil end
  return tonumber(x)
end

-- The pre-queue (visitor -> when they joined it), derived from `st` like the minute keys.
local K_PQ

-- Where the room's scheduled event stands (EventPhase::at in config/schedule.rs, the same
-- rule): 'ended' from close_at; 'scheduled' before the pre-queue (or the opening, without
-- one); 'prequeue' from pq_at until the shuffle is done (it runs at open_at); else 'open'.
local function event_phase(cfg, now)
  if cfg.close_at and now >= cfg.close_at then return 'ended' end
  local first = cfg.pq_at or cfg.open_at
  if first and now < first then return 'scheduled' end
  if cfg.pq_at and cfg.open_at then
    if now < cfg.open_at or redis.call('HGET', K_ST, 'shuffled') ~= '1' then return 'prequeue' end
  end
  return 'open'
end

-- The config as stored (nil: no room): every field the scripts use, read with one HMGET
-- and decoded by name, each by its encoding and default, by CFG_READ and cfg_decode (both
-- generated into the prelude from the config hash's table, CFG_FIELDS in
-- store/redis/cfg_hash.rs; cfg.<field> is the hash field <field>). What each field means:
-- its row there. Only `lanes` is derived here.
local function read_cfg()
  local cfg = cfg_decode(redis.call('HMGET', K_CFG, unpack(CFG_READ)))
  if not cfg then return nil end
  -- lanes: nil without lanes, else {stride = {lane = spacing}, names = {'', lane...}}
  -- from `lane_strides` ("=1429 members=3333": the general line first).
  if cfg.lane_strides ~= '' then
    cfg.lanes = {stride = {}, names = {}}
    for name, stride in string.gmatch(cfg.lane_strides, '(%S*)=(%d+)') do
      cfg.lanes.stride[name] = tonumber(stride)
      cfg.lanes.names[#cfg.lanes.names + 1] = name
    end
  end
  return cfg
end

-- Parsed configs kept between calls in this node's Lua VM (a library's locals live as
-- long as the library): room cfg key -> {version, rev, meta (whose __index is the parsed
-- config), stocked, event}. Reading CFG_READ (~19 fields) costs a
-- call ~4 µs (the fields are found one by one in the hash, and the reply is converted
-- to a Lua table); checking that a kept one is current costs ~1 µs. A kept config is
-- current while the cfg hash's `version` and `rev` are those it was read at: every
-- script that changes the config bumps `version` (this build and earlier ones alike,
-- so a rolling upgrade's older library cannot leave this one a stale copy), and `rev`
-- (new_rev, written by put_room, patch_room and stock) tells a room deleted and written
-- again from the one it replaced. A hash without `rev` is never kept. The two fields
-- changed without `version` are read every time: `stock` while the room has one
-- (admissions take units) and `ev_mark` while it has a scheduled event.
local CFG_CACHE, CFG_CACHED = {}, 0
-- The most rooms a node keeps anything for between calls (configs here, keys in bind()):
-- past it, what was kept is dropped and kept again as rooms are called.
local KEEP_ROOMS = 1000

-- A new `rev` for the config hash: the Redis time in µs, which no earlier write of this
-- room (even one deleted since) had.
local function new_rev()
  local t = redis.call('TIME')
  return t[1] .. string.format('%06d', tonumber(t[2]))
end

-- Writes `rev` and forgets this room's kept config: every script that writes the config
-- hash's fields (put_room, patch_room, stock) calls it.
local function cfg_written()
  redis.call('HSET', K_CFG, 'rev', new_rev())
  CFG_CACHE[K_CFG] = nil
end

local function load_cfg_raw()
  local c = CFG_CACHE[K_CFG]
  local cfg_fields = {'version', 'rev'}
  if c then
    if c.stocked then cfg_fields[#cfg_fields + 1] = 'stock' end
    if c.event then cfg_fields[#cfg_fields + 1] = 'ev_mark' end
  end
  local h = redis.call('HMGET', K_CFG, unpack(cfg_fields))
  if not (c and h[2] and h[1] == c.version and h[2] == c.rev) then
    local raw = read_cfg()
    if not raw then return nil end
    c = {version = h[1], rev = h[2], meta = {__index = raw}, stocked = raw.stock >= 0,
      event = (raw.pq_at or raw.open_at or raw.close_at) ~= nil}
    if h[2] then
      if CFG_CACHED >= KEEP_ROOMS then CFG_CACHE, CFG_CACHED = {}, 0 end
      if CFG_CACHE[K_CFG] == nil then CFG_CACHED = CFG_CACHED + 1 end
      CFG_CACHE[K_CFG] = c
    end
    -- Fresh: every field was just read.
    return setmetatable({}, c.meta)
  end
  -- A call's own view: what the script changes on it (apply_event's overrides, a stock
  -- taken) stays in this table, never in the kept one. The fresh fields follow version
  -- and rev in the order asked for above.
  local cfg = setmetatable({}, c.meta)
  local i = 3
  if c.stocked then
    cfg.stock = tonumber(h[i]) or -1
    i = i + 1
  end
  if c.event then cfg.ev_mark = h[i] or '' end
  return cfg
end

-- The event's phase at `now` (cfg.phase), its overrides applied between open_at and
-- close_at, and an ended event closing the room (cfg.closed, cfg.ended). Every room
-- script calls this right after load_cfg with its `now`.
local function apply_event(cfg, now)
  if not cfg then return cfg end
  cfg.phase = 'open'
  if not (cfg.pq_at or cfg.open_at or cfg.close_at) then return cfg end
  cfg.phase = event_phase(cfg, now)
  if cfg.phase == 'ended' then
    cfg.closed = true
    cfg.ended = true
  end
  if cfg.open_at and now >= cfg.open_at and not (cfg.close_at and now >= cfg.close_at) then
    if cfg.ev_capacity then cfg.capacity = cfg.ev_capacity end
    if cfg.ev_ttl_ms then cfg.ttl_ms = cfg.ev_ttl_ms end
    if cfg.ev_rate_cap then cfg.rate_cap = cfg.ev_rate_cap end
  end
  return cfg
end

-- Tells the room's stream of the event's opening and end (defined below, after event()).
local mark_event

-- The room's configuration as in force now (see apply_event), or nil without the room.
local function load_cfg()
  local cfg = load_cfg_raw()
  if not cfg then return nil end
  -- The clock is read here only for a room with an event: the hot path of a room
  -- without one costs no extra call.
  if cfg.pq_at or cfg.open_at or cfg.close_at then
    apply_event(cfg, now_ms())
    mark_event(cfg)
  else
    cfg.phase = 'open'
  end
  return cfg
end

-- The event's times as stored, to tell whether a write moved them (event_reset).
local function event_times()
  local t = redis.call('HMGET', K_CFG, 'pq_at', 'open_at')
  return (t[1] or '') .. '/' .. (t[2] or '')
end

-- A write that moved the pre-queue's opening or the opening starts a new event: a new
-- seed is drawn, and the pre-queue, its placements and the shuffle count start again.
local function event_reset(before)
  if event_times() == before then return end
  redis.call('HDEL', K_ST, 'seed', 'shuffled', 'shuffles', 'pq_base')
  redis.call('HDEL', K_CFG, 'ev_mark')
  redis.call('DEL', K_PQ, K_ST .. ':pqd')
end

-- Sessions whose expiry is still ahead. Expired ones are pruned by the reaper in
-- bounded batches; counting with ZCOUNT keeps this O(log n) on the hot path. Counted once
-- per script run: admit() keeps the count, and a script that ends sessions after
-- counting calls forget_active().
local ACTIVE = nil

-- The line's length when the running script already knows it (join counted it, and
-- keeps it true as it queues and promotes), so reply() need not count again; nil:
-- reply() counts.
local KNOWN_QLEN = nil

-- The visitor the running script last gave a sign of life (beat) and the heartbeat it
-- has since, so reply() need not read it again.
local BEAT_V, BEAT = nil, nil

-- The room's admission serial and line-log cursor (`admits`, `lepoch`, `lseq` of st) as
-- reply() last read them in this call, while nothing since has moved them (admit,
-- log_line and log_epoch forget it; bind, at each call's start), so a batch of joins
-- reads them once. A function that writes them without these and never replies after
-- (flush, restore_session) need not forget it.
local ST_READ = nil

-- A call that takes many joins together (join_many) writes some of their effects once,
-- at its end (flush_deferred), rather than once per join: the admission serial `admits`
-- of `st` (read once with ST_READ, counted here, written once), the general line's last
-- ticket `seq` (enqueue; anything else that reads it writes it first: seq_written), this
-- minute's counters (record), the admission messages (publish: one message for the
-- call's), and the per-visitor fields that only the visitor's own later reads need: the
-- heartbeat (`hb`), the join time (`jt`), the session record (`sess`) and the session's
-- end (`act`), each key written with one variadic command (defer_set). Nil in every other
-- call (bind clears it), which writes as it goes. Nothing in a join reads them back from
-- Redis but through here (deferred(), and reply's serial is DEFER.admits; the live count
-- adds the sessions deferred), and Redis runs a call whole, so no reader can tell: only
-- the number of commands changes (a join taken with others: an admitted one 7 commands
-- fewer, a queued one 3; issue 35 item 2).
local DEFER = nil

-- Defers setting member or field v of key k to x (a string; the last one set wins):
-- written at the end of the call by flush_deferred with `cmd` (ZADD takes the score
-- first, HSET the field), unless dropped since (defer_drop).
local function defer_set(cmd, k, v, x)
  local w = DEFER.w[k]
  if not w then
    w = {cmd = cmd, order = {}, val = {}}
    DEFER.w[k] = w
    DEFER.w_keys[#DEFER.w_keys + 1] = k
  end
  if w.val[v] == nil then w.order[#w.order + 1] = v end
  w.val[v] = x
end

-- What this call deferred for v in k: the value, or nil (nothing deferred, or dropped).
local function deferred(k, v)
  local w = DEFER and DEFER.w[k]
  return w and w.val[v] or nil
end

-- v removed from k in Redis by the caller: a deferred write of it is dropped too.
local function defer_drop(k, v)
  local w = DEFER and DEFER.w[k]
  if w and w.val[v] then w.val[v] = false end
end

-- Writes the deferred `seq` now (for a reader of `seq` in the same call).
local function seq_written()
  if DEFER and DEFER.seq then
    redis.call('HSET', K_ST, 'seq', string.format('%d', DEFER.seq))
    DEFER.seq = nil
  end
end

-- The pre-queue's tickets are reserved once the opening has come (the pre-queue no longer
-- grows then): `pq_base` is where they start, and `seq` moves past the pre-queue's size,
-- so everyone who joins after the opening queues behind the whole pre-queue, in arrival
-- order, even while the shuffle is still placing it. Idempotent.
local function reserve_prequeue()
  if redis.call('HEXISTS', K_ST, 'pq_base') == 1 then return end
  seq_written()
  local s = redis.call('HMGET', K_ST, 'seq', 'vt')
  local base = math.max(tonumber(s[1]) or 0, tonumber(s[2]) or 0)
  local n = redis.call('ZCARD', K_PQ)
  redis.call('HSET', K_ST, 'pq_base', string.format('%d', base),
    'seq', string.format('%d', base + (n + 1) * LANE_STRIDE))
end

-- Integers as the decimal text Redis is given, each formatted once per call (int_s):
-- a Lua number handed to redis.call or joined with `..` is formatted with "%.14g", a
-- floating-point conversion that cost the joins' calls ~7 % of Redis's time (perf,
-- issue 35 item 2), and the call's clock, a heartbeat's end and a session's end are the
-- same for every visitor of a batch.
local INT_S = {}
local function int_s(x)
  local s = INT_S[x]
  if not s then
    s = string.format('%d', x)
    INT_S[x] = s
  end
  return s
end

-- Each room's keys, derived once per node from its cfg key (room cfg key -> list).
local ROOM_KEYS, ROOM_KEYS_N = {}, 0

-- Starts a call: the room's keys, and nothing remembered from an earlier call.
local function bind(keys)
  local k = ROOM_KEYS[keys[1]]
  if not k then
    local p = string.sub(keys[1], 1, -4) -- the cfg key less `cfg`
    local st = p .. 'st'
    k = {p .. 'cfg', p .. 'q', p .. 'hb', p .. 'act', p .. 'sess', st, p .. 'win', p .. 'units',
      p .. 'events', p .. 'jt', st .. ':away', st .. ':gone', st .. ':stream', st .. ':ends',
      st .. ':lane', st .. ':lanes', st .. ':pq', st .. ':log', st .. ':holders'}
    if ROOM_KEYS_N >= KEEP_ROOMS then ROOM_KEYS, ROOM_KEYS_N = {}, 0 end
    ROOM_KEYS[keys[1]] = k
    ROOM_KEYS_N = ROOM_KEYS_N + 1
  end
  K_CFG, K_Q, K_HB, K_ACT, K_SESS, K_ST, K_WIN, K_UNITS, C_EVENTS, K_JT,
    K_AWAY, K_GONE, K_STREAM, K_ENDS, K_LANEV, K_LANES, K_PQ, K_LOG, K_HOLDERS = unpack(k)
  ACTIVE = nil
  KNOWN_QLEN = nil
  BEAT_V, BEAT = nil, nil
  ST_READ = nil
  DEFER = nil
  INT_S = {}
end

local function active_count(now)
  if ACTIVE == nil then
    ACTIVE = redis.call('ZCOUNT', K_ACT, '(' .. now, '+inf') + (DEFER and DEFER.active or 0)
  end
  return ACTIVE
end
local function forget_active() ACTIVE = nil end

-- The room gives no new place and admits nobody (`mode = reject`, unless queue_all).
local function rejecting(cfg)
  return cfg.mode == 'reject' and not cfg.queue_all
end

-- Nobody is let in now: paused, closed, held, rejecting or queueing all.
local function holding(cfg, now)
  return cfg.paused or cfg.closed or cfg.queue_all or cfg.mode == 'reject' or cfg.hold_until > now
    or (cfg.phase ~= nil and cfg.phase ~= 'open')
end

-- How many admissions may happen right now. In passthrough only stock limits them
-- (capacity and the rate cap are ignored: LOTS stands for no limit); the rate-cap window
-- is still pruned, so it stays one minute long while admissions pour in.
local LOTS = 9007199254740992
local function free_slots(cfg, now)
  if cfg.mode == 'passthrough' then
    if cfg.rate_cap > 0 then redis.call('ZREMRANGEBYSCORE', K_WIN, '-inf', now - WINDOW_MS) end
    if cfg.stock >= 0 then return cfg.stock end
    return LOTS
  end
  local free = cfg.capacity - active_count(now)
  if cfg.stock >= 0 and cfg.stock < free then free = cfg.stock end
  if cfg.rate_cap > 0 and free > 0 then
    redis.call('ZREMRANGEBYSCORE', K_WIN, '-inf', now - WINDOW_MS)
    local left = cfg.rate_cap - redis.call('ZCARD', K_WIN)
    if left < free then free = left end
  end
  return free
end

local function minute_key(now)
  return K_ST .. ':m:' .. int_s(math.floor(now / 60000))
end

local function wait_bucket(ms)
  for i = 1, #WAIT_BOUNDS do
    if ms <= WAIT_BOUNDS[i] then return i - 1 end
  end
  return #WAIT_BOUNDS
end

-- Adds to this minute's counters: record(now, field, n[, field2, n2]). The hash's TTL is
-- set when the write creates `field` (its count is then n): every writer of a minute
-- does so when it first writes there (sample_queue on every write), so the key lives
-- MINUTE_TTL_MS from its first write, past the minute's last, for one command per
-- counter and minute rather than per admission.
local function record(now, f1, n1, f2, n2)
  local k = minute_key(now)
  if DEFER then
    local r = DEFER.rec[k]
    if not r then
      r = {fields = {}, n = {}}
      DEFER.rec[k] = r
      DEFER.rec_keys[#DEFER.rec_keys + 1] = k
    end
    for _, f in ipairs({{f1, n1}, {f2, n2}}) do
      if f[1] then
        if not r.n[f[1]] then
          r.fields[#r.fields + 1] = f[1]
          r.n[f[1]] = 0
        end
        r.n[f[1]] = r.n[f[1]] + f[2]
      end
    end
    return
  end
  local created = redis.call('HINCRBY', k, f1, n1) == n1
  if f2 then redis.call('HINCRBY', k, f2, n2) end
  if created then redis.call('PEXPIRE', k, MINUTE_TTL_MS) end
end

-- Tells every instance (their WebSocket hubs) who was admitted, so the visitor's
-- socket hears it at once wherever it is connected.
local function publish(events)
  if DEFER then
    for i = 1, #events do DEFER.events[#DEFER.events + 1] = events[i] end
    return
  end
  if #events > 0 then redis.call('PUBLISH', C_EVENTS, table.concat(events, ' ')) end
end

-- Starts deferring (see DEFER): join_many, before its first join.
local function defer_writes()
  DEFER = {rec = {}, rec_keys = {}, events = {}, w = {}, w_keys = {}, active = 0}
end

-- Writes what the call deferred: the serial, each minute's counters (a counter's key gets
-- its TTL when this write created one of its fields, as record() does), then one message
-- for all the admissions. Ends deferring.
local function flush_deferred()
  local d = DEFER
  DEFER = nil
  if not d then return end
  if d.admits then redis.call('HSET', K_ST, 'admits', string.format('%d', d.admits)) end
  if d.seq then redis.call('HSET', K_ST, 'seq', string.format('%d', d.seq)) end
  for _, k in ipairs(d.w_keys) do
    local w = d.w[k]
    local args = {}
    for _, v in ipairs(w.order) do
      local x = w.val[v]
      if x then
        if w.cmd == 'HSET' then
          args[#args + 1] = v
          args[#args + 1] = x
        else
          args[#args + 1] = x
          args[#args + 1] = v
        end
      end
    end
    if #args > 0 then
      if w.cmd == 'ZADD GT' then
        redis.call('ZADD', k, 'GT', unpack(args))
      else
        redis.call(w.cmd, k, unpack(args))
      end
    end
  end
  for _, k in ipairs(d.rec_keys) do
    local r = d.rec[k]
    local created = false
    for _, f in ipairs(r.fields) do
      if redis.call('HINCRBY', k, f, r.n[f]) == r.n[f] then created = true end
    end
    if created then redis.call('PEXPIRE', k, MINUTE_TTL_MS) end
  end
  publish(d.events)
end

-- A session record `serial:issued_ms`, or `serial:issued_ms:u` while unclaimed (see
-- admit): serial, issued, unclaimed.
local function parse_session(s)
  local a = string.find(s, ':', 1, true)
  local b = string.find(s, ':', a + 1, true)
  if b then return tonumber(string.sub(s, 1, a - 1)), tonumber(string.sub(s, a + 1, b - 1)), true end
  return tonumber(string.sub(s, 1, a - 1)), tonumber(string.sub(s, a + 1)), false
end

-- `unclaimed`: v was let in from the line and has not been seen since (a walk-in is
-- there: it gets the answer). claim() clears it; an unclaimed session that runs out was
-- not a stay (its visitor left before their turn) and is left out of the ETA's ends.
-- Adds an event to the room's stream, in the script that makes the change, so a change
-- is never without its event: `type`, then `visitor` and `serial` when they apply.
local function event(kind, v, serial, ticket)
  local fields = {'type', kind}
  if v then
    fields[#fields + 1] = 'visitor'
    fields[#fields + 1] = v
  end
  if serial then
    fields[#fields + 1] = 'serial'
    fields[#fields + 1] = string.format('%d', serial)
  end
  if ticket then
    fields[#fields + 1] = 'ticket'
    fields[#fields + 1] = string.format('%d', ticket)
  end
  redis.call('XADD', K_STREAM, 'MAXLEN', '~', STREAM_KEEP, '*', unpack(fields))
end

-- A scheduled event's opening and end are changes that time makes, not a script: the first
-- script that runs after them adds `opened` (an event without a pre-queue: with one, the
-- shuffle's last step adds it) or `closed` to the stream, once (`ev_mark` in the config
-- hash, read with it, so a room whose stream was told costs nothing more).
mark_event = function(cfg)
  local mark = nil
  if cfg.phase == 'ended' then
    mark = 'closed'
  elseif cfg.phase == 'open' and cfg.open_at and not cfg.pq_at then
    mark = 'opened'
  end
  if not mark or cfg.ev_mark == mark then return end
  redis.call('HSET', K_CFG, 'ev_mark', mark)
  cfg.ev_mark = mark
  event(mark)
end

-- `ticket`: v's place's ticket when let in from the line (on the `admission` event, so a
-- FIFO audit can compare admission order with ticket order); nil for a walk-in, who has
-- no join time to read (`jt` holds the line's visitors only: enqueue, restore_place and
-- the shuffle write it beside a place; every script that takes a place out deletes it).
-- Returns the `admission` message for publish, then the serial and the session's end.
local function admit(cfg, v, now, unclaimed, ticket)
  local serial
  if DEFER then
    if not DEFER.admits then
      ST_READ = ST_READ or redis.call('HMGET', K_ST, 'admits', 'lepoch', 'lseq')
      DEFER.admits = tonumber(ST_READ[1]) or 0
    end
    DEFER.admits = DEFER.admits + 1
    serial = DEFER.admits
  else
    serial = redis.call('HINCRBY', K_ST, 'admits', 1)
    ST_READ = nil
  end
  local wait = 0
  if ticket then
    local joined = deferred(K_JT, v) or redis.call('HGET', K_JT, v)
    if joined then
      wait = now - tonumber(joined)
      redis.call('HDEL', K_JT, v)
      defer_drop(K_JT, v)
    end
  end
  record(now, 'a', 1, 'h' .. int_s(wait_bucket(wait)), 1)
  local now_s, exp_s = int_s(now), int_s(now + cfg.ttl_ms)
  if DEFER then
    defer_set('ZADD', K_ACT, v, exp_s)
    DEFER.active = DEFER.active + 1
  else
    redis.call('ZADD', K_ACT, exp_s, v)
  end
  if ACTIVE ~= nil then ACTIVE = ACTIVE + 1 end
  local serial_s = string.format('%d', serial)
  local rec = serial_s .. ':' .. now_s .. (unclaimed and ':u' or '')
  if DEFER then defer_set('HSET', K_SESS, v, rec) else redis.call('HSET', K_SESS, v, rec) end
  -- No-shows (docs/outflow.md#no-shows): the pass must be presented at the origin by
  -- now + claim_ms (present, session.lua), or the reaper ends the session (reap.lua). A
  -- new admission clears an earlier no-show's mark.
  if cfg.claim_ms > 0 then
    redis.call('ZADD', K_ST .. ':claim', now + cfg.claim_ms, v)
    redis.call('ZREM', K_ST .. ':noshow', v)
  end
  event('admission', v, serial, ticket)
  if cfg.stock >= 0 and redis.call('SADD', K_UNITS, v) == 1 then
    cfg.stock = cfg.stock - 1
    redis.call('HSET', K_CFG, 'stock', cfg.stock)
    event('stock_unit_claimed', v, serial)
    if cfg.stock == 0 then event('sold_out') end
  end
  if cfg.rate_cap > 0 then redis.call('ZADD', K_WIN, now, serial) end
  return v .. ':' .. serial_s .. ':' .. now_s .. ':' .. exp_s, serial, now + cfg.ttl_ms
end

-- A queue-length sample for this minute's chart; only the promoter takes it (it runs
-- every ~0.5 s), not every join.
local function sample_queue(now)
  local mk = minute_key(now)
  redis.call('HSET', mk, 'q', redis.call('ZCARD', K_Q))
  redis.call('PEXPIRE', mk, MINUTE_TTL_MS)
end

-- Puts v at the back of its lane ('' or a lane the room does not have: the general
-- line). Tickets order the line: each lane spaces its tickets by its stride (LANE_STRIDE /
-- share) from max(the last ticket let in, the lane's last ticket), so lanes interleave
-- by their shares, FIFO inside each, and an idle lane banks no credit (a weighted fair
-- queue). The general line's last ticket is `seq`, a lane's `lf:<lane>`, both in `st`.
-- Returns the ticket, or nil when v already had a place (kept as it was; the ticket drawn
-- is left unused, a gap the line's order does not mind).
local function enqueue(cfg, v, lane)
  if not cfg.lanes then
    -- No lanes: `seq` is past every ticket given (see settle_tickets), one call as ever
    -- (none in a batch: DEFER counts it, from the value read once).
    local t
    if DEFER then
      DEFER.seq = (DEFER.seq or tonumber(redis.call('HGET', K_ST, 'seq')) or 0) + LANE_STRIDE
      t = DEFER.seq
    else
      t = redis.call('HINCRBY', K_ST, 'seq', LANE_STRIDE)
    end
    if redis.call('ZADD', K_Q, 'NX', string.format('%d', t), v) == 0 then return nil end
    return t
  end
  local name, stride = '', cfg.lanes.stride[''] or LANE_STRIDE
  if lane ~= '' and cfg.lanes.stride[lane] then name, stride = lane, cfg.lanes.stride[lane] end
  local field = name == '' and 'seq' or ('lf:' .. name)
  local s = redis.call('HMGET', K_ST, 'vt', field)
  local ticket = math.max(tonumber(s[1]) or 0, tonumber(s[2]) or 0) + stride
  redis.call('HSET', K_ST, field, string.format('%d', ticket))
  if redis.call('ZADD', K_Q, 'NX', string.format('%d', ticket), v) == 0 then return nil end
  if name ~= '' then
    redis.call('HSET', K_LANEV, v, name)
    redis.call('HINCRBY', K_LANES, 'w:' .. name, 1)
  end
  return ticket
end

-- Lanes switched off (`lane_strides` was set, now is empty): from here a join only adds to
-- `seq`, so `seq` must be past every ticket given in any lane. Returns nothing.
local function settle_tickets(old_strides)
  if not old_strides or old_strides == '' or redis.call('HGET', K_CFG, 'lane_strides') ~= '' then return end
  local st = redis.call('HGETALL', K_ST)
  local top = 0
  for i = 1, #st, 2 do
    local f = st[i]
    if f == 'seq' or f == 'vt' or string.sub(f, 1, 3) == 'lf:' then
      top = math.max(top, tonumber(st[i + 1]) or 0)
    end
  end
  redis.call('HSET', K_ST, 'seq', string.format('%d', top))
end

-- Random mode switched off (`mode` was `random`, now is not): its draws are tickets up to
-- 2^48, so `seq` moves past the line's last ticket and later arrivals queue behind those
-- still in the draw. Returns nothing.
local function settle_after_random(old_mode)
  if old_mode ~= 'random' or redis.call('HGET', K_CFG, 'mode') == 'random' then return end
  local last = redis.call('ZRANGE', K_Q, -1, -1, 'WITHSCORES')
  local top = tonumber(last[2]) or 0
  if top > (tonumber(redis.call('HGET', K_ST, 'seq')) or 0) then
    redis.call('HSET', K_ST, 'seq', string.format('%d', top))
  end
end

-- vs left the line (admitted: let in): keeps the lanes' counts.
local function left_line(cfg, vs, admitted)
  if #vs == 0 then return end
  local named = redis.call('EXISTS', K_LANEV) == 1
  local count_admits = admitted and cfg.lanes ~= nil
  if not named and not count_admits then return end
  local lanes = named and redis.call('HMGET', K_LANEV, unpack(vs)) or {}
  for i = 1, #vs do
    local name = lanes[i] or ''
    if name ~= '' then redis.call('HINCRBY', K_LANES, 'w:' .. name, -1) end
    if count_admits then redis.call('HINCRBY', K_LANES, 'a:' .. name, 1) end
  end
  if named then redis.call('HDEL', K_LANEV, unpack(vs)) end
end

-- Records in the line's log that these places changed: kind 'l' (left the line) or 'b'
-- (put back); `places` holds {ticket, visitor} pairs. Three calls per batch of changes,
-- the trim one write in TRIM_EVERY.
local TRIM_EVERY = 64
local function log_line(kind, places)
  local n = #places
  if n == 0 then return end
  local last = redis.call('HINCRBY', K_ST, 'lseq', n)
  ST_READ = nil
  local first = last - n + 1
  local args = {}
  for i = 1, n do
    local s = first + i - 1
    args[#args + 1] = s
    args[#args + 1] = s .. ':' .. kind .. ':' .. places[i][1] .. ':' .. places[i][2]
    if #args >= 1000 or i == n then
      redis.call('ZADD', K_LOG, unpack(args))
      args = {}
    end
  end
  if math.floor(last / TRIM_EVERY) ~= math.floor((first - 1) / TRIM_EVERY) then
    redis.call('ZREMRANGEBYRANK', K_LOG, 0, -(CHANGES_KEEP + 1))
  end
end

-- The log's epoch: a new one whenever the log starts afresh (the store lost its data,
-- the queue was flushed), so a hub whose cursor is from another epoch re-reads.
local function log_epoch()
  local e = redis.call('HGET', K_ST, 'lepoch')
  if not e then
    local t = redis.call('TIME')
    e = t[1] .. string.format('%06d', tonumber(t[2]))
    redis.call('HSET', K_ST, 'lepoch', e)
    ST_READ = nil
  end
  return e
end

-- Admits queue heads in ticket order; returns the admitted visitor ids.
local function promote(cfg, now, limit)
  local out = {}
  if holding(cfg, now) then return out end
  local free = free_slots(cfg, now)
  if free > limit then free = limit end
  if free <= 0 then return out end
  local heads = redis.call('ZRANGE', K_Q, 0, free - 1, 'WITHSCORES')
  if #heads == 0 then return out end
  local events = {}
  local left = {}
  for i = 1, #heads, 2 do
    local v = heads[i]
    redis.call('ZREM', K_Q, v)
    redis.call('ZREM', K_HB, v)
    defer_drop(K_HB, v)
    events[#events + 1] = admit(cfg, v, now, true, tonumber(heads[i + 1]))
    out[#out + 1] = v
    left[#left + 1] = {heads[i + 1], v}
  end
  log_line('l', left)
  -- The line is shorter by those let in (a join of the same batch counted it).
  if KNOWN_QLEN then KNOWN_QLEN = KNOWN_QLEN - #out end
  -- The last ticket let in: where a lane that was idle starts again (enqueue).
  redis.call('HSET', K_ST, 'vt', heads[#heads])
  left_line(cfg, out, true)
  publish(events)
  return out
end

-- Each lane's {lane, waiting, admitted}, flat, the general line first (its waiting: the
-- line less the named lanes'); {} without lanes.
local function lane_counts(cfg)
  local out = {}
  if not cfg.lanes then return out end
  local named = 0
  local rows = {}
  for i = 2, #cfg.lanes.names do
    local name = cfg.lanes.names[i]
    local c = redis.call('HMGET', K_LANES, 'w:' .. name, 'a:' .. name)
    local w = math.max(tonumber(c[1]) or 0, 0)
    named = named + w
    rows[#rows + 1] = {name, w, tonumber(c[2]) or 0}
  end
  local general = tonumber(redis.call('HGET', K_LANES, 'a:')) or 0
  out[1] = ''
  out[2] = math.max(redis.call('ZCARD', K_Q) - named, 0)
  out[3] = general
  for i = 1, #rows do
    for j = 1, 3 do out[#out + 1] = rows[i][j] end
  end
  return out
end

-- The reply shared by join and status: a list whose fields' places are SNAP.<field>
-- (SNAPSHOT_FIELDS in store/redis/library.rs, which reads them by the same names; written in
-- when the library is built).
-- `pos`: the caller's ZRANK + 1 when it has one (0: not queued), else read here.
-- `place`: {ticket, joined_ms} of a queued visitor when the caller has them (join and
-- restore_place; status leaves them 0, to stay cheap); for state 'admitted',
-- {serial, issued_ms, expires_ms} of the session when the caller has them (a walk-in's,
-- just written; serial nil: only the end is known), else they are read here.
-- Pre-queued visitors the shuffle has not placed yet, once the opening came: they are
-- ahead of everyone in the line (reserve_prequeue), so positions and the line's length
-- count them. 0 otherwise.
local function unplaced(cfg, now)
  if cfg.phase ~= 'prequeue' or not cfg.open_at or now < cfg.open_at then return 0 end
  return redis.call('ZCARD', K_PQ) - redis.call('ZCARD', K_ST .. ':pqd')
end

local function reply(state, v, cfg, now, promoted, away, pos, place)
  local serial, issued, expires = 0, 0, 0
  if state == 'admitted' then
    if place and place[1] then
      serial, issued = place[1], place[2]
    else
      serial, issued = parse_session(deferred(K_SESS, v) or redis.call('HGET', K_SESS, v))
    end
    expires = place and place[3] or tonumber(deferred(K_ACT, v) or redis.call('ZSCORE', K_ACT, v))
    pos = 0
    place = nil
  elseif pos == nil then
    local r = redis.call('ZRANK', K_Q, v)
    pos = r and r + 1 or 0
  end
  local ticket, joined = 0, 0
  if place and pos > 0 then ticket, joined = place[1], place[2] end
  local ahead = unplaced(cfg, now)
  if pos > 0 then pos = pos + ahead end
  local out = SNAP_NEW
  out[SNAP.state] = state
  out[SNAP.position] = pos
  out[SNAP.queue_length] = (KNOWN_QLEN or redis.call('ZCARD', K_Q)) + ahead
  out[SNAP.active] = active_count(now)
  out[SNAP.capacity] = cfg.capacity
  out[SNAP.ttl_ms] = cfg.ttl_ms
  out[SNAP.stock] = cfg.stock
  out[SNAP.serial] = serial
  out[SNAP.issued_ms] = issued
  out[SNAP.expires_ms] = expires
  out[SNAP.now_ms] = now
  out[SNAP.promoted] = promoted
  out[SNAP.rate_cap] = cfg.rate_cap
  out[SNAP.target] = cfg.target
  out[SNAP.away] = away and 1 or 0
  -- The serial, and the line log's cursor the position is exact at, in one read.
  local st = ST_READ or redis.call('HMGET', K_ST, 'admits', 'lepoch', 'lseq')
  ST_READ = st
  out[SNAP.admits] = (DEFER and DEFER.admits) or tonumber(st[1]) or 0
  out[SNAP.ticket] = ticket
  out[SNAP.joined_ms] = joined
  out[SNAP.heartbeat_ms] = pos > 0 and ((BEAT_V == v and BEAT)
    or tonumber(deferred(K_HB, v) or redis.call('ZSCORE', K_HB, v)) or 0) or 0
  out[SNAP.line_epoch] = st[2] or ''
  out[SNAP.line_seq] = tonumber(st[3]) or 0
  return out
end

-- {ticket, joined_ms} of a queued visitor.
local function place_of(v)
  return {tonumber(redis.call('ZSCORE', K_Q, v)) or 0,
    tonumber(deferred(K_JT, v) or redis.call('HGET', K_JT, v)) or 0}
end

-- State of a visitor who holds no live session.
local function waiting_state(cfg, queued)
  if cfg.closed then return 'closed' end
  if cfg.phase == 'scheduled' then return 'scheduled' end
  if cfg.phase == 'prequeue' and not queued then return 'prequeue' end
  if cfg.stock == 0 then return 'sold_out' end
  if rejecting(cfg) then return 'rejected' end
  if not queued then return 'not_queued' end
  if cfg.paused or cfg.queue_all then return 'paused' end
  return 'queued'
end

-- Room-wide figures: a list whose fields' places are VIEW.<field> (ROOM_VIEW_FIELDS in
-- store/redis/library.rs).
local function room_view(cfg, now)
  local out = VIEW_NEW
  out[VIEW.queue_length] = redis.call('ZCARD', K_Q) + unplaced(cfg, now)
  out[VIEW.active] = active_count(now)
  out[VIEW.capacity] = cfg.capacity
  out[VIEW.ttl_ms] = cfg.ttl_ms
  out[VIEW.stock] = cfg.stock
  out[VIEW.now_ms] = now
  out[VIEW.rate_cap] = cfg.rate_cap
  out[VIEW.target] = cfg.target
  out[VIEW.paused] = cfg.paused and 1 or 0
  out[VIEW.closed] = cfg.closed and 1 or 0
  out[VIEW.admits] = tonumber(redis.call('HGET', K_ST, 'admits')) or 0
  out[VIEW.mode] = cfg.mode
  out[VIEW.queue_all] = cfg.queue_all and 1 or 0
  out[VIEW.phase] = cfg.phase or 'open'
  return out
end

-- When v's session was issued (ms) and whether it is unclaimed, or nil without one.
-- v's session serial, or nil without one.
local function session_serial(v)
  local s = redis.call('HGET', K_SESS, v)
  if not s then return nil end
  return (parse_session(s))
end

local function session_issued(v)
  local s = redis.call('HGET', K_SESS, v)
  if not s then return nil end
  local _, issued, unclaimed = parse_session(s)
  return issued, unclaimed
end

-- v was seen with its session (a status answer, an open socket told of it, a pass
-- checked, a release): clears the unclaimed mark, once.
-- Returns the session's serial and issue time (nil without a session record).
local function claim(v)
  local s = redis.call('HGET', K_SESS, v)
  if not s then return nil end
  if string.sub(s, -2) == ':u' then
    redis.call('HSET', K_SESS, v, string.sub(s, 1, -3))
  end
  local serial, issued = parse_session(s)
  return serial, issued
end

-- Records the end of v's session at `end_ms` (a release, or its expiry) for the ETA;
-- unclaimed sessions are not stays and are left out.
local function session_ended(v, end_ms)
  local issued, unclaimed = session_issued(v)
  if not issued or unclaimed then return end
  local dur = end_ms - issued
  if dur < 0 then dur = 0 end
  redis.call('LPUSH', K_ENDS, end_ms .. ':' .. dur)
  redis.call('LTRIM', K_ENDS, 0, ENDS_KEEP - 1)
end

-- A sign of life from queued visitor v at `now`: a heartbeat before `now` moves a step
-- ahead of it (a step: hb_ms / HB_STEPS, heartbeat_step in store/mod.rs); one at or after
-- `now` stays, and nothing is written. `fresh`: v has no heartbeat (a new place), so it
-- is not read first.
local function beat(cfg, now, v, fresh)
  if not fresh then
    local at = tonumber(deferred(K_HB, v) or redis.call('ZSCORE', K_HB, v))
    if at and at >= now then
      BEAT_V, BEAT = v, at
      return
    end
  end
  BEAT_V, BEAT = v, now + math.max(math.floor(cfg.hb_ms / HB_STEPS), 1)
  if DEFER then
    defer_set('ZADD GT', K_HB, v, int_s(BEAT))
  else
    redis.call('ZADD', K_HB, 'GT', int_s(BEAT), v)
  end
end

-- v's live session's end (ms), or nil without one.
local function admitted_until(v, now)
  local exp = tonumber(deferred(K_ACT, v) or redis.call('ZSCORE', K_ACT, v))
  if exp and exp > now then return exp end
  return nil
end

local function is_admitted(v, now)
  return admitted_until(v, now) ~= nil
end

-- Where v stands, as 4 integers: kind (0 queued, 1 admitted, -1 neither), position or
-- serial, issued_ms, expires_ms (watch and find).
local function place(v, now)
  local exp = redis.call('ZSCORE', K_ACT, v)
  if exp and tonumber(exp) > now then
    local serial, issued = parse_session(redis.call('HGET', K_SESS, v) or '0:0')
    return 1, serial, issued, tonumber(exp)
  end
  local r = redis.call('ZRANK', K_Q, v)
  if r then return 0, r + 1, 0, 0 end
  return -1, 0, 0, 0
end

-- Where v stands for a hub that counts positions itself (tick, places): as place(), with
-- the ticket instead of issued_ms for a queued visitor; an admitted one's session is
-- claimed (the socket is there to be told).
local function placed(v, now)
  local kind, a, b, c = place(v, now)
  if kind == 0 then b = tonumber(redis.call('ZSCORE', K_Q, v)) end
  if kind == 1 then claim(v) end
  return kind, a, b, c
end

-- Appends one visitor's 4 integers (as place() or placed() gives them) to the list t.
local function push_place(t, kind, a, b, c)
  t[#t + 1] = kind
  t[#t + 1] = a
  t[#t + 1] = b
  t[#t + 1] = c
end

-- The 4 integers of each visitor in vs, as of(v, now) gives them (place or placed).
local function places_of(of, vs, now)
  local t = {}
  for i = 1, #vs do push_place(t, of(vs[i], now)) end
  return t
end

-- {epoch, seq}: where the line's log stands.
local function log_cursor()
  return {log_epoch(), tonumber(redis.call('HGET', K_ST, 'lseq')) or 0}
end
