-- Counts a new place of visitor v against its group's cap (`group`: '' for none). The
-- group's set holds every place it took since it was last pruned, some of which may have
-- ended since: while it holds fewer than `max`, the live ones are fewer too and the place
-- is taken without reading them (3 commands). Only a set at the cap is read, and the
-- places that ended are dropped from it (O(places held)), so a group far from its cap pays
-- nothing for the places it holds, and the answer is the one an exact count would give.
-- Returns false, taking nothing, when the group already holds the most it may: places in
-- line, in the pre-queue, or live sessions.
local function take_group_place(v, group, max, now)
  if not group or group == '' then return true end
  local key = K_ST .. ':ip:' .. group
  max = tonumber(max)
  if redis.call('ZCARD', key) >= max then
    local held = redis.call('ZRANGE', key, 0, -1)
    local n = 0
    for i = 1, #held do
      if redis.call('ZSCORE', K_Q, held[i]) or redis.call('ZSCORE', K_PQ, held[i])
        or is_admitted(held[i], now) then
        n = n + 1
      else
        redis.call('ZREM', key, held[i])
      end
    end
    if n >= max then return false end
  end
  redis.call('ZADD', key, now, v)
  redis.call('PEXPIRE', key, PLACE_GROUP_TTL_MS)
  return true
end

