//! Reading Redis replies into the store's types and writing its types as script
//! arguments and hash fields (lanes, webhook records; the room config hash: cfg_hash.rs).

use super::*;

/// The error a function's refusal stands for (`{'no_room'}`, `{'too_many_places'}`,
/// `{'held', ms}`), or None for any other reply.
pub(super) fn refusal(v: &Value) -> Option<StoreError> {
    let Value::Array(items) = v else {
        return None;
    };
    let Some(Value::BulkString(b)) = items.first() else {
        return None;
    };
    match b.as_slice() {
        b"no_room" => Some(StoreError::NoSuchRoom),
        b"too_many_places" => Some(StoreError::TooManyPlaces),
        b"held" => {
            let ms = match items.get(1) {
                Some(Value::Int(ms)) => *ms as u64,
                _ => 1000,
            };
            Some(StoreError::Held { retry_after_ms: ms })
        }
        _ => None,
    }
}

pub(super) fn protocol(what: &str) -> StoreError {
    StoreError::Protocol(what.to_string())
}

pub(super) fn as_array(v: Value) -> StoreResult<Vec<Value>> {
    match v {
        Value::Array(a) => Ok(a),
        other => Err(StoreError::Protocol(format!(
            "expected array, got {other:?}"
        ))),
    }
}

pub(super) fn as_int(v: &Value) -> StoreResult<i64> {
    match v {
        Value::Int(i) => Ok(*i),
        Value::BulkString(b) => std::str::from_utf8(b)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| protocol("integer")),
        Value::Nil => Ok(0),
        _ => Err(protocol("integer")),
    }
}

pub(super) fn as_string(v: &Value) -> StoreResult<String> {
    match v {
        Value::BulkString(b) => String::from_utf8(b.clone()).map_err(|_| protocol("utf-8")),
        Value::SimpleString(s) => Ok(s.clone()),
        Value::Int(i) => Ok(i.to_string()),
        _ => Err(protocol("string")),
    }
}

pub(super) fn as_strings(v: &Value) -> StoreResult<Vec<String>> {
    match v {
        Value::Array(a) => a.iter().map(as_string).collect(),
        Value::Nil => Ok(Vec::new()),
        _ => Err(protocol("array of strings")),
    }
}

pub(super) fn u(v: &Value) -> StoreResult<u64> {
    Ok(as_int(v)?.max(0) as u64)
}

pub(super) fn stock_of(v: i64) -> Option<u64> {
    (v >= 0).then_some(v as u64)
}

/// Whether a call failed because the node has no such function (the library is not
/// loaded there).
pub(super) fn is_missing_function(e: &redis::RedisError) -> bool {
    let text = e.to_string();
    text.contains("Function not found") || text.contains("function not found")
}

/// Parses the reply built by `reply()` in `common.lua`.
pub(super) fn parse_snapshot(v: Value) -> StoreResult<Snapshot> {
    let f = Fields::new(SNAPSHOT_FIELDS, v, "snapshot arity")?;
    let promoted = as_strings(f.get("promoted"))?;
    snapshot(&f, &f, promoted)
}

/// Parses `join_many`'s one flat list for `n` joins ([`SHARED_FIELDS`] once, then
/// [`BATCH_FIELDS`] per visitor) into each join's answer, in order: its snapshot, or its
/// refusal.
pub(super) fn parse_join_batch(v: Value, n: usize) -> StoreResult<Vec<StoreResult<Snapshot>>> {
    let mut all = as_array(v)?;
    let (s, k) = (SHARED_FIELDS.len(), BATCH_FIELDS.len());
    if all.len() != s + n * k {
        return Err(protocol("join_many arity"));
    }
    let each = all.split_off(s);
    let shared = Fields::new(SHARED_FIELDS, Value::Array(all), "join_many arity")?;
    Ok(each
        .chunks(k)
        .map(|c| {
            let f = Fields::new(BATCH_FIELDS, Value::Array(c.to_vec()), "join_many arity")?;
            match as_string(f.get("state"))?.as_str() {
                "too_many_places" => return Err(StoreError::TooManyPlaces),
                "held" => {
                    return Err(StoreError::Held {
                        retry_after_ms: u(f.get("position"))?,
                    })
                }
                _ => {}
            }
            let promoted = as_string(f.get("promoted"))?
                .split(' ')
                .filter(|v| !v.is_empty())
                .map(str::to_string)
                .collect();
            snapshot(&f, &shared, promoted)
        })
        .collect())
}

