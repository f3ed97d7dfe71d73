//! The room library (the room operations and `common.lua` as one Redis Functions
//! library, with the reply fields generated into its prelude) and the plain scripts.

use super::*;

/// The fields of the reply join, status and their kin share (`reply()` in `common.lua`), in
/// the order they travel: one source for both sides. The Lua sets them by name
/// (`out[SNAP.<field>]`, each place written in by [`place_fields`]), and [`parse_snapshot`]
/// reads them by the same names.
pub(super) const SNAPSHOT_FIELDS: &[&str] = &[
    "state",
    "position",
    "queue_length",
    "active",
    "capacity",
    "ttl_ms",
    "stock",
    "serial",
    "issued_ms",
    "expires_ms",
    "now_ms",
    "promoted",
    "rate_cap",
    "target",
    "away",
    "admits",
    "ticket",
    "joined_ms",
    "heartbeat_ms",
    "line_epoch",
    "line_seq",
];

/// What a `join_many` call answers, in one flat list (`join_many.lua`;
/// [`parse_join_batch`](super::codec::parse_join_batch)): these fields once for the call
/// (`SHARED.<field>`), then [`BATCH_FIELDS`] once per visitor (`BATCH.<field>`), rather
/// than a list (and a nested `promoted` list) per visitor: Redis's conversion of the
/// replies was 3.5-5.4 µs of a join taken with others (issue 35 item 2).
pub(super) const SHARED_FIELDS: &[&str] = &["capacity", "ttl_ms", "rate_cap", "target", "now_ms"];

/// Each visitor's part of a `join_many` answer (see [`SHARED_FIELDS`]): a snapshot's
/// fields less the shared ones, `promoted` as the visitor ids joined by spaces. A refused
/// join has `state` `too_many_places`, or `held` with the wait (ms) as `position`.
pub(super) const BATCH_FIELDS: &[&str] = &[
    "state",
    "position",
    "queue_length",
    "active",
    "stock",
    "serial",
    "issued_ms",
    "expires_ms",
    "promoted",
    "away",
    "admits",
    "ticket",
    "joined_ms",
    "heartbeat_ms",
    "line_epoch",
    "line_seq",
];

/// The fields of a room's figures (`room_view()` in `common.lua`; `VIEW.<field>` there),
/// read by [`parse_room_view`].
pub(super) const ROOM_VIEW_FIELDS: &[&str] = &[
    "queue_length",
    "active",
    "capacity",
    "ttl_ms",
    "stock",
    "now_ms",
    "rate_cap",
    "target",
    "paused",
    "closed",
    "admits",
    "mode",
    "queue_all",
    "phase",
];

/// Writes each field's place into Lua source: `[LIST.<field>]` becomes `[<place>]` (1-based)
/// and `LIST_NEW` a list of as many placeholders, so a reply built by name costs what a
/// positional one does (measured: a lookup per field and a growing table cost ~0.7 µs a
/// call more).
pub(super) fn place_fields(src: &str, list: &str, fields: &[&str]) -> String {
    let mut out = src.replace(
        &format!("{list}_NEW"),
        &format!("{{{}}}", vec!["false"; fields.len()].join(", ")),
    );
    for (i, f) in fields.iter().enumerate() {
        out = out.replace(&format!("[{list}.{f}]"), &format!("[{}]", i + 1));
    }
    out
}

/// A reply list read by field name (the names of one of the lists above).
pub(super) struct Fields {
    names: &'static [&'static str],
    values: Vec<Value>,
}

impl Fields {
    /// The reply `v`, refused unless it has exactly one value per name.
    pub(super) fn new(
        names: &'static [&'static str],
        v: Value,
        what: &'static str,
    ) -> StoreResult<Self> {
        let values = as_array(v)?;
        if values.len() != names.len() {
            return Err(protocol(what));
        }
        Ok(Self { names, values })
    }

    /// The value of field `name` (a name of the list: every one is read by the decoding
    /// tests, so a misspelt one fails them).
    pub(super) fn get(&self, name: &str) -> &Value {
        let i = self
            .names
            .iter()
            .position(|n| *n == name)
            .unwrap_or_else(|| panic!("no reply field {name}"));
        &self.values[i]
    }
}

/// The constants the scripts share with Rust, defined from the Rust ones, and the config
/// hash's reader generated from its table ([`lua_cfg_reader`]): one source.
pub(super) fn lua_prelude() -> String {
    let bounds: Vec<String> = crate::store::WAIT_BOUNDS_MS
        .iter()
        .map(u64::to_string)
        .collect();
    format!(
        "local WINDOW_MS = {}\nlocal ENDS_KEEP = {}\nlocal BASIS_SESSIONS = {}\n\
         local PROMOTE_LIMIT = {}\nlocal MINUTE_TTL_MS = {}\nlocal WAIT_BOUNDS = {{{}}}\n\
         local PLACE_GROUP_TTL_MS = {}\nlocal LANE_STRIDE = {}\nlocal GONE_KEEP_MS = {}\nlocal STREAM_KEEP = {}\n\
         local CHANGES_KEEP = {}\nlocal HOLD_LEASE_MS = {}\nlocal HB_STEPS = {}\n{}",
        crate::store::WINDOW_MS,
        crate::store::ENDS_KEEP,
        crate::store::BASIS_SESSIONS,
        crate::store::PROMOTE_LIMIT,
        crate::store::HISTORY_MINUTES * 60_000,
        bounds.join(", "),
        crate::store::PLACE_GROUP_TTL_MS,
        crate::store::LANE_STRIDE,
        crate::store::GONE_KEEP_MS,
        crate::store::STREAM_KEEP,
        crate::store::line::CHANGES_KEEP,
        crate::store::line::HOLD_LEASE_MS,
        crate::store::HB_STEPS,
        lua_cfg_reader()
    )
}

