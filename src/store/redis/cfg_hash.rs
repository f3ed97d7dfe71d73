//! The room's config hash (`<P>:room:{<room>}:cfg`) as one table: each field's name, its
//! encoding, what an absent field reads as, and how a [`RoomConfig`] and a [`RoomPatch`]
//! are written into it and read back. The codec ([`cfg_fields`], [`patch_fields`],
//! [`cfg_from_hash`]) goes through the table, and so do the scripts: [`lua_cfg_reader`]
//! generates `read_cfg`'s field list and decoder into the library's prelude, so
//! `common.lua` reads the config by name. A room setting is one row here (checklist:
//! docs/development.md#adding-a-room-setting); the hash's names and encodings are those
//! of earlier builds, so a room they wrote reads the same.

use super::*;
use crate::room::outflow::OutflowPatch;
use crate::room::{ChallengeMode, EntryMode, OutflowMode, QueueMode, Secret, WebhookSecret};
use crate::store::RoomPatch;

/// How a field's value is written, and so how the scripts decode it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Enc {
    /// Text as it is (an enum's name, a URL, an id).
    Text,
    /// A whole number in decimal.
    Int,
    /// `1` or `0`.
    Flag,
    /// A whole number in decimal, `""` for none.
    OptInt,
    /// JSON (lists the scripts never read).
    Json,
    /// Written and read by the scripts only, in their own format (`lane_strides`).
    Raw,
}

type Put = fn(&RoomConfig) -> String;
type Patch = fn(&RoomPatch) -> Option<String>;
type Get = fn(&mut RoomConfig, &str);

/// One field of the config hash.
pub(super) struct CfgField {
    /// The field's name in the hash (and in the scripts' parsed config: `cfg.<name>`).
    pub(super) name: &'static str,
    pub(super) enc: Enc,
    /// What an absent field reads as, on both sides (a room written before the field
    /// existed); `""` in an `Int` field the scripts read: nil there.
    pub(super) default: &'static str,
    /// Read by the scripts' `read_cfg` (into the parsed config they all use).
    pub(super) scripts: bool,
    /// The room's value as stored (None: a field only the scripts write).
    pub(super) put: Option<Put>,
    /// A patch's value, when it changes this field (None: no patch does).
    pub(super) patch: Option<Patch>,
    /// Reads the stored value into a [`RoomConfig`] (None: Rust never reads it).
    pub(super) get: Option<Get>,
}

fn flag(b: bool) -> String {
    if b { "1" } else { "0" }.to_string()
}

/// A count as stored, read as the codec always has (unreadable or negative: 0).
fn count(v: &str) -> u64 {
    v.parse::<i64>().unwrap_or(0).max(0) as u64
}

/// An optional number (`""` or unreadable: none).
fn some(v: &str) -> Option<u64> {
    v.parse().ok()
}

/// `0` as `""` (a patch's way of removing an override).
fn nonzero(v: u64) -> String {
    if v == 0 {
        String::new()
    } else {
        v.to_string()
    }
}

fn secret(s: &Option<Secret>) -> String {
    s.as_ref()
        .map(|s| s.expose().to_string())
        .unwrap_or_default()
}

/// A brand as stored: `""` when empty, else its JSON.
fn brand_json(b: &crate::room::brand::Brand) -> String {
    if b.is_empty() {
        return String::new();
    }
    serde_json::to_string(b).unwrap_or_default()
}

fn nonempty(v: &str) -> Option<String> {
    (!v.is_empty()).then(|| v.to_string())
}