-- join_one(cfg, now, A, o): one visitor's join, its arguments A[o + 1] .. A[o + 7] as
-- join's ARGV[1] .. ARGV[7] (join.lua says what each is), in a room whose configuration
-- `cfg` and clock `now` the caller read. Returns the visitor's reply, or
-- {'too_many_places'} (nothing taken), or {'held', ms left}. join calls it once;
-- join_many once per visitor of a batch, with one cfg and one clock for all
-- (docs/design.md#joins-taken-together). What a call remembers between visitors (ACTIVE,
-- KNOWN_QLEN, BEAT_V, ST_READ) is kept true by the functions that change it.
local function join_one(cfg, now, A, o)
  local v = A[o + 1]
  -- A visitor id the instance drew for this join (A[o + 7] = '1') has no place in line or
  -- away mark to look for (2 commands fewer). Its session is still looked for, and its
  -- new place is taken only if absent (ZADD NX): should this call run late, after the
  -- visitor's retry (which presents the id, so is not fresh) took a place or a session,
  -- it finds them and changes nothing.
  local fresh = A[o + 7] == '1'
  local live_until = admitted_until(v, now)
  if live_until then return reply('admitted', v, cfg, now, {}, false, 0, {nil, nil, live_until}) end
  if cfg.closed then return reply('closed', v, cfg, now, {}) end
  -- A scheduled event: before its pre-queue no place is taken; in the pre-queue a visitor
  -- waits unordered (the shuffle at open_at orders it); after open_at, until the shuffle
  -- is done, newcomers queue behind the whole pre-queue (reserve_prequeue).
  if cfg.phase == 'scheduled' then return reply('scheduled', v, cfg, now, {}, false, 0) end
  if cfg.phase == 'prequeue' and not redis.call('ZSCORE', K_Q, v) then
    if redis.call('ZSCORE', K_PQ, v) then return reply('prequeue', v, cfg, now, {}, false, 0) end
    if now < cfg.open_at then
      if cfg.stock == 0 then return reply('sold_out', v, cfg, now, {}) end
      if not take_group_place(v, A[o + 2], A[o + 3], now) then return {'too_many_places'} end
      if A[o + 5] and A[o + 5] ~= '' then redis.call('HSETNX', K_ST, 'seed', A[o + 5]) end
      redis.call('ZADD', K_PQ, 'NX', now, v)
      return reply('prequeue', v, cfg, now, {}, false, 0)
    end
    reserve_prequeue()
  end
  -- Rejecting: no promotion and no new place; a place already held is kept (and its
  -- heartbeat refreshed), shown with the `rejected` state.
  if rejecting(cfg) then
    local r = redis.call('ZRANK', K_Q, v)
    if r then beat(cfg, now, v) end
    return reply(waiting_state(cfg, r ~= false), v, cfg, now, {}, false, r and r + 1 or 0)
  end
  -- The line's length, counted once per call (an earlier visitor of the batch may have
  -- counted it; promote keeps it true) and first: an empty line has nobody to promote and
  -- cannot hold v, so a walk-in reads neither the heads nor v's rank (2 commands), and the
  -- reply reads no length.
  KNOWN_QLEN = KNOWN_QLEN or redis.call('ZCARD', K_Q)
  -- Fill freed slots from the head first, so a newcomer never overtakes the queue.
  local promoted = {}
  if KNOWN_QLEN > 0 then promoted = promote(cfg, now, PROMOTE_LIMIT) end
  for i = 1, #promoted do
    if promoted[i] == v then return reply('admitted', v, cfg, now, promoted) end
  end
  -- (In passthrough a fresh id could walk in past its own place: it is looked for.)
  local r = KNOWN_QLEN > 0 and (not fresh or cfg.mode == 'passthrough')
    and redis.call('ZRANK', K_Q, v)
  if r then
    beat(cfg, now, v)
    return reply(waiting_state(cfg, true), v, cfg, now, promoted, false, r + 1, place_of(v))
  end
  -- A room re-created after the store lost its data gives no new place while the places
  -- that were lost are put back: a newcomer now would go ahead of them.
  if cfg.hold_until > now then return {'held', cfg.hold_until - now} end
  -- Dropped for silence earlier? Then this join puts them at the back, and says so.
  local away = not fresh and redis.call('ZREM', K_AWAY, v) == 1
  if cfg.stock == 0 then return reply('sold_out', v, cfg, now, promoted) end
  -- A new place: count it against the group's cap first.
  if not take_group_place(v, A[o + 2], A[o + 3], now) then return {'too_many_places'} end
  -- A walk-in: nobody waiting ahead (in passthrough there is no line to respect) and a
  -- slot free; never while paused or queueing all. The reply is given the session admit
  -- just wrote, rather than read it back (2 commands).
  local qlen = KNOWN_QLEN
  if not cfg.paused and not cfg.queue_all and cfg.phase == 'open' then
    if (cfg.mode == 'passthrough' or qlen == 0) and free_slots(cfg, now) > 0 then
      local ev, serial, expires = admit(cfg, v, now)
      publish({ev})
      return reply('admitted', v, cfg, now, promoted, false, 0, {serial, now, expires})
    end
  end
  local ticket
  if cfg.mode == 'random' and A[o + 6] and A[o + 6] ~= '' then
    -- Random mode: the ticket is the visitor's draw (HMAC of the seed, from Rust).
    ticket = tonumber(A[o + 6])
    if redis.call('ZADD', K_Q, 'NX', A[o + 6], v) == 0 then ticket = nil end
  else
    ticket = enqueue(cfg, v, A[o + 4] or '')
  end
  if not ticket then
    -- Already in line (only a fresh id, which was not looked for, gets here: see above).
    local r = redis.call('ZRANK', K_Q, v)
    beat(cfg, now, v)
    return reply(waiting_state(cfg, true), v, cfg, now, promoted, false, r + 1, place_of(v))
  end
  beat(cfg, now, v, true)
  if DEFER then
    defer_set('HSET', K_JT, v, int_s(now))
  else
    redis.call('HSET', K_JT, v, int_s(now))
  end
  -- Without lanes or draws the new ticket is the line's highest (`seq` is past every
  -- ticket: settle_tickets, settle_after_random, restore_place), so the newcomer is last.
  local pos = nil
  KNOWN_QLEN = qlen + 1
  if not cfg.lanes and cfg.mode ~= 'random' then pos = qlen + 1 end
  return reply(waiting_state(cfg, true), v, cfg, now, promoted, away, pos, {ticket, now})
end
