//! Reading Redis replies into the store's types and writing its types as script
//! arguments and hash fields (room configuration, patches, lanes, webhook records).

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
        capacity: u(f.get("capacity"))?,
        session_ttl_ms: u(f.get("ttl_ms"))?,
        stock: stock_of(as_int(f.get("stock"))?),
        admission: admission.transpose()?,
        now_ms: u(f.get("now_ms"))?,
        promoted: as_strings(f.get("promoted"))?,
        rate_cap_per_minute: u(f.get("rate_cap"))?,
        target_url: as_string(f.get("target"))?,
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
        mode: crate::config::QueueMode::parse(&as_string(f.get("mode"))?).unwrap_or_default(),
        queue_all: as_int(f.get("queue_all"))? == 1,
        phase: crate::config::schedule::EventPhase::parse(&as_string(f.get("phase"))?),
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

/// The config hash's fields a patch changes (same encoding as [`cfg_fields`]).
pub(super) fn patch_fields(p: &RoomPatch) -> Vec<String> {
    let flag = |b: bool| if b { "1" } else { "0" }.to_string();
    let mut f: Vec<String> = Vec::new();
    let mut put = |k: &str, v: String| {
        f.push(k.into());
        f.push(v);
    };
    if let Some(v) = &p.name {
        put("name", v.clone());
    }
    if let Some(v) = p.capacity {
        put("capacity", v.to_string());
    }
    if let Some(v) = p.max_admissions_per_minute {
        put("rate_cap", v.to_string());
    }
    if let Some(v) = p.session_ttl_secs {
        put("ttl_ms", (v * 1000).to_string());
    }
    if let Some(v) = p.heartbeat_timeout_secs {
        put("hb_ms", (v * 1000).to_string());
    }
    if let Some(v) = &p.target_url {
        put("target", v.clone());
    }
    if let Some(v) = p.paused {
        put("paused", flag(v));
    }
    if let Some(v) = p.closed {
        put("closed", flag(v));
    }
    if let Some(v) = p.mode {
        put("mode", v.as_str().into());
    }
    if let Some(v) = p.queue_all {
        put("queue_all", flag(v));
    }
    if let Some(v) = &p.embed_origins {
        put(
            "embed",
            serde_json::to_string(v).unwrap_or_else(|_| "[]".into()),
        );
    }
    if let Some(v) = p.entry {
        put("entry", v.as_str().into());
    }
    if let Some(v) = &p.entry_secret {
        put("entry_secret", v.expose().to_string());
    }
    if let Some(v) = &p.entry_public_key {
        put("entry_pk", v.clone());
    }
    if let Some(v) = p.challenge {
        put("challenge", v.as_str().into());
    }
    if let Some(v) = p.pow_max_number {
        put("pow_max", v.to_string());
    }
    if let Some(v) = p.max_places_per_ip {
        put("ip_max", v.to_string());
    }
    if let Some(v) = &p.lanes {
        let (lanes, strides) = lane_fields(v);
        put("lanes", lanes);
        put("lane_strides", strides);
    }
    if let Some(v) = p.renew_on_activity {
        put("renew", flag(v));
    }
    if let Some(v) = p.max_session_secs {
        put("max_sess", v.to_string());
    }
    if let Some(v) = &p.webhook_url {
        put("wh_url", v.clone());
    }
    if let Some(v) = &p.webhook_secret {
        put("wh_secret", v.expose().to_string());
    }
    let ms = |v: Option<u64>| v.map(|x| x.to_string()).unwrap_or_default();
    if let Some(v) = p.prequeue_opens_at {
        put("pq_at", ms(v));
    }
    if let Some(v) = p.opens_at {
        put("open_at", ms(v));
    }
    if let Some(v) = p.closes_at {
        put("close_at", ms(v));
    }
    let nonzero = |v: u64| if v == 0 { String::new() } else { v.to_string() };
    if let Some(v) = p.event_capacity {
        put("ev_capacity", nonzero(v));
    }
    if let Some(v) = p.event_session_ttl_secs {
        put("ev_ttl_ms", nonzero(v * 1000));
    }
    if let Some(v) = p.event_max_admissions_per_minute {
        put("ev_rate_cap", nonzero(v));
    }
    f
}