/// A snapshot from its fields: the visitor's in `f`, the room's settings and the clock
/// in `shared` (`f` itself for a single reply).
fn snapshot(f: &Fields, shared: &Fields, promoted: Vec<String>) -> StoreResult<Snapshot> {
    let state_s = as_string(f.get("state"))?;
    let state = VisitorState::parse(&state_s).ok_or_else(|| protocol("state"))?;
    let admission = (state == VisitorState::Admitted).then(|| -> StoreResult<Admission> {
        Ok(Admission {
            serial: u(f.get("serial"))?,
            issued_at_ms: u(f.get("issued_ms"))?,
            expires_at_ms: u(f.get("expires_ms"))?,
        })
    });
    Ok(Snapshot {
        state,
        position: u(f.get("position"))?,
        queue_length: u(f.get("queue_length"))?,
        active: u(f.get("active"))?,
        capacity: u(shared.get("capacity"))?,
        session_ttl_ms: u(shared.get("ttl_ms"))?,
        stock: stock_of(as_int(f.get("stock"))?),
        admission: admission.transpose()?,
        now_ms: u(shared.get("now_ms"))?,
        promoted,
        rate_cap_per_minute: u(shared.get("rate_cap"))?,
        target_url: as_string(shared.get("target"))?,
        rejoined_after_absence: u(f.get("away"))? == 1,
        admits: u(f.get("admits"))?,
        ticket: u(f.get("ticket"))?,
        joined_at_ms: u(f.get("joined_ms"))?,
        heartbeat_ms: u(f.get("heartbeat_ms"))?,
        line: LineCursor {
            epoch: as_string(f.get("line_epoch"))?,
            seq: u(f.get("line_seq"))?,
        },
    })
}

/// Parses `room_view()` from `common.lua`.
pub(super) fn parse_room_view(v: Value) -> StoreResult<RoomView> {
    let f = Fields::new(ROOM_VIEW_FIELDS, v, "room view arity")?;
    Ok(RoomView {
        queue_length: u(f.get("queue_length"))?,
        active: u(f.get("active"))?,
        capacity: u(f.get("capacity"))?,
        session_ttl_ms: u(f.get("ttl_ms"))?,
        stock: stock_of(as_int(f.get("stock"))?),
        now_ms: u(f.get("now_ms"))?,
        rate_cap_per_minute: u(f.get("rate_cap"))?,
        target_url: as_string(f.get("target"))?,
        paused: as_int(f.get("paused"))? == 1,
        closed: as_int(f.get("closed"))? == 1,
        admits: u(f.get("admits"))?,
        mode: crate::room::QueueMode::parse(&as_string(f.get("mode"))?).unwrap_or_default(),
        queue_all: as_int(f.get("queue_all"))? == 1,
        phase: crate::room::schedule::EventPhase::parse(&as_string(f.get("phase"))?),
    })
}

/// Parses the 4 integers per visitor that `place()` in `common.lua` gives (watch, find).
pub(super) fn parse_places(flat: &[Value]) -> StoreResult<Vec<WatchEntry>> {
    flat.chunks(4)
        .map(|c| {
            if c.len() != 4 {
                return Err(protocol("place arity"));
            }
            Ok(match as_int(&c[0])? {
                1 => WatchEntry::Admitted(Admission {
                    serial: u(&c[1])?,
                    issued_at_ms: u(&c[2])?,
                    expires_at_ms: u(&c[3])?,
                }),
                0 => WatchEntry::Queued {
                    position: u(&c[1])?,
                },
                _ => WatchEntry::Gone,
            })
        })
        .collect()
}

/// Parses the 4 integers per visitor that `placed()` in `common.lua` gives (tick,
/// places): as `place()`, with a queued visitor's ticket third.
pub(super) fn parse_placed(flat: &[Value]) -> StoreResult<Vec<Placed>> {
    let entries = parse_places(flat)?;
    Ok(entries
        .into_iter()
        .zip(flat.chunks(4))
        .map(|(entry, c)| {
            let ticket = match entry {
                WatchEntry::Queued { .. } => u(&c[2]).unwrap_or(0),
                _ => 0,
            };
            Placed { entry, ticket }
        })
        .collect())
}