/// Every field of the config hash. `version` and `rev` are the scripts' bookkeeping
/// (common.lua: `load_cfg_raw`, `cfg_written`), `hold_until` and `ev_mark` are written by
/// them too; every other field is a room setting.
pub(super) const CFG_FIELDS: &[CfgField] = &[
    CfgField {
        name: "id",
        enc: Enc::Text,
        default: "",
        scripts: false,
        put: Some(|c| c.id.clone()),
        patch: None,
        // The id is the key's: cfg_from_hash sets it.
        get: Some(|_, _| {}),
    },
    CfgField {
        name: "name",
        enc: Enc::Text,
        default: "",
        scripts: false,
        put: Some(|c| c.name.clone()),
        patch: Some(|p| p.name.clone()),
        get: Some(|c, v| c.name = v.to_string()),
    },
    CfgField {
        name: "capacity",
        enc: Enc::Int,
        default: "",
        scripts: true,
        put: Some(|c| c.capacity.to_string()),
        patch: Some(|p| p.capacity.map(|v| v.to_string())),
        get: Some(|c, v| c.capacity = count(v)),
    },
    CfgField {
        name: "rate_cap",
        enc: Enc::Int,
        default: "0",
        scripts: true,
        put: Some(|c| c.max_admissions_per_minute.to_string()),
        patch: Some(|p| p.max_admissions_per_minute.map(|v| v.to_string())),
        get: Some(|c, v| c.max_admissions_per_minute = count(v)),
    },
    CfgField {
        name: "ttl_ms",
        enc: Enc::Int,
        default: "",
        scripts: true,
        put: Some(|c| (c.session_ttl_secs * 1000).to_string()),
        patch: Some(|p| p.session_ttl_secs.map(|v| (v * 1000).to_string())),
        get: Some(|c, v| c.session_ttl_secs = count(v) / 1000),
    },
    CfgField {
        name: "hb_ms",
        enc: Enc::Int,
        default: "",
        scripts: true,
        put: Some(|c| (c.heartbeat_timeout_secs * 1000).to_string()),
        patch: Some(|p| p.heartbeat_timeout_secs.map(|v| (v * 1000).to_string())),
        get: Some(|c, v| c.heartbeat_timeout_secs = count(v) / 1000),
    },
    CfgField {
        name: "target",
        enc: Enc::Text,
        default: "",
        scripts: true,
        put: Some(|c| c.target_url.clone()),
        patch: Some(|p| p.target_url.clone()),
        get: Some(|c, v| c.target_url = v.to_string()),
    },
    // -1: unlimited. Never patched: admissions decrement it (the `stock` script).
    CfgField {
        name: "stock",
        enc: Enc::Int,
        default: "-1",
        scripts: true,
        put: Some(|c| c.stock.map(|s| s as i64).unwrap_or(-1).to_string()),
        patch: None,
        get: Some(|c, v| c.stock = v.parse::<i64>().ok().and_then(stock_of)),
    },
    CfgField {
        name: "paused",
        enc: Enc::Flag,
        default: "0",
        scripts: true,
        put: Some(|c| flag(c.paused)),
        patch: Some(|p| p.paused.map(flag)),
        get: Some(|c, v| c.paused = v == "1"),
    },
    CfgField {
        name: "closed",
        enc: Enc::Flag,
        default: "0",
        scripts: true,
        put: Some(|c| flag(c.closed)),
        patch: Some(|p| p.closed.map(flag)),
        get: Some(|c, v| c.closed = v == "1"),
    },
    // Absent in a room written before modes.
    CfgField {
        name: "mode",
        enc: Enc::Text,
        default: "fifo",
        scripts: true,
        put: Some(|c| c.mode.as_str().into()),
        patch: Some(|p| p.mode.map(|v| v.as_str().into())),
        get: Some(|c, v| c.mode = QueueMode::parse(v).unwrap_or_default()),
    },
    CfgField {
        name: "queue_all",
        enc: Enc::Flag,
        default: "0",
        scripts: true,
        put: Some(|c| flag(c.queue_all)),
        patch: Some(|p| p.queue_all.map(flag)),
        get: Some(|c, v| c.queue_all = v == "1"),
    },
    CfgField {
        name: "embed",
        enc: Enc::Json,
        default: "",
        scripts: false,
        put: Some(|c| serde_json::to_string(&c.embed_origins).unwrap_or_else(|_| "[]".into())),
        patch: Some(|p| {
            p.embed_origins
                .as_ref()
                .map(|v| serde_json::to_string(v).unwrap_or_else(|_| "[]".into()))
        }),
        get: Some(|c, v| c.embed_origins = serde_json::from_str(v).unwrap_or_default()),
    },
    CfgField {
        name: "langs",
        enc: Enc::Json,
        default: "",
        scripts: false,
        put: Some(|c| serde_json::to_string(&c.languages).unwrap_or_else(|_| "[]".into())),
        patch: Some(|p| {
            p.languages
                .as_ref()
                .map(|v| serde_json::to_string(v).unwrap_or_else(|_| "[]".into()))
        }),
        get: Some(|c, v| c.languages = serde_json::from_str(v).unwrap_or_default()),
    },
    CfgField {
        name: "deflang",
        enc: Enc::Text,
        default: "",
        scripts: false,
        put: Some(|c| c.default_language.clone().unwrap_or_default()),
        patch: Some(|p| p.default_language.clone()),
        get: Some(|c, v| c.default_language = (!v.is_empty()).then(|| v.to_string())),
    },
    CfgField {
        name: "entry",
        enc: Enc::Text,
        default: "",
        scripts: false,
        put: Some(|c| c.entry.as_str().into()),
        patch: Some(|p| p.entry.map(|v| v.as_str().into())),
        get: Some(|c, v| {
            c.entry = if v == "token" {
                EntryMode::Token
            } else {
                EntryMode::Open
            }
        }),
    },
    // Empty: none (HSET cannot delete a field in the same call); so for every secret,
    // key and URL below.
    CfgField {
        name: "entry_secret",
        enc: Enc::Text,
        default: "",
        scripts: false,
        put: Some(|c| secret(&c.entry_secret)),
        patch: Some(|p| p.entry_secret.as_ref().map(|v| v.expose().to_string())),
        get: Some(|c, v| c.entry_secret = nonempty(v).map(Secret::new)),
    },
    CfgField {
        name: "entry_pk",
        enc: Enc::Text,
        default: "",
        scripts: false,
        put: Some(|c| c.entry_public_key.clone().unwrap_or_default()),
        patch: Some(|p| p.entry_public_key.clone()),
        get: Some(|c, v| c.entry_public_key = nonempty(v)),
    },
    CfgField {
        name: "challenge",
        enc: Enc::Text,
        default: "",
        scripts: false,
        put: Some(|c| c.challenge.as_str().into()),
        patch: Some(|p| p.challenge.map(|v| v.as_str().into())),
        get: Some(|c, v| {
            c.challenge = if v == "pow" {
                ChallengeMode::Pow
            } else {
                ChallengeMode::Off
            }
        }),
    },
    // Absent or unreadable: DEFAULT_POW_MAX_NUMBER.
    CfgField {
        name: "pow_max",
        enc: Enc::Int,
        default: "",
        scripts: false,
        put: Some(|c| c.pow_max_number.to_string()),
        patch: Some(|p| p.pow_max_number.map(|v| v.to_string())),
        get: Some(|c, v| {
            c.pow_max_number = v.parse().unwrap_or(crate::room::DEFAULT_POW_MAX_NUMBER)
        }),
    },
    CfgField {
        name: "ip_max",
        enc: Enc::Int,
        default: "0",
        scripts: false,
        put: Some(|c| c.max_places_per_ip.to_string()),
        patch: Some(|p| p.max_places_per_ip.map(|v| v.to_string())),
        get: Some(|c, v| c.max_places_per_ip = count(v)),
    },
    // The lanes as JSON, read back by Rust; `lane_strides` is what the scripts read.
    CfgField {
        name: "lanes",
        enc: Enc::Json,
        default: "",
        scripts: false,
        put: Some(|c| lane_fields(&c.lanes).0),
        patch: Some(|p| p.lanes.as_ref().map(|v| lane_fields(v).0)),
        get: Some(|c, v| c.lanes = serde_json::from_str(v).unwrap_or_default()),
    },
    CfgField {
        name: "lane_strides",
        enc: Enc::Raw,
        default: "",
        scripts: true,
        put: Some(|c| lane_fields(&c.lanes).1),
        patch: Some(|p| p.lanes.as_ref().map(|v| lane_fields(v).1)),
        get: None,
    },
    // Admissions held until then (ms, Redis time): put_room writes it for a room
    // re-created after the store lost its data.
    CfgField {
        name: "hold_until",
        enc: Enc::Int,
        default: "0",
        scripts: true,
        put: None,
        patch: None,
        get: None,
    },
    CfgField {
        name: "renew",
        enc: Enc::Flag,
        default: "0",
        scripts: false,
        put: Some(|c| flag(c.renew_on_activity)),
        patch: Some(|p| p.renew_on_activity.map(flag)),
        get: Some(|c, v| c.renew_on_activity = v == "1"),
    },
    CfgField {
        name: "max_sess",
        enc: Enc::Int,
        default: "0",
        scripts: false,
        put: Some(|c| c.max_session_secs.to_string()),
        patch: Some(|p| p.max_session_secs.map(|v| v.to_string())),
        get: Some(|c, v| c.max_session_secs = count(v)),
    },
    CfgField {
        name: "wh_url",
        enc: Enc::Text,
        default: "",
        scripts: false,
        put: Some(|c| c.webhook_url.clone().unwrap_or_default()),
        patch: Some(|p| p.webhook_url.clone()),
        get: Some(|c, v| c.webhook_url = nonempty(v)),
    },
    CfgField {
        name: "wh_secret",
        enc: Enc::Text,
        default: "",
        scripts: false,
        put: Some(|c| {
            c.webhook_secret
                .as_ref()
                .map(|s| s.expose().to_string())
                .unwrap_or_default()
        }),
        patch: Some(|p| p.webhook_secret.as_ref().map(|v| v.expose().to_string())),
        get: Some(|c, v| c.webhook_secret = nonempty(v).map(WebhookSecret::new)),
    },
    // The scheduled event (ms since the epoch) and its overrides: `""` for none.
    CfgField {
        name: "pq_at",
        enc: Enc::OptInt,
        default: "",
        scripts: true,
        put: Some(|c| opt(c.prequeue_opens_at)),
        patch: Some(|p| p.prequeue_opens_at.map(opt)),
        get: Some(|c, v| c.prequeue_opens_at = some(v)),
    },
    CfgField {
        name: "open_at",
        enc: Enc::OptInt,
        default: "",
        scripts: true,
        put: Some(|c| opt(c.opens_at)),
        patch: Some(|p| p.opens_at.map(opt)),
        get: Some(|c, v| c.opens_at = some(v)),
    },
    CfgField {
        name: "close_at",
        enc: Enc::OptInt,
        default: "",
        scripts: true,
        put: Some(|c| opt(c.closes_at)),
        patch: Some(|p| p.closes_at.map(opt)),
        get: Some(|c, v| c.closes_at = some(v)),
    },
    CfgField {
        name: "ev_capacity",
        enc: Enc::OptInt,
        default: "",
        scripts: true,
        put: Some(|c| opt(c.event_capacity)),
        patch: Some(|p| p.event_capacity.map(nonzero)),
        get: Some(|c, v| c.event_capacity = some(v)),
    },
    CfgField {
        name: "ev_ttl_ms",
        enc: Enc::OptInt,
        default: "",
        scripts: true,
        put: Some(|c| opt(c.event_session_ttl_secs.map(|s| s * 1000))),
        patch: Some(|p| p.event_session_ttl_secs.map(|v| nonzero(v * 1000))),
        get: Some(|c, v| c.event_session_ttl_secs = some(v).map(|ms| ms / 1000)),
    },
    CfgField {
        name: "ev_rate_cap",
        enc: Enc::OptInt,
        default: "",
        scripts: true,
        put: Some(|c| opt(c.event_max_admissions_per_minute)),
        patch: Some(|p| p.event_max_admissions_per_minute.map(nonzero)),
        get: Some(|c, v| c.event_max_admissions_per_minute = some(v)),
    },
    // No-shows: an admission whose pass is not presented within this (ms) is taken
    // back (0: off).
    CfgField {
        name: "claim_ms",
        enc: Enc::Int,
        default: "0",
        scripts: true,
        put: Some(|c| (c.claim_timeout_secs * 1000).to_string()),
        patch: Some(|p| p.claim_timeout_secs.map(|v| (v * 1000).to_string())),
        get: Some(|c, v| c.claim_timeout_secs = count(v) / 1000),
    },
    // `[rooms.brand]` as JSON (`""`: none; absent in a room written before it).
    CfgField {
        name: "brand",
        enc: Enc::Json,
        default: "",
        scripts: false,
        put: Some(|c| brand_json(&c.brand)),
        patch: Some(|p| p.brand.as_ref().map(brand_json)),
        get: Some(|c, v| c.brand = serde_json::from_str(v).unwrap_or_default()),
    },
    // The custom template's path inside `template_dir` (`""`: the built-in page).
    CfgField {
        name: "tpl",
        enc: Enc::Text,
        default: "",
        scripts: false,
        put: Some(|c| c.template.clone().unwrap_or_default()),
        patch: Some(|p| p.template.clone()),
        get: Some(|c, v| c.template = nonempty(v)),
    },
    // `[rooms.outflow]` (docs/outflow.md); absent in a room written before it: the
    // built-in defaults.
    CfgField {
        name: "of_mode",
        enc: Enc::Text,
        default: "fixed",
        scripts: false,
        put: Some(|c| c.outflow.mode.as_str().into()),
        patch: Some(|p| of_patch(p, |o| o.mode.map(|m| m.as_str().into()))),
        get: Some(|c, v| c.outflow.mode = OutflowMode::parse(v).unwrap_or_default()),
    },
    CfgField {
        name: "of_min",
        enc: Enc::Int,
        default: "",
        scripts: false,
        put: Some(|c| c.outflow.min_capacity.to_string()),
        patch: Some(|p| of_patch(p, |o| o.min_capacity.map(|v| v.to_string()))),
        get: Some(|c, v| {
            if let Some(v) = some(v) {
                c.outflow.min_capacity = v
            }
        }),
    },
    CfgField {
        name: "of_max",
        enc: Enc::Int,
        default: "",
        scripts: false,
        put: Some(|c| c.outflow.max_capacity.to_string()),
        patch: Some(|p| of_patch(p, |o| o.max_capacity.map(|v| v.to_string()))),
        get: Some(|c, v| {
            if let Some(v) = some(v) {
                c.outflow.max_capacity = v
            }
        }),
    },
    CfgField {
        name: "of_p95",
        enc: Enc::Int,
        default: "",
        scripts: false,
        put: Some(|c| c.outflow.target_p95_ms.to_string()),
        patch: Some(|p| of_patch(p, |o| o.target_p95_ms.map(|v| v.to_string()))),
        get: Some(|c, v| {
            if let Some(v) = some(v) {
                c.outflow.target_p95_ms = v
            }
        }),
    },
    // A decimal share, as Rust prints an f64 (exact when read back).
    CfgField {
        name: "of_err",
        enc: Enc::Text,
        default: "",
        scripts: false,
        put: Some(|c| c.outflow.max_error_rate.to_string()),
        patch: Some(|p| of_patch(p, |o| o.max_error_rate.map(|v| v.to_string()))),
        get: Some(|c, v| {
            if let Ok(v) = v.parse() {
                c.outflow.max_error_rate = v
            }
        }),
    },
    CfgField {
        name: "of_int",
        enc: Enc::Int,
        default: "",
        scripts: false,
        put: Some(|c| c.outflow.interval_secs.to_string()),
        patch: Some(|p| of_patch(p, |o| o.interval_secs.map(|v| v.to_string()))),
        get: Some(|c, v| {
            if let Some(v) = some(v) {
                c.outflow.interval_secs = v
            }
        }),
    },
    CfgField {
        name: "of_secret",
        enc: Enc::Text,
        default: "",
        scripts: false,
        put: Some(|c| secret(&c.outflow.health_secret)),
        patch: Some(|p| of_patch(p, |o| o.health_secret.as_ref().map(|v| v.expose().into()))),
        get: Some(|c, v| c.outflow.health_secret = nonempty(v).map(Secret::new)),
    },
    // The last phase of the event the room's stream was told of ('opened', 'closed').
    CfgField {
        name: "ev_mark",
        enc: Enc::Text,
        default: "",
        scripts: true,
        put: None,
        patch: None,
        get: None,
    },
    // Bookkeeping: the configuration version (bumped by every script that changes the
    // config) and `rev` (a write's identity, for the scripts' kept configs).
    CfgField {
        name: "version",
        enc: Enc::Int,
        default: "0",
        scripts: false,
        put: None,
        patch: None,
        get: None,
    },
    CfgField {
        name: "rev",
        enc: Enc::Raw,
        default: "",
        scripts: false,
        put: None,
        patch: None,
        get: None,
    },
];