/// A room operation: one function of the room library (its file under `lua/`).
pub struct RoomFn {
    pub(super) name: &'static str,
    pub(super) body: &'static str,
}

macro_rules! room_fn {
    ($name:ident, $op:literal) => {
        pub(super) static $name: RoomFn = RoomFn {
            name: $op,
            body: include_str!(concat!("../lua/", $op, ".lua")),
        };
    };
}

room_fn!(JOIN, "join");
room_fn!(JOIN_MANY, "join_many");
room_fn!(STATUS, "status");
room_fn!(RELEASE, "release");
room_fn!(PROMOTE, "promote");
room_fn!(SESSION, "session");
room_fn!(REAP, "reap");
room_fn!(STATS, "stats");
room_fn!(WATCH, "watch");
room_fn!(PATCH_ROOM, "patch_room");
room_fn!(STOCK, "stock");
room_fn!(FLUSH, "flush");
room_fn!(FIND, "find");
room_fn!(REPORT, "report");
room_fn!(ETA_BASIS, "eta_basis");
room_fn!(PUT_ROOM, "put_room");
room_fn!(RESTORE_PLACE, "restore_place");
room_fn!(RESTORE_SESSION, "restore_session");
room_fn!(SESSIONS, "sessions");
room_fn!(AWAY, "away");
room_fn!(EXTEND_SESSION, "extend_session");
room_fn!(EVENT_SEED, "event_seed");
room_fn!(FAIRNESS, "fairness");
room_fn!(SHUFFLE, "shuffle");

room_fn!(TICK, "tick");
room_fn!(PLACES, "places");
room_fn!(NOSHOW_REAP, "noshow_reap");

pub(super) const ROOM_FNS: [&RoomFn; 27] = [
    &JOIN,
    &JOIN_MANY,
    &STATUS,
    &RELEASE,
    &PROMOTE,
    &SESSION,
    &REAP,
    &STATS,
    &WATCH,
    &PATCH_ROOM,
    &STOCK,
    &FLUSH,
    &FIND,
    &REPORT,
    &ETA_BASIS,
    &PUT_ROOM,
    &RESTORE_PLACE,
    &RESTORE_SESSION,
    &SESSIONS,
    &AWAY,
    &EXTEND_SESSION,
    &EVENT_SEED,
    &FAIRNESS,
    &SHUFFLE,
    &TICK,
    &PLACES,
    &NOSHOW_REAP,
];

/// The room library: `common.lua` and every room operation as a Redis Function, loaded
/// once per node (`FUNCTION LOAD`), so a call runs only its own function, not the shared
/// part as well (with `EVALSHA` every call re-ran the ~200-line prelude). Its name
/// carries a hash of its source (`anteroom_<12 hex>`), and so do its functions' names: a
/// rolling upgrade never runs old code against new keys, and instances of two versions
/// each call their own.
pub struct RoomLibrary {
    pub name: String,
    pub source: String,
}

impl RoomLibrary {
    pub(super) fn build() -> Self {
        use sha2::{Digest, Sha256};
        let mut body = format!(
            "{}{}\n{}\n",
            lua_prelude(),
            include_str!("../lua/common.lua"),
            include_str!("../lua/join_one.lua")
        );
        for f in ROOM_FNS {
            body.push_str(&format!(
                "redis.register_function('@LIB@_{}', function(KEYS, ARGV)\nbind(KEYS)\n{}\nend)\n",
                f.name, f.body
            ));
        }
        let body = place_fields(&body, "SNAP", SNAPSHOT_FIELDS);
        let body = place_fields(&body, "VIEW", ROOM_VIEW_FIELDS);
        let body = place_fields(&body, "SHARED", SHARED_FIELDS);
        let body = place_fields(&body, "BATCH", BATCH_FIELDS);
        let hash = crate::hex::lower(&Sha256::digest(body.as_bytes())[..6]);
        let name = format!("anteroom_{hash}");
        let source = format!("#!lua name={name}\n{}", body.replace("@LIB@", &name));
        Self { name, source }
    }

    /// The library every instance of this build uses.
    pub fn get() -> &'static Self {
        static LIB: LazyLock<RoomLibrary> = LazyLock::new(RoomLibrary::build);
        &LIB
    }

    pub(super) fn function(&self, f: &RoomFn) -> String {
        format!("{}_{}", self.name, f.name)
    }
}

pub(super) static SOCKETS_REPORT: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../lua/sockets_report.lua")));
pub(super) static SOCKETS_READ: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../lua/sockets_read.lua")));
pub(super) static LEASE_ACQUIRE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../lua/lease_acquire.lua")));
pub(super) static LEASE_RELEASE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../lua/lease_release.lua")));
pub(super) static REVOKE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../lua/revoke.lua")));
pub(super) static REVOCATIONS: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../lua/revocations.lua")));
pub(super) static WEBHOOK_REPLAY: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../lua/webhook_replay.lua")));