/// The config hash's `lanes` (JSON, read back by [`cfg_from_hash`]) and `lane_strides`
/// (what the scripts read: `=<general> <lane>=<stride> …`, empty without lanes).
pub(super) fn lane_fields(lanes: &[crate::config::Lane]) -> (String, String) {
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
/// retries (ZSET event id → due ms), their records (HASH event id → JSON) and the
/// dead-letter count (STRING).
pub(super) const WEBHOOK_PARTS: [&str; 4] = ["wh:cursor", "wh:retry", "wh:body", "wh:dead"];

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

/// The config hash's fields for a room.
pub(super) fn cfg_fields(cfg: &RoomConfig) -> Vec<String> {
    let flag = |b: bool| if b { "1" } else { "0" }.to_string();
    let (lanes, lane_strides) = lane_fields(&cfg.lanes);
    vec![
        "id".into(),
        cfg.id.clone(),
        "name".into(),
        cfg.name.clone(),
        "capacity".into(),
        cfg.capacity.to_string(),
        "rate_cap".into(),
        cfg.max_admissions_per_minute.to_string(),
        "ttl_ms".into(),
        (cfg.session_ttl_secs * 1000).to_string(),
        "hb_ms".into(),
        (cfg.heartbeat_timeout_secs * 1000).to_string(),
        "target".into(),
        cfg.target_url.clone(),
        "stock".into(),
        cfg.stock.map(|s| s as i64).unwrap_or(-1).to_string(),
        "paused".into(),
        flag(cfg.paused),
        "closed".into(),
        flag(cfg.closed),
        "mode".into(),
        cfg.mode.as_str().into(),
        "queue_all".into(),
        flag(cfg.queue_all),
        "embed".into(),
        serde_json::to_string(&cfg.embed_origins).unwrap_or_else(|_| "[]".into()),
        "entry".into(),
        cfg.entry.as_str().into(),
        // Empty: none (HSET cannot delete a field in the same call).
        "entry_secret".into(),
        cfg.entry_secret
            .as_ref()
            .map(|s| s.expose().to_string())
            .unwrap_or_default(),
        "entry_pk".into(),
        cfg.entry_public_key.clone().unwrap_or_default(),
        "challenge".into(),
        cfg.challenge.as_str().into(),
        "pow_max".into(),
        cfg.pow_max_number.to_string(),
        "ip_max".into(),
        cfg.max_places_per_ip.to_string(),
        "lanes".into(),
        lanes,
        "lane_strides".into(),
        lane_strides,
        "renew".into(),
        flag(cfg.renew_on_activity),
        "max_sess".into(),
        cfg.max_session_secs.to_string(),
        // Empty: none, as entry_secret.
        "wh_url".into(),
        cfg.webhook_url.clone().unwrap_or_default(),
        "wh_secret".into(),
        cfg.webhook_secret
            .as_ref()
            .map(|s| s.expose().to_string())
            .unwrap_or_default(),
        "pq_at".into(),
        opt(cfg.prequeue_opens_at),
        "open_at".into(),
        opt(cfg.opens_at),
        "close_at".into(),
        opt(cfg.closes_at),
        "ev_capacity".into(),
        opt(cfg.event_capacity),
        "ev_ttl_ms".into(),
        opt(cfg.event_session_ttl_secs.map(|s| s * 1000)),
        "ev_rate_cap".into(),
        opt(cfg.event_max_admissions_per_minute),
    ]
}

/// An optional number as the config hash holds it (`""`: none).
pub(super) fn opt(v: Option<u64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

pub(super) fn cfg_from_hash(
    room: &str,
    h: &std::collections::HashMap<String, String>,
) -> RoomConfig {
    let num = |k: &str| h.get(k).and_then(|v| v.parse::<i64>().ok()).unwrap_or(0);
    RoomConfig {
        id: room.to_string(),
        name: h.get("name").cloned().unwrap_or_default(),
        capacity: num("capacity").max(0) as u64,
        max_admissions_per_minute: num("rate_cap").max(0) as u64,
        session_ttl_secs: (num("ttl_ms").max(0) as u64) / 1000,
        heartbeat_timeout_secs: (num("hb_ms").max(0) as u64) / 1000,
        target_url: h.get("target").cloned().unwrap_or_default(),
        stock: h
            .get("stock")
            .and_then(|v| v.parse::<i64>().ok())
            .and_then(stock_of),
        paused: h.get("paused").map(|v| v == "1").unwrap_or(false),
        closed: h.get("closed").map(|v| v == "1").unwrap_or(false),
        mode: h
            .get("mode")
            .and_then(|v| crate::config::QueueMode::parse(v))
            .unwrap_or_default(),
        queue_all: h.get("queue_all").map(|v| v == "1").unwrap_or(false),
        embed_origins: h
            .get("embed")
            .and_then(|v| serde_json::from_str(v).ok())
            .unwrap_or_default(),
        entry: if h.get("entry").is_some_and(|v| v == "token") {
            crate::config::EntryMode::Token
        } else {
            crate::config::EntryMode::Open
        },
        entry_secret: h
            .get("entry_secret")
            .filter(|v| !v.is_empty())
            .map(|v| crate::config::Secret::new(v.clone())),
        entry_public_key: h.get("entry_pk").filter(|v| !v.is_empty()).cloned(),
        challenge: if h.get("challenge").is_some_and(|v| v == "pow") {
            crate::config::ChallengeMode::Pow
        } else {
            crate::config::ChallengeMode::Off
        },
        pow_max_number: h
            .get("pow_max")
            .and_then(|v| v.parse().ok())
            .unwrap_or(crate::config::DEFAULT_POW_MAX_NUMBER),
        max_places_per_ip: num("ip_max").max(0) as u64,
        lanes: h
            .get("lanes")
            .filter(|v| !v.is_empty())
            .and_then(|v| serde_json::from_str(v).ok())
            .unwrap_or_default(),
        renew_on_activity: h.get("renew").is_some_and(|v| v == "1"),
        max_session_secs: num("max_sess").max(0) as u64,
        webhook_url: h.get("wh_url").filter(|v| !v.is_empty()).cloned(),
        webhook_secret: h
            .get("wh_secret")
            .filter(|v| !v.is_empty())
            .map(|v| crate::config::WebhookSecret::new(v.clone())),
        prequeue_opens_at: some(h, "pq_at"),
        opens_at: some(h, "open_at"),
        closes_at: some(h, "close_at"),
        event_capacity: some(h, "ev_capacity"),
        event_session_ttl_secs: some(h, "ev_ttl_ms").map(|ms| ms / 1000),
        event_max_admissions_per_minute: some(h, "ev_rate_cap"),
    }
}

/// An optional number of the config hash (absent or `""`: none).
pub(super) fn some(h: &std::collections::HashMap<String, String>, k: &str) -> Option<u64> {
    h.get(k).and_then(|v| v.parse().ok())
}