/// An outflow key's new value, when the patch changes `[rooms.outflow]` and that key.
fn of_patch(p: &RoomPatch, f: fn(&OutflowPatch) -> Option<String>) -> Option<String> {
    p.outflow.as_ref().and_then(f)
}

/// An optional number as the config hash holds it (`""`: none).
pub(super) fn opt(v: Option<u64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

/// The config hash's fields for a room (name, value, …: HSET's arguments).
pub(super) fn cfg_fields(cfg: &RoomConfig) -> Vec<String> {
    CFG_FIELDS
        .iter()
        .filter_map(|f| f.put.map(|put| [f.name.to_string(), put(cfg)]))
        .flatten()
        .collect()
}

/// The config hash's fields a patch changes (same encoding as [`cfg_fields`]).
pub(super) fn patch_fields(p: &RoomPatch) -> Vec<String> {
    CFG_FIELDS
        .iter()
        .filter_map(|f| {
            f.patch
                .and_then(|patch| patch(p))
                .map(|v| [f.name.to_string(), v])
        })
        .flatten()
        .collect()
}

/// The room `room` as its config hash `h` holds it.
pub(super) fn cfg_from_hash(
    room: &str,
    h: &std::collections::HashMap<String, String>,
) -> RoomConfig {
    let mut cfg = blank(room);
    for f in CFG_FIELDS {
        if let Some(get) = f.get {
            get(
                &mut cfg,
                h.get(f.name).map(String::as_str).unwrap_or(f.default),
            );
        }
    }
    cfg
}

/// The room the hash's fields are read onto: every setting has a row that sets it.
fn blank(room: &str) -> RoomConfig {
    RoomConfig {
        id: room.to_string(),
        name: String::new(),
        capacity: 0,
        max_admissions_per_minute: 0,
        session_ttl_secs: 0,
        heartbeat_timeout_secs: 0,
        target_url: String::new(),
        stock: None,
        paused: false,
        closed: false,
        mode: QueueMode::default(),
        queue_all: false,
        embed_origins: Vec::new(),
        languages: Vec::new(),
        default_language: None,
        entry: EntryMode::Open,
        entry_secret: None,
        entry_public_key: None,
        challenge: ChallengeMode::Off,
        pow_max_number: crate::room::DEFAULT_POW_MAX_NUMBER,
        max_places_per_ip: 0,
        lanes: Vec::new(),
        renew_on_activity: false,
        max_session_secs: 0,
        webhook_url: None,
        webhook_secret: None,
        prequeue_opens_at: None,
        opens_at: None,
        closes_at: None,
        event_capacity: None,
        event_session_ttl_secs: None,
        event_max_admissions_per_minute: None,
        // The built-in defaults for a room stored before `[rooms.outflow]`.
        outflow: crate::room::OutflowConfig::default(),
        claim_timeout_secs: 0,
        brand: Default::default(),
        template: None,
    }
}

/// A Lua string literal of `s` (the table's names and defaults are plain words).
fn lua_str(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// The scripts' side of the table, for the library's prelude: `CFG_READ`, the fields
/// `read_cfg` asks for (HMGET), and `cfg_decode(v)`, that reply as a table by field name,
/// each value decoded by its row's encoding and default, or nil when the first field
/// (`capacity`, which every room has) is absent: no room.
pub(super) fn lua_cfg_reader() -> String {
    let read: Vec<&CfgField> = CFG_FIELDS.iter().filter(|f| f.scripts).collect();
    let names: Vec<String> = read.iter().map(|f| lua_str(f.name)).collect();
    let mut decode = Vec::new();
    for (i, f) in read.iter().enumerate() {
        let x = format!("v[{}]", i + 1);
        let expr = match f.enc {
            Enc::Int if f.default.is_empty() => format!("tonumber({x})"),
            Enc::Int => format!("tonumber({x}) or {}", f.default),
            Enc::Flag => format!("{x} == '1'"),
            Enc::OptInt => format!("({x} and {x} ~= '') and tonumber({x}) or nil"),
            Enc::Text | Enc::Json | Enc::Raw => {
                format!("({x} and {x} ~= '') and {x} or {}", lua_str(f.default))
            }
        };
        decode.push(format!("  c.{} = {expr}\n", f.name));
    }
    format!(
        "local CFG_READ = {{{}}}\nlocal function cfg_decode(v)\n  if not v[1] then return nil end\n  local c = {{}}\n{}  return c\nend\n",
        names.join(", "),
        decode.concat()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::room::Lane;
    use std::collections::{BTreeSet, HashMap};

    fn sample() -> RoomConfig {
        RoomConfig {
            id: "shop".into(),
            name: "Shop".into(),
            capacity: 5,
            max_admissions_per_minute: 30,
            session_ttl_secs: 120,
            heartbeat_timeout_secs: 45,
            target_url: "https://o.example/".into(),
            stock: Some(7),
            paused: true,
            mode: QueueMode::Passthrough,
            queue_all: true,
            embed_origins: vec!["https://a.example".into()],
            entry: EntryMode::Token,
            entry_secret: Some(Secret::new("s3cret")),
            challenge: ChallengeMode::Pow,
            pow_max_number: 5000,
            max_places_per_ip: 3,
            lanes: vec![Lane {
                name: "members".into(),
                share: 0.7,
            }],
            renew_on_activity: true,
            max_session_secs: 600,
            webhook_url: Some("https://hook.example/".into()),
            webhook_secret: Some(WebhookSecret::new("whsec")),
            prequeue_opens_at: Some(1000),
            opens_at: Some(2000),
            event_capacity: Some(9),
            event_session_ttl_secs: Some(30),
            claim_timeout_secs: 20,
            brand: crate::room::brand::Brand {
                title: Some("Shop".into()),
                accent_color: Some("#1f5fbf".into()),
                ..Default::default()
            },
            template: Some("shop/queue.html".into()),
            languages: vec!["en".into(), "ar".into()],
            default_language: Some("ar".into()),
            outflow: crate::room::OutflowConfig {
                mode: OutflowMode::Adaptive,
                min_capacity: 2,
                max_capacity: 80,
                target_p95_ms: 300,
                max_error_rate: 0.015,
                interval_secs: 5,
                health_secret: Some(Secret::new("0123456789abcdef0123456789abcdef")),
            },
            ..blank("shop")
        }
    }

    /// The hash the code before the table wrote for [`sample`] (its `cfg_fields`): the
    /// names and encodings a stored room has.
    fn written_before() -> HashMap<String, String> {
        let (lanes, strides) = lane_fields(&sample().lanes);
        [
            ("id", "shop"),
            ("name", "Shop"),
            ("capacity", "5"),
            ("rate_cap", "30"),
            ("ttl_ms", "120000"),
            ("hb_ms", "45000"),
            ("target", "https://o.example/"),
            ("stock", "7"),
            ("paused", "1"),
            ("closed", "0"),
            ("mode", "passthrough"),
            ("queue_all", "1"),
            ("embed", "[\"https://a.example\"]"),
            ("entry", "token"),
            ("entry_secret", "s3cret"),
            ("entry_pk", ""),
            ("challenge", "pow"),
            ("pow_max", "5000"),
            ("ip_max", "3"),
            ("lanes", lanes.as_str()),
            ("lane_strides", strides.as_str()),
            ("renew", "1"),
            ("max_sess", "600"),
            ("wh_url", "https://hook.example/"),
            ("wh_secret", "whsec"),
            ("pq_at", "1000"),
            ("open_at", "2000"),
            ("close_at", ""),
            ("ev_capacity", "9"),
            ("ev_ttl_ms", "30000"),
            ("ev_rate_cap", ""),
            ("claim_ms", "20000"),
            ("brand", r##"{"title":"Shop","accent_color":"#1f5fbf"}"##),
            ("tpl", "shop/queue.html"),
            ("of_mode", "adaptive"),
            ("of_min", "2"),
            ("of_max", "80"),
            ("of_p95", "300"),
            ("of_err", "0.015"),
            ("of_int", "5"),
            ("of_secret", "0123456789abcdef0123456789abcdef"),
            ("langs", r#"["en","ar"]"#),
            ("deflang", "ar"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    }

    fn as_map(flat: Vec<String>) -> HashMap<String, String> {
        flat.chunks(2)
            .map(|kv| (kv[0].clone(), kv[1].clone()))
            .collect()
    }

    #[test]
    fn a_room_is_written_as_before_and_read_back() {
        assert_eq!(as_map(cfg_fields(&sample())), written_before());
        assert_eq!(cfg_from_hash("shop", &written_before()), sample());
    }

    #[test]
    fn a_room_written_before_newer_fields_reads_with_their_defaults() {
        let h: HashMap<String, String> = [("capacity", "2"), ("ttl_ms", "60000")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let cfg = cfg_from_hash("old", &h);
        assert_eq!(cfg.mode, QueueMode::Fifo);
        assert_eq!(cfg.stock, None);
        assert_eq!(cfg.pow_max_number, crate::room::DEFAULT_POW_MAX_NUMBER);
        assert_eq!((cfg.capacity, cfg.session_ttl_secs), (2, 60));
        assert_eq!(cfg.outflow, crate::room::OutflowConfig::default());
        assert_eq!(cfg.claim_timeout_secs, 0);
    }

    #[test]
    fn a_patch_written_and_read_back_is_the_patch_applied() {
        let patch = RoomPatch {
            name: Some("New".into()),
            capacity: Some(8),
            max_admissions_per_minute: Some(0),
            session_ttl_secs: Some(90),
            heartbeat_timeout_secs: Some(20),
            target_url: Some("https://p.example/".into()),
            paused: Some(false),
            closed: Some(true),
            mode: Some(QueueMode::Random),
            queue_all: Some(false),
            embed_origins: Some(vec![]),
            entry: Some(EntryMode::Open),
            entry_secret: Some(Secret::new("")),
            entry_public_key: Some("pk".into()),
            challenge: Some(ChallengeMode::Off),
            pow_max_number: Some(10),
            max_places_per_ip: Some(1),
            lanes: Some(vec![]),
            renew_on_activity: Some(false),
            max_session_secs: Some(0),
            webhook_url: Some(String::new()),
            webhook_secret: Some(WebhookSecret::new("")),
            prequeue_opens_at: Some(None),
            opens_at: Some(Some(3000)),
            closes_at: Some(Some(4000)),
            event_capacity: Some(0),
            event_session_ttl_secs: Some(0),
            event_max_admissions_per_minute: Some(12),
            outflow: Some(OutflowPatch {
                mode: Some(OutflowMode::Adaptive),
                min_capacity: Some(3),
                max_capacity: Some(40),
                target_p95_ms: Some(250),
                max_error_rate: Some(0.05),
                interval_secs: Some(2),
                health_secret: Some(Secret::new("h".repeat(32))),
            }),
            claim_timeout_secs: Some(30),
            brand: Some(Default::default()),
            template: Some(String::new()),
            languages: Some(vec!["de".into()]),
            default_language: Some(String::new()),
        };
        let mut h = written_before();
        h.extend(as_map(patch_fields(&patch)));
        assert_eq!(cfg_from_hash("shop", &h), patch.applied_to(&sample()));
    }

    /// Every config hash field the scripts name as a quoted word: in the arguments of a
    /// Redis call on `K_CFG`, or in a line building `cfg_fields`, the list `load_cfg_raw` reads.
    fn named_in_scripts() -> BTreeSet<String> {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/store/lua");
        let mut names = BTreeSet::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let src = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            for line in src.lines().filter(|l| !l.trim_start().starts_with("--")) {
                // A call's arguments after the key (not a value it is compared with).
                let args = match line.split_once("K_CFG") {
                    Some((_, rest)) => rest.split(')').next().unwrap_or(""),
                    None if line.contains("cfg_fields") => line,
                    None => continue,
                };
                for (i, word) in args.split('\'').enumerate() {
                    let field = i % 2 == 1
                        && !word.is_empty()
                        && word.chars().all(|c| c.is_ascii_lowercase() || c == '_');
                    if field {
                        names.insert(word.to_string());
                    }
                }
            }
        }
        names
    }

    #[test]
    fn every_field_is_in_the_table_and_every_row_is_written_and_read() {
        let in_scripts = named_in_scripts();
        // The scan sees the fields the scripts name, or it proves nothing.
        assert!(in_scripts.contains("version") && in_scripts.contains("lane_strides"));
        let rows: BTreeSet<&str> = CFG_FIELDS.iter().map(|f| f.name).collect();
        assert_eq!(rows.len(), CFG_FIELDS.len(), "a field has two rows");
        for name in &in_scripts {
            assert!(
                rows.contains(name.as_str()),
                "the scripts name config hash field `{name}`, which has no row in CFG_FIELDS"
            );
        }
        for f in CFG_FIELDS {
            let named = in_scripts.contains(f.name);
            assert!(
                f.put.is_some() || named,
                "config hash field `{}`: nobody writes it",
                f.name
            );
            assert!(
                f.get.is_some() || f.scripts || named,
                "config hash field `{}`: nobody reads it",
                f.name
            );
            if f.get.is_some() {
                assert!(f.put.is_some(), "`{}`: read by Rust, never written", f.name);
            }
        }
    }

    #[test]
    fn the_scripts_read_the_config_by_name_only() {
        let common = include_str!("../lua/common.lua");
        assert!(common.contains("cfg_decode(redis.call('HMGET', K_CFG, unpack(CFG_READ)))"));
        assert!(
            !common.contains("v[1]"),
            "common.lua reads the config by position"
        );
        // cfg_decode's absent-room check is on the first field read, capacity.
        let first = CFG_FIELDS.iter().find(|f| f.scripts).unwrap();
        assert_eq!(first.name, "capacity");
        let reader = lua_cfg_reader();
        for f in CFG_FIELDS.iter().filter(|f| f.scripts) {
            assert!(reader.contains(&format!("c.{} = ", f.name)));
        }
    }
}