/// Parses `tick.lua`'s reply: {room_view, epoch, seq, exact, gap, changes, places, rehold}.
pub(super) fn parse_tick(v: Value, held: usize) -> StoreResult<RoomTick> {
    let a = as_array(v)?;
    if a.len() != 8 {
        return Err(protocol("tick arity"));
    }
    let cursor = LineCursor {
        epoch: as_string(&a[1])?,
        seq: u(&a[2])?,
    };
    let exact = as_int(&a[3])? == 1;
    let gap = as_int(&a[4])? == 1;
    let rehold = as_int(&a[7])? == 1;
    let mut a = a.into_iter();
    let view = parse_room_view(a.next().unwrap_or(Value::Nil))?;
    let mut rest = a.skip(4);
    let changes = as_strings(&rest.next().unwrap_or(Value::Nil))?
        .iter()
        .map(|s| LineChange::parse(s).ok_or_else(|| protocol("line log entry")))
        .collect::<StoreResult<Vec<_>>>()?;
    let flat = as_array(rest.next().unwrap_or(Value::Nil))?;
    if flat.len() != held * 4 {
        return Err(protocol("tick places"));
    }
    Ok(RoomTick {
        view,
        cursor,
        exact,
        changes: (!gap).then_some(changes),
        placed: parse_placed(&flat)?,
        rehold,
    })
}

/// A `MATCH` pattern for ids starting with `prefix`, glob characters escaped.
pub(super) fn prefix_pattern(prefix: &str) -> String {
    let mut p = String::with_capacity(prefix.len() + 1);
    for c in prefix.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            p.push('\\');
        }
        p.push(c);
    }
    p.push('*');
    p
}

/// Parses an admission message: channel `P:room:{R}:events`, payload
/// `v:serial:issued:expires ...`.
pub(super) fn parse_events(channel: &str, payload: &[u8]) -> Vec<AdmittedEvent> {
    let room = match (channel.find('{'), channel.rfind('}')) {
        (Some(a), Some(b)) if a < b => &channel[a + 1..b],
        _ => return Vec::new(),
    };
    let Ok(text) = std::str::from_utf8(payload) else {
        return Vec::new();
    };
    text.split(' ')
        .filter_map(|item| {
            let mut p = item.split(':');
            let visitor = p.next()?.to_string();
            let serial = p.next()?.parse().ok()?;
            let issued_at_ms = p.next()?.parse().ok()?;
            let expires_at_ms = p.next()?.parse().ok()?;
            Some(AdmittedEvent {
                room: room.to_string(),
                visitor,
                admission: Admission {
                    serial,
                    issued_at_ms,
                    expires_at_ms,
                },
            })
        })
        .collect()
}

/// The config hash's `lanes` (JSON, read back by [`cfg_from_hash`]) and `lane_strides`
/// (what the scripts read: `=<general> <lane>=<stride> …`, empty without lanes).
pub(super) fn lane_fields(lanes: &[crate::room::Lane]) -> (String, String) {
    if lanes.is_empty() {
        return (String::new(), String::new());
    }
    let strides: Vec<String> = crate::store::lane_strides(lanes)
        .iter()
        .map(|(name, stride)| format!("{name}={stride}"))
        .collect();
    (
        serde_json::to_string(lanes).unwrap_or_default(),
        strides.join(" "),
    )
}

/// Parses one minute's HGETALL.
pub(super) fn parse_minute(minute: u64, v: &Value) -> StoreResult<MinuteStats> {
    let flat = match v {
        Value::Array(a) => a,
        _ => return Err(protocol("minute hash")),
    };
    let mut m = MinuteStats {
        minute,
        ..MinuteStats::default()
    };
    for kv in flat.chunks(2) {
        let (k, n) = (as_string(&kv[0])?, u(&kv[1])?);
        match k.as_str() {
            "a" => m.admissions = n,
            "r" => m.reaped = n,
            "q" => m.queue_length = Some(n),
            h if h.starts_with('h') => {
                if let Some(slot) = h[1..]
                    .parse::<usize>()
                    .ok()
                    .and_then(|i| m.waits.get_mut(i))
                {
                    *slot = n;
                }
            }
            _ => {}
        }
    }
    Ok(m)
}

/// A room's webhook keys (`P:room:{R}:wh:*`, docs/design.md): the cursor (STRING), the
/// retries (ZSET event id → due ms), their records (HASH event id → JSON), the
/// dead-letter count (STRING) and the kept dead letters (LIST of JSON, newest first).
pub(super) const WEBHOOK_PARTS: [&str; 5] =
    ["wh:cursor", "wh:retry", "wh:body", "wh:dead", "wh:letters"];

/// Adds to `p` the commands that park (or re-park) a retry.
pub(super) fn park(p: &mut Pipeline, zkey: &str, hkey: &str, r: &WebhookRetry) {
    // unwrap: a struct of strings and numbers always serialises.
    let record = serde_json::to_string(r).unwrap();
    p.cmd("ZADD")
        .arg(zkey)
        .arg(r.due_ms)
        .arg(&r.event_id)
        .ignore();
    p.cmd("HSET")
        .arg(hkey)
        .arg(&r.event_id)
        .arg(record)
        .ignore();
}
