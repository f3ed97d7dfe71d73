//! Redis backend.
//!
//! ## Key layout
//! Every key starts with the configured `key_prefix`, and all keys of one room carry the
//! room id as a hash tag, so a room lives in one Cluster slot and every script touches
//! one slot only. The table of every key (type, contents, TTL) is in
//! `docs/design.md#redis-key-layout`, the one place it is described; the key-building
//! methods below (`rooms_key`, `room_key`, …) are the only code that names keys.
//!
//! ## Scripts
//! Each operation is one Lua file under `src/store/lua/`, embedded at compile time. The
//! room operations and `common.lua` form one Redis Functions library ([`RoomLibrary`]),
//! called with `FCALL` and loaded with `FUNCTION LOAD` when a node lacks it (after
//! `FUNCTION FLUSH`, a restart, or on a new node). The few scripts outside a room (rate
//! window, leases, socket counts) are plain scripts: [`redis::Script`] invokes them by SHA
//! and reloads them on `NOSCRIPT`.

use std::sync::LazyLock;
use std::time::Duration;

use async_trait::async_trait;
use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, Pipeline, RedisFuture, Script, Value};

use futures_util::stream::{BoxStream, StreamExt};

use super::join_batch::Batcher;
use super::{
    sort_found, Admission, AdmittedEvent, EtaBasis, FoundVisitor, MinuteStats, PatchOutcome,
    ReapBatch, RoomPatch, RoomReport, RoomStats, RoomView, SessionsPage, SessionsQuery, Snapshot,
    SocketCount, StockChange, Store, StoreError, StoreResult, VisitorState, WatchEntry,
    WindowDecision,
};
use super::{LineChange, LineCursor, Placed, RoomTick, TickRequest};
use super::{Released, RoomEvent, WebhookCounts, WebhookRetry, WebhookSettle};
use crate::config::{RoomConfig, StoreSettings};

/// The fields of the reply join, status and their kin share (`reply()` in `common.lua`), in
/// the order they travel: one source for both sides. The Lua sets them by name
/// (`out[SNAP.<field>]`, each place written in by [`place_fields`]), and [`parse_snapshot`]
/// reads them by the same names.
const SNAPSHOT_FIELDS: &[&str] = &[
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

/// The fields of a room's figures (`room_view()` in `common.lua`; `VIEW.<field>` there),
/// read by [`parse_room_view`].
const ROOM_VIEW_FIELDS: &[&str] = &[
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
fn place_fields(src: &str, list: &str, fields: &[&str]) -> String {
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
struct Fields {
    names: &'static [&'static str],
    values: Vec<Value>,
}

impl Fields {
    /// The reply `v`, refused unless it has exactly one value per name.
    fn new(names: &'static [&'static str], v: Value, what: &'static str) -> StoreResult<Self> {
        let values = as_array(v)?;
        if values.len() != names.len() {
            return Err(protocol(what));
        }
        Ok(Self { names, values })
    }

    /// The value of field `name` (a name of the list: every one is read by the decoding
    /// tests, so a misspelt one fails them).
    fn get(&self, name: &str) -> &Value {
        let i = self
            .names
            .iter()
            .position(|n| *n == name)
            .unwrap_or_else(|| panic!("no reply field {name}"));
        &self.values[i]
    }
}

/// The constants the scripts share with Rust, defined from the Rust ones: one source.
fn lua_prelude() -> String {
    let bounds: Vec<String> = super::WAIT_BOUNDS_MS.iter().map(u64::to_string).collect();
    format!(
        "local WINDOW_MS = {}\nlocal ENDS_KEEP = {}\nlocal BASIS_SESSIONS = {}\n\
         local PROMOTE_LIMIT = {}\nlocal MINUTE_TTL_MS = {}\nlocal WAIT_BOUNDS = {{{}}}\n\
         local PLACE_GROUP_TTL_MS = {}\nlocal LANE_STRIDE = {}\nlocal GONE_KEEP_MS = {}\nlocal STREAM_KEEP = {}\n\
         local CHANGES_KEEP = {}\nlocal HOLD_LEASE_MS = {}\nlocal HB_STEPS = {}\n",
        super::WINDOW_MS,
        super::ENDS_KEEP,
        super::BASIS_SESSIONS,
        super::PROMOTE_LIMIT,
        super::HISTORY_MINUTES * 60_000,
        bounds.join(", "),
        super::PLACE_GROUP_TTL_MS,
        super::LANE_STRIDE,
        super::GONE_KEEP_MS,
        super::STREAM_KEEP,
        super::line::CHANGES_KEEP,
        super::line::HOLD_LEASE_MS,
        super::HB_STEPS
    )
}

/// A room operation: one function of the room library (its file under `lua/`).
pub struct RoomFn {
    name: &'static str,
    body: &'static str,
}

macro_rules! room_fn {
    ($name:ident, $op:literal) => {
        static $name: RoomFn = RoomFn {
            name: $op,
            body: include_str!(concat!("lua/", $op, ".lua")),
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

const ROOM_FNS: [&RoomFn; 26] = [
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
    fn build() -> Self {
        use sha2::{Digest, Sha256};
        let mut body = format!(
            "{}{}\n{}\n",
            lua_prelude(),
            include_str!("lua/common.lua"),
            include_str!("lua/join_one.lua")
        );
        for f in ROOM_FNS {
            body.push_str(&format!(
                "redis.register_function('@LIB@_{}', function(KEYS, ARGV)\nbind(KEYS)\n{}\nend)\n",
                f.name, f.body
            ));
        }
        let body = place_fields(&body, "SNAP", SNAPSHOT_FIELDS);
        let body = place_fields(&body, "VIEW", ROOM_VIEW_FIELDS);
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

    fn function(&self, f: &RoomFn) -> String {
        format!("{}_{}", self.name, f.name)
    }
}

static SOCKETS_REPORT: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("lua/sockets_report.lua")));
static SOCKETS_READ: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("lua/sockets_read.lua")));
static LEASE_ACQUIRE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("lua/lease_acquire.lua")));
static LEASE_RELEASE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("lua/lease_release.lua")));
static REVOKE: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("lua/revoke.lua")));
static REVOCATIONS: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("lua/revocations.lua")));

/// A connection to a single Redis or to a Redis Cluster; cheap to clone (multiplexed).
#[derive(Clone)]
pub enum Conn {
    Single(ConnectionManager),
    Cluster(ClusterConnection),
    /// The master a set of Redis Sentinels names, followed through failovers.
    Sentinel(super::sentinel::SentinelConn),
}

impl ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Conn::Single(c) => c.req_packed_command(cmd),
            Conn::Cluster(c) => c.req_packed_command(cmd),
            Conn::Sentinel(c) => c.req_packed_command(cmd),
        }
    }
    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Conn::Single(c) => c.req_packed_commands(pipeline, offset, count),
            Conn::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
            Conn::Sentinel(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }
    fn get_db(&self) -> i64 {
        match self {
            Conn::Single(c) => c.get_db(),
            Conn::Cluster(c) => c.get_db(),
            Conn::Sentinel(c) => c.get_db(),
        }
    }
}

/// The Redis store. Clones share one multiplexed connection.
#[derive(Clone)]
pub struct RedisStore {
    conn: Conn,
    prefix: String,
    /// For pub/sub on a single node.
    client: Option<redis::Client>,
    /// For pub/sub on Redis Cluster (a RESP3 connection with push messages).
    cluster_nodes: Option<Vec<String>>,
    connect_timeout: Duration,
    /// Joins taken together (`store.batch_joins`); None: one call per join. The batcher's
    /// calls go through a clone of this store without one (no reference cycle).
    joins: Option<Batcher<[String; 6], Snapshot>>,
}

/// The most joins one `join_many` call carries (so one call keeps Redis busy for well
/// under a millisecond: ~64 × 10 µs).
const JOIN_BATCH_MAX: usize = 64;

/// Calls for one room in flight at once from one instance (store/join_batch.rs): two, so
/// Redis has the next batch in hand when it finishes one.
const JOIN_CALLS: usize = 2;

impl RedisStore {
    /// A single node is connected lazily: the process starts even while Redis is down
    /// (readiness says so). A cluster is connected at start (its slot map is needed), and
    /// so is Sentinel (the master must be found once).
    /// Every command is bounded by the configured timeouts.
    pub async fn connect(url: &str, prefix: &str, t: &StoreSettings) -> StoreResult<Self> {
        let connect = Duration::from_millis(t.connect_timeout_ms);
        let response = Duration::from_millis(t.response_timeout_ms);
        let mut pubsub_client = None;
        let mut cluster_nodes = None;
        let conn = if let Some(rest) = url.strip_prefix("redis+cluster://") {
            let nodes: Vec<String> = rest
                .split(',')
                .map(|n| format!("redis://{}", n.trim_end_matches('/')))
                .collect();
            cluster_nodes = Some(nodes.clone());
            let client = redis::cluster::ClusterClientBuilder::new(nodes)
                .connection_timeout(connect)
                .response_timeout(response)
                .build()?;
            Conn::Cluster(client.get_async_connection().await?)
        } else {
            let cfg = ConnectionManagerConfig::new()
                .set_connection_timeout(Some(connect))
                .set_response_timeout(Some(response))
                .set_number_of_retries(2)
                .set_max_delay(Duration::from_millis(500));
            if url.starts_with("redis+sentinel://") {
                Conn::Sentinel(
                    super::sentinel::SentinelConn::connect(url, cfg, connect + response).await?,
                )
            } else {
                let client = redis::Client::open(url)?;
                pubsub_client = Some(client.clone());
                Conn::Single(ConnectionManager::new_lazy_with_config(client, cfg)?)
            }
        };
        let mut store = Self {
            conn,
            prefix: prefix.to_string(),
            client: pubsub_client,
            cluster_nodes,
            connect_timeout: connect,
            joins: None,
        };
        if t.batch_joins {
            let core = store.clone();
            store.joins = Some(Batcher::new(
                JOIN_BATCH_MAX,
                JOIN_CALLS,
                move |room, items| {
                    let core = core.clone();
                    Box::pin(async move { core.join_batch(&room, items).await })
                },
            ));
        }
        Ok(store)
    }

    /// One call for a batch of joins to `room` (each item join's six arguments): `join`
    /// for one, `join_many` for more. `Err` only when the call itself failed; a join's
    /// own refusal (too many places, held, no room) is its item's result.
    async fn join_batch(
        &self,
        room: &str,
        items: Vec<[String; 6]>,
    ) -> StoreResult<Vec<StoreResult<Snapshot>>> {
        let n = items.len();
        let reply = if n == 1 {
            self.run_room(&JOIN, room, &items[0]).await
        } else {
            let mut args = Vec::with_capacity(1 + 6 * n);
            args.push(n.to_string());
            args.extend(items.into_iter().flatten());
            self.run_room(&JOIN_MANY, room, &args).await
        };
        match reply {
            Err(e @ StoreError::Unavailable(_)) => Err(e),
            Err(e) => Ok(vec![Err(e); n]),
            Ok(v) if n == 1 => Ok(vec![parse_snapshot(v)]),
            Ok(v) => {
                let replies = as_array(v)?;
                if replies.len() != n {
                    return Err(protocol("join_many arity"));
                }
                Ok(replies
                    .into_iter()
                    .map(|r| match refusal(&r) {
                        Some(e) => Err(e),
                        None => parse_snapshot(r),
                    })
                    .collect())
            }
        }
    }

    /// The connection, for tests and tools that inspect keys.
    pub fn conn(&self) -> Conn {
        self.conn.clone()
    }

    /// `P:rooms`: the set of room ids.
    fn rooms_key(&self) -> String {
        format!("{}:rooms", self.prefix)
    }

    /// `P:room:{R}:<part>`: one of a room's keys (hash-tagged by room).
    fn room_key(&self, room: &str, part: &str) -> String {
        format!("{}:room:{{{}}}:{}", self.prefix, room, part)
    }

    /// A room's keys, in the order `common.lua`'s bind() derives them from the cfg key (the
    /// ninth is the room's pub/sub channel, hash-tagged like the keys).
    fn room_keys(&self, room: &str) -> [String; 10] {
        [
            "cfg", "q", "hb", "act", "sess", "st", "win", "units", "events", "jt",
        ]
        .map(|p| self.room_key(room, p))
    }

    /// Pattern matching every room's event channel.
    fn events_pattern(&self) -> String {
        format!("{}:room:*:events", self.prefix)
    }

    /// `P:rl:{V}`: a fixed-window counter.
    fn window_key(&self, key: &str) -> String {
        format!("{}:rl:{{{}}}", self.prefix, key)
    }

    /// Calls a room function (`FCALL`); on a node without the library (a restart, a
    /// `FUNCTION FLUSH`, a new node) loads it and calls again, once.
    async fn run_room(&self, f: &RoomFn, room: &str, args: &[String]) -> StoreResult<Value> {
        let lib = RoomLibrary::get();
        let mut call = redis::cmd("FCALL");
        // One key, the room's config hash: the functions derive the others from it
        // (bind in common.lua; ten keys cost ~0.45 µs more a call, and deriving them
        // each call another ~0.5 µs).
        call.arg(lib.function(f))
            .arg(1)
            .arg(self.room_key(room, "cfg"));
        for a in args {
            call.arg(a);
        }
        let mut conn = self.conn.clone();
        let v: Value = match call.query_async(&mut conn).await {
            Err(e) if is_missing_function(&e) => {
                self.load_library().await?;
                call.query_async(&mut conn).await?
            }
            r => r?,
        };
        match refusal(&v) {
            Some(e) => Err(e),
            None => Ok(v),
        }
    }

    /// `put_room`, with `hold_ms` > 0 holding admissions and new places that long
    /// (`recreate_room`).
    async fn write_room(
        &self,
        cfg: &RoomConfig,
        create_only: bool,
        hold_ms: u64,
    ) -> StoreResult<bool> {
        let mut args = vec![
            if create_only { "1" } else { "0" }.to_string(),
            hold_ms.to_string(),
        ];
        args.extend(cfg_fields(cfg));

        let written = as_int(&self.run_room(&PUT_ROOM, &cfg.id, &args).await?)? == 1;
        // The room set lives in another slot, so it is written separately; it is only
        // an index (a room exists when its cfg hash does).
        let mut conn = self.conn.clone();
        redis::cmd("SADD")
            .arg(self.rooms_key())
            .arg(&cfg.id)
            .query_async::<()>(&mut conn)
            .await?;
        Ok(written)
    }

    /// `FUNCTION LOAD REPLACE` of the room library (on every primary of a Cluster).
    pub async fn load_library(&self) -> StoreResult<()> {
        let mut conn = self.conn.clone();
        let _: Value = redis::cmd("FUNCTION")
            .arg("LOAD")
            .arg("REPLACE")
            .arg(&RoomLibrary::get().source)
            .query_async(&mut conn)
            .await?;
        Ok(())
    }
}

/// The error a function's refusal stands for (`{'no_room'}`, `{'too_many_places'}`,
/// `{'held', ms}`), or None for any other reply.
fn refusal(v: &Value) -> Option<StoreError> {
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

fn protocol(what: &str) -> StoreError {
    StoreError::Protocol(what.to_string())
}

fn as_array(v: Value) -> StoreResult<Vec<Value>> {
    match v {
        Value::Array(a) => Ok(a),
        other => Err(StoreError::Protocol(format!(
            "expected array, got {other:?}"
        ))),
    }
}

fn as_int(v: &Value) -> StoreResult<i64> {
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

fn as_string(v: &Value) -> StoreResult<String> {
    match v {
        Value::BulkString(b) => String::from_utf8(b.clone()).map_err(|_| protocol("utf-8")),
        Value::SimpleString(s) => Ok(s.clone()),
        Value::Int(i) => Ok(i.to_string()),
        _ => Err(protocol("string")),
    }
}

fn as_strings(v: &Value) -> StoreResult<Vec<String>> {
    match v {
        Value::Array(a) => a.iter().map(as_string).collect(),
        Value::Nil => Ok(Vec::new()),
        _ => Err(protocol("array of strings")),
    }
}

fn u(v: &Value) -> StoreResult<u64> {
    Ok(as_int(v)?.max(0) as u64)
}

fn stock_of(v: i64) -> Option<u64> {
    (v >= 0).then_some(v as u64)
}

/// Whether a call failed because the node has no such function (the library is not
/// loaded there).
fn is_missing_function(e: &redis::RedisError) -> bool {
    let text = e.to_string();
    text.contains("Function not found") || text.contains("function not found")
}

/// Parses the reply built by `reply()` in `common.lua`.
fn parse_snapshot(v: Value) -> StoreResult<Snapshot> {
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
fn parse_room_view(v: Value) -> StoreResult<RoomView> {
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
fn parse_places(flat: &[Value]) -> StoreResult<Vec<WatchEntry>> {
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
fn parse_placed(flat: &[Value]) -> StoreResult<Vec<Placed>> {
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
fn parse_tick(v: Value, held: usize) -> StoreResult<RoomTick> {
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
fn prefix_pattern(prefix: &str) -> String {
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
fn parse_events(channel: &str, payload: &[u8]) -> Vec<AdmittedEvent> {
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
fn patch_fields(p: &RoomPatch) -> Vec<String> {
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
fn lane_fields(lanes: &[crate::config::Lane]) -> (String, String) {
    if lanes.is_empty() {
        return (String::new(), String::new());
    }
    let strides: Vec<String> = super::lane_strides(lanes)
        .iter()
        .map(|(name, stride)| format!("{name}={stride}"))
        .collect();
    (
        serde_json::to_string(lanes).unwrap_or_default(),
        strides.join(" "),
    )
}

/// Parses one minute's HGETALL.
fn parse_minute(minute: u64, v: &Value) -> StoreResult<MinuteStats> {
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
const WEBHOOK_PARTS: [&str; 4] = ["wh:cursor", "wh:retry", "wh:body", "wh:dead"];

/// Adds to `p` the commands that park (or re-park) a retry.
fn park(p: &mut Pipeline, zkey: &str, hkey: &str, r: &WebhookRetry) {
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
fn cfg_fields(cfg: &RoomConfig) -> Vec<String> {
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
fn opt(v: Option<u64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

fn cfg_from_hash(room: &str, h: &std::collections::HashMap<String, String>) -> RoomConfig {
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
fn some(h: &std::collections::HashMap<String, String>, k: &str) -> Option<u64> {
    h.get(k).and_then(|v| v.parse().ok())
}

#[async_trait]
impl Store for RedisStore {
    async fn put_room(&self, cfg: &RoomConfig, create_only: bool) -> StoreResult<bool> {
        self.write_room(cfg, create_only, 0).await
    }

    fn failovers(&self) -> u64 {
        match &self.conn {
            Conn::Sentinel(c) => c.failovers(),
            _ => 0,
        }
    }

    async fn recreate_room(&self, cfg: &RoomConfig, hold_ms: u64) -> StoreResult<bool> {
        self.write_room(cfg, true, hold_ms).await
    }

    async fn room_versioned(&self, room: &str) -> StoreResult<Option<(RoomConfig, u64)>> {
        let mut conn = self.conn.clone();
        // One HGETALL: the values and the version that counts them are read together.
        let h: std::collections::HashMap<String, String> = redis::cmd("HGETALL")
            .arg(self.room_key(room, "cfg"))
            .query_async(&mut conn)
            .await?;
        let version = h.get("version").and_then(|v| v.parse().ok()).unwrap_or(0);
        Ok((!h.is_empty()).then(|| (cfg_from_hash(room, &h), version)))
    }

    async fn rooms(&self) -> StoreResult<Vec<String>> {
        let mut conn = self.conn.clone();
        let mut ids: Vec<String> = redis::cmd("SMEMBERS")
            .arg(self.rooms_key())
            .query_async(&mut conn)
            .await?;
        ids.sort();
        Ok(ids)
    }

    async fn delete_room(&self, room: &str) -> StoreResult<bool> {
        let mut conn = self.conn.clone();
        let mut del = redis::cmd("DEL");
        for (i, k) in self.room_keys(room).iter().enumerate() {
            if i != 8 {
                del.arg(k); // every key but the pub/sub channel
            }
        }
        // This half hour's per-minute statistics (they would expire on their own).
        let minute = crate::clock::wall_ms() / 60_000;
        del.arg(format!("{}:away", self.room_key(room, "st")));
        del.arg(format!("{}:hidden", self.room_key(room, "st")));
        del.arg(format!("{}:gone", self.room_key(room, "st")));
        del.arg(format!("{}:stream", self.room_key(room, "st")));
        del.arg(format!("{}:ends", self.room_key(room, "st")));
        del.arg(format!("{}:lane", self.room_key(room, "st")));
        del.arg(format!("{}:lanes", self.room_key(room, "st")));
        for part in WEBHOOK_PARTS {
            del.arg(self.room_key(room, part));
        }
        del.arg(format!("{}:pq", self.room_key(room, "st")));
        del.arg(format!("{}:pqd", self.room_key(room, "st")));
        for m in minute.saturating_sub(32)..=minute + 1 {
            del.arg(format!("{}:m:{m}", self.room_key(room, "st")));
        }
        let n: i64 = del.query_async(&mut conn).await?;
        let m: i64 = redis::cmd("SREM")
            .arg(self.rooms_key())
            .arg(room)
            .query_async(&mut conn)
            .await?;
        Ok(n > 0 || m > 0)
    }

    async fn join_with(
        &self,
        room: &str,
        visitor: &str,
        opts: &super::JoinOptions,
    ) -> StoreResult<Snapshot> {
        let (group, max) = opts
            .limit
            .as_ref()
            .map_or((String::new(), 0), |l| (l.group.clone(), l.max));
        let lane = opts.lane.clone().unwrap_or_default();
        // A seed to keep if this join opens the room's pre-queue (HSETNX in the script).
        let seed = super::new_seed();
        let score = opts.score.map(|s| s.to_string()).unwrap_or_default();
        let args = [
            visitor.to_string(),
            group,
            max.to_string(),
            lane,
            seed,
            score,
        ];
        match &self.joins {
            Some(batcher) => batcher.submit(room, args).await,
            None => parse_snapshot(self.run_room(&JOIN, room, &args).await?),
        }
    }

    async fn status(&self, room: &str, visitor: &str) -> StoreResult<Snapshot> {
        parse_snapshot(self.run_room(&STATUS, room, &[visitor.to_string()]).await?)
    }

    async fn status_placed(&self, room: &str, visitor: &str) -> StoreResult<Snapshot> {
        parse_snapshot(
            self.run_room(&STATUS, room, &[visitor.to_string(), "1".into()])
                .await?,
        )
    }

    async fn restore_place(
        &self,
        room: &str,
        visitor: &str,
        ticket: u64,
        joined_at_ms: u64,
    ) -> StoreResult<Snapshot> {
        parse_snapshot(
            self.run_room(
                &RESTORE_PLACE,
                room,
                &[
                    visitor.to_string(),
                    ticket.to_string(),
                    joined_at_ms.to_string(),
                ],
            )
            .await?,
        )
    }

    async fn release_ended(&self, room: &str, visitor: &str) -> StoreResult<Released> {
        let a = as_array(
            self.run_room(
                &RELEASE,
                room,
                &[visitor.to_string(), super::PROMOTE_LIMIT.to_string()],
            )
            .await?,
        )?;
        if a.len() != 5 {
            return Err(protocol("release arity"));
        }
        // Serial 0: no live session ended (serials start at 1).
        let session = match u(&a[2])? {
            0 => None,
            serial => Some(Admission {
                serial,
                issued_at_ms: u(&a[3])?,
                expires_at_ms: u(&a[4])?,
            }),
        };
        Ok(Released {
            held: as_int(&a[0])? == 1,
            session,
            admitted: as_strings(&a[1])?,
        })
    }

    async fn promote(&self, room: &str, limit: u32) -> StoreResult<Vec<String>> {
        let a = as_array(self.run_room(&PROMOTE, room, &[limit.to_string()]).await?)?;
        as_strings(a.first().ok_or_else(|| protocol("promote arity"))?)
    }

    async fn session_live(&self, room: &str, visitor: &str, serial: u64) -> StoreResult<bool> {
        let v = self
            .run_room(&SESSION, room, &[visitor.to_string(), serial.to_string()])
            .await?;
        Ok(as_int(&v)? == 1)
    }

    async fn hold_away(&self, room: &str, visitor: &str, grace_ms: u64) -> StoreResult<bool> {
        let v = self
            .run_room(&AWAY, room, &[visitor.to_string(), grace_ms.to_string()])
            .await?;
        Ok(as_int(&v)? == 1)
    }

    async fn extend_session(
        &self,
        room: &str,
        visitor: &str,
        serial: u64,
        ttl_ms: u64,
        cap_ms: u64,
    ) -> StoreResult<Option<Admission>> {
        let a = as_array(
            self.run_room(
                &EXTEND_SESSION,
                room,
                &[
                    visitor.to_string(),
                    serial.to_string(),
                    ttl_ms.to_string(),
                    cap_ms.to_string(),
                ],
            )
            .await?,
        )?;
        match a.as_slice() {
            [] => Ok(None),
            [s, i, e] => Ok(Some(Admission {
                serial: u(s)?,
                issued_at_ms: u(i)?,
                expires_at_ms: u(e)?,
            })),
            _ => Err(protocol("extend_session arity")),
        }
    }

    async fn events(&self, room: &str, after: &str, count: u32) -> StoreResult<Vec<RoomEvent>> {
        // A plain XRANGE: reading needs no script (the room's key, outside a function).
        let mut conn = self.conn.clone();
        let start = if after.is_empty() || after == "0" {
            "-".to_string()
        } else {
            format!("({after}")
        };
        let entries: Vec<(String, Vec<(String, String)>)> = redis::cmd("XRANGE")
            .arg(format!("{}:stream", self.room_key(room, "st")))
            .arg(start)
            .arg("+")
            .arg("COUNT")
            .arg(count)
            .query_async(&mut conn)
            .await?;
        Ok(entries
            .into_iter()
            .map(|(id, fields)| {
                let get = |k: &str| fields.iter().find(|(f, _)| f == k).map(|(_, v)| v.clone());
                RoomEvent {
                    id,
                    kind: get("type").unwrap_or_default(),
                    visitor: get("visitor"),
                    serial: get("serial").and_then(|s| s.parse().ok()),
                    ticket: get("ticket").and_then(|s| s.parse().ok()),
                }
            })
            .collect())
    }

    async fn webhook_cursor(&self, room: &str) -> StoreResult<String> {
        let mut conn = self.conn.clone();
        let c: Option<String> = redis::cmd("GET")
            .arg(self.room_key(room, "wh:cursor"))
            .query_async(&mut conn)
            .await?;
        Ok(c.unwrap_or_default())
    }

    async fn webhook_advance(
        &self,
        room: &str,
        cursor: &str,
        retries: &[WebhookRetry],
        dead: u64,
    ) -> StoreResult<()> {
        // MULTI/EXEC: the keys share the room's hash tag (one slot in a Cluster).
        let mut p = redis::pipe();
        p.atomic();
        p.cmd("SET")
            .arg(self.room_key(room, "wh:cursor"))
            .arg(cursor)
            .ignore();
        for r in retries {
            park(
                &mut p,
                &self.room_key(room, "wh:retry"),
                &self.room_key(room, "wh:body"),
                r,
            );
        }
        if dead > 0 {
            p.cmd("INCRBY")
                .arg(self.room_key(room, "wh:dead"))
                .arg(dead)
                .ignore();
        }
        let mut conn = self.conn.clone();
        p.query_async::<()>(&mut conn).await?;
        Ok(())
    }

    async fn webhook_due(
        &self,
        room: &str,
        now_ms: u64,
        limit: u32,
    ) -> StoreResult<Vec<WebhookRetry>> {
        let mut conn = self.conn.clone();
        let ids: Vec<String> = redis::cmd("ZRANGE")
            .arg(self.room_key(room, "wh:retry"))
            .arg("-inf")
            .arg(now_ms)
            .arg("BYSCORE")
            .arg("LIMIT")
            .arg(0)
            .arg(limit)
            .query_async(&mut conn)
            .await?;
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let bodies: Vec<Option<String>> = redis::cmd("HMGET")
            .arg(self.room_key(room, "wh:body"))
            .arg(&ids)
            .query_async(&mut conn)
            .await?;
        // A record without its body (never written apart, but a hand-edited store) is
        // skipped rather than sent empty.
        Ok(bodies
            .into_iter()
            .flatten()
            .filter_map(|b| serde_json::from_str(&b).ok())
            .collect())
    }

    async fn webhook_settle(
        &self,
        room: &str,
        event_id: &str,
        outcome: &WebhookSettle,
    ) -> StoreResult<()> {
        let (zkey, hkey) = (
            self.room_key(room, "wh:retry"),
            self.room_key(room, "wh:body"),
        );
        let mut conn = self.conn.clone();
        let mut p = redis::pipe();
        p.atomic();
        match outcome {
            WebhookSettle::Retry { attempts, due_ms } => {
                let body: Option<String> = redis::cmd("HGET")
                    .arg(&hkey)
                    .arg(event_id)
                    .query_async(&mut conn)
                    .await?;
                let Some(mut r) = body.and_then(|b| serde_json::from_str::<WebhookRetry>(&b).ok())
                else {
                    return Ok(());
                };
                r.attempts = *attempts;
                r.due_ms = *due_ms;
                park(&mut p, &zkey, &hkey, &r);
            }
            WebhookSettle::Delivered | WebhookSettle::Dead => {
                p.cmd("ZREM").arg(&zkey).arg(event_id);
                p.cmd("HDEL").arg(&hkey).arg(event_id).ignore();
            }
        }
        let removed: Vec<i64> = p.query_async(&mut conn).await?;
        // The dead letter is counted only if this call removed the record (the deliverer
        // holds the room's lease, so nobody else settles it meanwhile).
        if *outcome == WebhookSettle::Dead && removed.first() == Some(&1) {
            redis::cmd("INCR")
                .arg(self.room_key(room, "wh:dead"))
                .query_async::<()>(&mut conn)
                .await?;
        }
        Ok(())
    }

    async fn webhook_counts(&self, room: &str) -> StoreResult<WebhookCounts> {
        let mut conn = self.conn.clone();
        let (pending, dead): (u64, Option<u64>) = redis::pipe()
            .cmd("ZCARD")
            .arg(self.room_key(room, "wh:retry"))
            .cmd("GET")
            .arg(self.room_key(room, "wh:dead"))
            .query_async(&mut conn)
            .await?;
        Ok(WebhookCounts {
            pending,
            dead_letters: dead.unwrap_or(0),
        })
    }

    async fn sessions(&self, room: &str, q: &SessionsQuery) -> StoreResult<SessionsPage> {
        let args = [
            q.expires_from.to_string(),
            q.gone_after.map(|g| g.to_string()).unwrap_or_default(),
            q.limit.to_string(),
        ];
        let a = as_array(self.run_room(&SESSIONS, room, &args).await?)?;
        let [now, list, gone, flushed] = a.as_slice() else {
            return Err(protocol("sessions arity"));
        };
        let flushed_at_ms = match flushed {
            redis::Value::Nil => None,
            v => Some(u(v)?),
        };
        let list = as_array(list.clone())?;
        let gone = as_array(gone.clone())?;
        if list.len() % 4 != 0 || gone.len() % 2 != 0 {
            return Err(protocol("sessions arity"));
        }
        let sessions = list
            .chunks(4)
            .map(|c| {
                Ok((
                    as_string(&c[0])?,
                    Admission {
                        serial: u(&c[1])?,
                        issued_at_ms: u(&c[2])?,
                        expires_at_ms: u(&c[3])?,
                    },
                ))
            })
            .collect::<StoreResult<_>>()?;
        let gone = gone
            .chunks(2)
            .map(|c| {
                let at = as_string(&c[1])?
                    .parse::<f64>()
                    .map_err(|_| protocol("a release time"))?;
                Ok((as_string(&c[0])?, at as u64))
            })
            .collect::<StoreResult<_>>()?;
        Ok(SessionsPage {
            now_ms: u(now)?,
            sessions,
            gone,
            flushed_at_ms,
        })
    }

    async fn restore_session(
        &self,
        room: &str,
        visitor: &str,
        admission: &Admission,
    ) -> StoreResult<bool> {
        let v = self
            .run_room(
                &RESTORE_SESSION,
                room,
                &[
                    visitor.to_string(),
                    admission.serial.to_string(),
                    admission.issued_at_ms.to_string(),
                    admission.expires_at_ms.to_string(),
                ],
            )
            .await?;
        Ok(as_int(&v)? == 1)
    }

    async fn reap(&self, room: &str, batch: u32) -> StoreResult<ReapBatch> {
        let a = as_array(
            self.run_room(
                &REAP,
                room,
                &[batch.to_string(), super::AWAY_KEEP_MS.to_string()],
            )
            .await?,
        )?;
        if a.len() != 3 {
            return Err(protocol("reap arity"));
        }
        Ok(ReapBatch {
            dropped: u(&a[0])?,
            expired: u(&a[1])?,
            vouched: u(&a[2])?,
        })
    }

    async fn stats(&self, room: &str) -> StoreResult<RoomStats> {
        let a = as_array(self.run_room(&STATS, room, &[]).await?)?;
        if a.len() != 8 {
            return Err(protocol("stats arity"));
        }
        Ok(RoomStats {
            queue_length: u(&a[0])?,
            active: u(&a[1])?,
            capacity: u(&a[2])?,
            paused: as_int(&a[3])? == 1,
            closed: as_int(&a[4])? == 1,
            stock: stock_of(as_int(&a[5])?),
            admitted_total: u(&a[6])?,
            reaped_total: u(&a[7])?,
        })
    }

    async fn acquire_lease(&self, name: &str, token: &str, ttl_ms: u64) -> StoreResult<bool> {
        let mut conn = self.conn.clone();
        let n: i64 = LEASE_ACQUIRE
            .key(self.lease_key(name))
            .arg(token)
            .arg(ttl_ms)
            .invoke_async(&mut conn)
            .await?;
        Ok(n == 1)
    }

    async fn release_lease(&self, name: &str, token: &str) -> StoreResult<bool> {
        let mut conn = self.conn.clone();
        let n: i64 = LEASE_RELEASE
            .key(self.lease_key(name))
            .arg(token)
            .invoke_async(&mut conn)
            .await?;
        Ok(n == 1)
    }

    async fn hit_window(
        &self,
        key: &str,
        limit: u64,
        window_ms: u64,
    ) -> StoreResult<WindowDecision> {
        // Three plain commands in one round trip, no script: the count, the window's
        // expiry set only if the counter has none (`NX`, Redis >= 7: so a counter left
        // without one, however it came about, gets it on its next hit), and the time left.
        // Measured against the script this replaces (window.lua: the same three and a
        // branch): Redis CPU 12.2-12.4 against 13.7-14.0 µs per join+status decision with
        // the limiter on; a lone `INCR` a hit (the expiry set by a second round trip, the
        // time left read only for a refusal) measured no better, 13.0-13.2, nor did hits
        // taken together in one script (12.6): in that benchmark the cost is the counters
        // themselves, one new key with an expiry per visitor
        // (docs/design.md#the-per-visitor-limiter).
        let k = self.window_key(key);
        let mut conn = self.conn.clone();
        let (count, ttl): (u64, i64) = redis::pipe()
            .cmd("INCR")
            .arg(&k)
            .cmd("PEXPIRE")
            .arg(&k)
            .arg(window_ms)
            .arg("NX")
            .ignore()
            .cmd("PTTL")
            .arg(&k)
            .query_async(&mut conn)
            .await?;
        Ok(WindowDecision {
            allowed: count <= limit,
            count,
            // -2: the window ended between the commands; a new one starts with the next hit.
            reset_ms: if ttl < 0 { window_ms } else { ttl as u64 },
        })
    }

    async fn watch(
        &self,
        room: &str,
        visitors: &[String],
    ) -> StoreResult<(RoomView, Vec<WatchEntry>)> {
        let a = as_array(self.run_room(&WATCH, room, visitors).await?)?;
        if a.len() != 2 {
            return Err(protocol("watch arity"));
        }
        let mut a = a.into_iter();
        let view = parse_room_view(a.next().unwrap_or(Value::Nil))?;
        let flat = as_array(a.next().unwrap_or(Value::Nil))?;
        if flat.len() != visitors.len() * 4 {
            return Err(protocol("watch entries"));
        }
        Ok((view, parse_places(&flat)?))
    }

    async fn tick(&self, room: &str, req: &TickRequest<'_>) -> StoreResult<RoomTick> {
        let mut args = Vec::with_capacity(4 + req.hold.len() + req.unhold.len());
        args.push(req.instance.to_string());
        args.push(req.since.map(|c| c.epoch.clone()).unwrap_or_default());
        args.push(req.since.map_or(0, |c| c.seq).to_string());
        args.push(req.hold.len().to_string());
        args.extend(req.hold.iter().cloned());
        args.extend(req.unhold.iter().cloned());
        parse_tick(self.run_room(&TICK, room, &args).await?, req.hold.len())
    }

    async fn places(
        &self,
        room: &str,
        visitors: &[String],
    ) -> StoreResult<(RoomView, Vec<Placed>, LineCursor)> {
        let a = as_array(self.run_room(&PLACES, room, visitors).await?)?;
        if a.len() != 4 {
            return Err(protocol("places arity"));
        }
        let cursor = LineCursor {
            epoch: as_string(&a[2])?,
            seq: u(&a[3])?,
        };
        let mut a = a.into_iter();
        let view = parse_room_view(a.next().unwrap_or(Value::Nil))?;
        let flat = as_array(a.next().unwrap_or(Value::Nil))?;
        if flat.len() != visitors.len() * 4 {
            return Err(protocol("places entries"));
        }
        Ok((view, parse_placed(&flat)?, cursor))
    }

    async fn subscribe(&self) -> StoreResult<BoxStream<'static, AdmittedEvent>> {
        if let Some(nodes) = &self.cluster_nodes {
            return self.subscribe_cluster(nodes.clone()).await;
        }
        let client = match (&self.client, &self.conn) {
            (Some(c), _) => c.clone(),
            (None, Conn::Sentinel(s)) => s.master_client().await?,
            (None, _) => return Err(StoreError::Unavailable("no pub/sub client".into())),
        };
        let mut pubsub = tokio::time::timeout(self.connect_timeout, client.get_async_pubsub())
            .await
            .map_err(|_| StoreError::Unavailable("pub/sub connect timed out".into()))??;
        pubsub.psubscribe(self.events_pattern()).await?;
        let stream = pubsub.into_on_message().flat_map(|msg| {
            let events = parse_events(msg.get_channel_name(), msg.get_payload_bytes());
            futures_util::stream::iter(events)
        });
        Ok(stream.boxed())
    }

    async fn patch_room_if(
        &self,
        room: &str,
        patch: &RoomPatch,
        expected: Option<u64>,
    ) -> StoreResult<PatchOutcome> {
        let mut args = vec![expected.map(|v| v.to_string()).unwrap_or_default()];
        args.extend(patch_fields(patch));
        let a = as_array(self.run_room(&PATCH_ROOM, room, &args).await?)?;
        if a.len() != 2 {
            return Err(protocol("patch arity"));
        }
        if matches!(&a[0], Value::BulkString(b) if b.as_slice() == b"stale") {
            return Ok(PatchOutcome::Stale { version: u(&a[1])? });
        }
        Ok(PatchOutcome::Applied {
            version: u(&a[1])?,
            admitted: as_strings(&a[0])?,
        })
    }

    async fn change_stock(
        &self,
        room: &str,
        change: StockChange,
    ) -> StoreResult<(Option<u64>, Option<u64>, Vec<String>)> {
        let (mode, n) = match change {
            StockChange::Set(n) => ("set", n),
            StockChange::Add(n) => ("add", n),
            StockChange::Unlimited => ("unlimited", 0),
        };
        let args = [
            mode.to_string(),
            n.to_string(),
            super::MAX_STOCK.to_string(),
        ];
        let a = as_array(self.run_room(&STOCK, room, &args).await?)?;
        if a.len() != 3 {
            return Err(protocol("stock arity"));
        }
        Ok((
            stock_of(as_int(&a[0])?),
            stock_of(as_int(&a[1])?),
            as_strings(&a[2])?,
        ))
    }

    async fn find_visitors(
        &self,
        room: &str,
        id_prefix: &str,
        limit: usize,
    ) -> StoreResult<Vec<FoundVisitor>> {
        // Candidates by ZSCAN over the queue and the sessions, a bounded step per call, so
        // a queue of a million never blocks Redis the way one script scanning it would.
        // Where each stands is then read in one script, consistently.
        let mut conn = self.conn.clone();
        let pattern = prefix_pattern(id_prefix);
        let mut ids: Vec<String> = Vec::new();
        for part in ["act", "q"] {
            let key = self.room_key(room, part);
            let mut cursor: u64 = 0;
            loop {
                let (next, pairs): (u64, Vec<String>) = redis::cmd("ZSCAN")
                    .arg(&key)
                    .arg(cursor)
                    .arg("MATCH")
                    .arg(&pattern)
                    .arg("COUNT")
                    .arg(1000)
                    .query_async(&mut conn)
                    .await?;
                // Member, score, member, score…
                for member in pairs.into_iter().step_by(2) {
                    if !ids.contains(&member) {
                        ids.push(member);
                    }
                }
                if next == 0 || ids.len() >= limit {
                    break;
                }
                cursor = next;
            }
        }
        let flat = as_array(self.run_room(&FIND, room, &ids).await?)?;
        if flat.len() != ids.len() * 4 {
            return Err(protocol("find entries"));
        }
        let mut found: Vec<FoundVisitor> = ids
            .into_iter()
            .zip(parse_places(&flat)?)
            .filter(|(_, place)| *place != WatchEntry::Gone)
            .map(|(visitor, place)| FoundVisitor { visitor, place })
            .collect();
        sort_found(&mut found);
        found.truncate(limit);
        Ok(found)
    }

    async fn flush(&self, room: &str) -> StoreResult<u64> {
        u(&self.run_room(&FLUSH, room, &[]).await?)
    }

    async fn report(&self, room: &str, minutes: u32) -> StoreResult<RoomReport> {
        let a = as_array(self.run_room(&REPORT, room, &[minutes.to_string()]).await?)?;
        if a.len() != 5 {
            return Err(protocol("report arity"));
        }
        let mut it = a.into_iter();
        let view = parse_room_view(it.next().unwrap_or(Value::Nil))?;
        let admitted_total = u(&it.next().unwrap_or(Value::Nil))?;
        let reaped_total = u(&it.next().unwrap_or(Value::Nil))?;
        let flat = as_array(it.next().unwrap_or(Value::Nil))?;
        let minutes = flat
            .chunks(2)
            .map(|c| parse_minute(u(&c[0])?, &c[1]))
            .collect::<StoreResult<Vec<_>>>()?;
        let lanes = as_array(it.next().unwrap_or(Value::Nil))?
            .chunks(3)
            .map(|c| {
                Ok(super::LaneCount {
                    lane: as_string(&c[0])?,
                    waiting: u(&c[1])?,
                    admitted: u(&c[2])?,
                })
            })
            .collect::<StoreResult<Vec<_>>>()?;
        Ok(RoomReport {
            view,
            admitted_total,
            reaped_total,
            minutes,
            lanes,
        })
    }

    async fn eta_basis(&self, room: &str) -> StoreResult<EtaBasis> {
        let a = as_array(self.run_room(&ETA_BASIS, room, &[]).await?)?;
        if a.len() != 18 {
            return Err(protocol("eta_basis arity"));
        }
        let n = |i: usize| u(&a[i]);
        let list =
            |i: usize| -> StoreResult<Vec<u64>> { as_array(a[i].clone())?.iter().map(u).collect() };
        let pairs = |v: Vec<u64>| v.chunks(2).map(|c| (c[0], c[1])).collect();
        let ends = as_array(a[10].clone())?
            .iter()
            .filter_map(|v| {
                let s: String = redis::from_redis_value(v.clone()).ok()?;
                let (e, d) = s.split_once(':')?;
                Some((e.parse().ok()?, d.parse().ok()?))
            })
            .collect();
        Ok(EtaBasis {
            now_ms: n(0)?,
            lanes: n(17)? == 1,
            capacity: n(1)?,
            session_ttl_ms: n(2)?,
            rate_cap_per_minute: n(3)?,
            stock: stock_of(as_int(&a[4])?),
            paused: n(5)? == 1,
            closed: n(6)? == 1,
            queue_length: n(7)?,
            active: n(8)?,
            sessions: pairs(list(9)?),
            ends,
            window: list(11)?,
            admitted_recent: n(12)?,
            reaped_recent: n(13)?,
            silent: n(14)?,
            admits: n(15)?,
            quiet: list(16)?,
        })
    }

    async fn report_sockets(&self, instance: &str, counts: &[(String, u64)]) -> StoreResult<()> {
        if counts.is_empty() {
            return Ok(());
        }
        let mut inv = SOCKETS_REPORT.prepare_invoke();
        inv.key(format!("{}:sockets", self.prefix)).arg(instance);
        for (room, n) in counts {
            inv.arg(room).arg(n);
        }
        let mut conn = self.conn.clone();
        inv.invoke_async::<()>(&mut conn).await?;
        Ok(())
    }

    async fn sockets(&self) -> StoreResult<Vec<SocketCount>> {
        let mut conn = self.conn.clone();
        let v: Value = SOCKETS_READ
            .key(format!("{}:sockets", self.prefix))
            .arg(60_000)
            .invoke_async(&mut conn)
            .await?;
        as_array(v)?
            .chunks(3)
            .map(|c| {
                let field = as_string(&c[0])?;
                let (instance, room) = field.split_once('|').unwrap_or((&field, ""));
                Ok(SocketCount {
                    instance: instance.to_string(),
                    room: room.to_string(),
                    count: u(&c[1])?,
                    age_ms: u(&c[2])?,
                })
            })
            .collect()
    }

    async fn audit_push(&self, entry: &str, keep: u32) -> StoreResult<()> {
        let key = format!("{}:audit", self.prefix);
        let mut conn = self.conn.clone();
        redis::pipe()
            .atomic()
            .cmd("LPUSH")
            .arg(&key)
            .arg(entry)
            .ignore()
            .cmd("LTRIM")
            .arg(&key)
            .arg(0)
            .arg(keep.saturating_sub(1))
            .ignore()
            .query_async::<()>(&mut conn)
            .await?;
        Ok(())
    }

    async fn audit(&self, limit: u32) -> StoreResult<Vec<String>> {
        let mut conn = self.conn.clone();
        Ok(redis::cmd("LRANGE")
            .arg(format!("{}:audit", self.prefix))
            .arg(0)
            .arg(limit.saturating_sub(1))
            .query_async(&mut conn)
            .await?)
    }

    async fn ping(&self) -> StoreResult<()> {
        let mut conn = self.conn.clone();
        redis::cmd("PING").query_async::<String>(&mut conn).await?;
        Ok(())
    }

    async fn event_seed(&self, room: &str, candidate: &str) -> StoreResult<String> {
        as_string(
            &self
                .run_room(&EVENT_SEED, room, &[candidate.to_string()])
                .await?,
        )
    }

    async fn fairness(&self, room: &str) -> StoreResult<super::Fairness> {
        let a = as_array(self.run_room(&FAIRNESS, room, &[]).await?)?;
        if a.len() != 11 {
            return Err(protocol("fairness arity"));
        }
        let time = |v: &Value| -> StoreResult<Option<u64>> { Ok(as_string(v)?.parse().ok()) };
        let seed = as_string(&a[4])?;
        let mode = crate::config::QueueMode::parse(&as_string(&a[3])?).unwrap_or_default();
        let shuffled = as_int(&a[5])? == 1;
        Ok(super::Fairness::from_parts(
            mode,
            [time(&a[0])?, time(&a[1])?, time(&a[2])?],
            seed,
            shuffled,
            u(&a[6])?,
            u(&a[7])?,
            u(&a[8])?,
            (as_int(&a[9])? == 1, as_int(&a[10])? == 1),
        ))
    }

    async fn prequeue_page(&self, room: &str, offset: u64, count: u32) -> StoreResult<Vec<String>> {
        if count == 0 {
            return Ok(Vec::new());
        }
        let mut conn = self.conn.clone();
        let v: Vec<String> = redis::cmd("ZRANGE")
            .arg(self.room_key(room, "st:pq"))
            .arg(offset)
            .arg(offset + u64::from(count) - 1)
            .query_async(&mut conn)
            .await?;
        Ok(v)
    }

    async fn shuffle_step(
        &self,
        room: &str,
        seed: &str,
        first_rank: u64,
        visitors: &[String],
        last: bool,
    ) -> StoreResult<super::ShuffleStep> {
        let mut args = vec![
            seed.to_string(),
            first_rank.to_string(),
            if last { "1" } else { "0" }.to_string(),
        ];
        args.extend(visitors.iter().cloned());
        let a = as_array(self.run_room(&SHUFFLE, room, &args).await?)?;
        let kind = as_string(a.first().ok_or_else(|| protocol("shuffle arity"))?)?;
        Ok(match kind.as_str() {
            "placed" => super::ShuffleStep::Placed(u(a.get(1).unwrap_or(&Value::Nil))?),
            "done" => super::ShuffleStep::AlreadyDone,
            "wrong_seed" => super::ShuffleStep::WrongSeed,
            _ => super::ShuffleStep::NotDue,
        })
    }

    async fn epoch(&self, candidate: &str) -> StoreResult<String> {
        let mut conn = self.conn.clone();
        let key = format!("{}:epoch", self.prefix);
        // SET NX, then GET (two commands rather than SET … NX GET, which needs Redis 7):
        // whoever wrote first, every instance reads the same value.
        let _: Option<String> = redis::cmd("SET")
            .arg(&key)
            .arg(candidate)
            .arg("NX")
            .query_async(&mut conn)
            .await?;
        let now: Option<String> = redis::cmd("GET").arg(&key).query_async(&mut conn).await?;
        Ok(now.unwrap_or_else(|| candidate.to_string()))
    }

    async fn revoke(&self, r: &super::Revocation) -> StoreResult<()> {
        let mut conn = self.conn.clone();
        REVOKE
            .key(self.revoked_key("log"))
            .key(self.revoked_key("exp"))
            .key(self.revoked_key("seq"))
            .arg(r.encode())
            .arg(r.expires_at_ms)
            .arg(super::revocation::SWEEP_BATCH)
            .invoke_async::<i64>(&mut conn)
            .await?;
        Ok(())
    }

    async fn revocations_since(
        &self,
        cursor: u64,
        limit: usize,
    ) -> StoreResult<super::RevocationPage> {
        let mut conn = self.conn.clone();
        let v: Value = REVOCATIONS
            .key(self.revoked_key("log"))
            .key(self.revoked_key("seq"))
            .arg(cursor)
            .arg(limit)
            .invoke_async(&mut conn)
            .await?;
        let rows = as_array(v)?;
        let (first, rest) = rows
            .split_first()
            .ok_or_else(|| protocol("revocations: empty reply"))?;
        let mut page = super::RevocationPage {
            cursor: u(first)?,
            ..Default::default()
        };
        for pair in rest.chunks(2) {
            if page.entries.len() == limit {
                page.more = true;
                break;
            }
            let [member, score] = pair else {
                return Err(protocol("revocations: odd reply"));
            };
            let entry = super::Revocation::decode(&as_string(member)?)
                .ok_or_else(|| protocol("revocations: bad member"))?;
            // Scores come back as text ("12") or, over RESP3, as doubles.
            page.cursor = match score {
                Value::Double(d) => *d as u64,
                other => as_string(other)?
                    .parse::<f64>()
                    .map_err(|_| protocol("revocations: bad score"))?
                    as u64,
            };
            page.entries.push(entry);
        }
        Ok(page)
    }
}

impl RedisStore {
    /// Cluster pub/sub: scripts `PUBLISH` on their shard and the cluster bus carries it to
    /// every node, so one RESP3 connection subscribed to the pattern hears all rooms.
    async fn subscribe_cluster(
        &self,
        nodes: Vec<String>,
    ) -> StoreResult<BoxStream<'static, AdmittedEvent>> {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<redis::PushInfo>();
        let client = redis::cluster::ClusterClientBuilder::new(nodes)
            .connection_timeout(self.connect_timeout)
            .use_protocol(redis::ProtocolVersion::RESP3)
            .push_sender(tx)
            .build()?;
        let mut conn = tokio::time::timeout(self.connect_timeout, client.get_async_connection())
            .await
            .map_err(|_| StoreError::Unavailable("cluster pub/sub connect timed out".into()))??;
        conn.psubscribe(self.events_pattern()).await?;
        // The connection lives inside the stream; when it drops, so does the stream.
        let stream = futures_util::stream::unfold((rx, conn), |(mut rx, conn)| async move {
            loop {
                let push = rx.recv().await?;
                match push.kind {
                    redis::PushKind::PMessage if push.data.len() == 3 => {
                        let channel = as_string(&push.data[1]).unwrap_or_default();
                        let payload = match &push.data[2] {
                            Value::BulkString(b) => b.clone(),
                            _ => continue,
                        };
                        return Some((parse_events(&channel, &payload), (rx, conn)));
                    }
                    redis::PushKind::Disconnection => return None,
                    _ => continue,
                }
            }
        })
        .flat_map(futures_util::stream::iter);
        Ok(stream.boxed())
    }

    /// `P:revoked:{rv}:<part>`: the revocation log (`log`, `exp`, `seq`), one hash tag so
    /// its scripts touch one Cluster slot.
    fn revoked_key(&self, part: &str) -> String {
        format!("{}:revoked:{{rv}}:{}", self.prefix, part)
    }

    /// `P:room:{R}:lease:N` for room leases (name `R` or `R/N`), `P:lease:N` otherwise.
    fn lease_key(&self, name: &str) -> String {
        match name.split_once('/') {
            Some((room, n)) => self.room_key(room, &format!("lease:{n}")),
            None => format!("{}:lease:{}", self.prefix, name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &str) -> Value {
        Value::BulkString(s.as_bytes().to_vec())
    }

    #[test]
    fn the_library_registers_every_room_function_with_the_rust_constants() {
        let lib = RoomLibrary::get();
        assert!(lib.name.starts_with("anteroom_") && lib.name.len() == "anteroom_".len() + 12);
        assert!(lib
            .source
            .starts_with(&format!("#!lua name={}\n", lib.name)));
        for f in ROOM_FNS {
            let name = lib.function(f);
            assert!(
                lib.source.contains(&format!(
                    "redis.register_function('{name}', function(KEYS, ARGV)"
                )),
                "{name}"
            );
        }
        assert!(lib.source.contains(&format!(
            "local PROMOTE_LIMIT = {}\n",
            super::super::PROMOTE_LIMIT
        )));
        assert!(lib
            .source
            .contains("local WAIT_BOUNDS = {1000, 2000, 5000,"));
        assert!(lib.source.contains("local MINUTE_TTL_MS = 1860000\n"));
        // No number the Rust side owns is written again in the Lua files.
        for f in ROOM_FNS
            .iter()
            .map(|f| f.body)
            .chain([include_str!("lua/common.lua")])
        {
            assert!(!f.contains("1860000") && !f.contains(", 1000)"), "{f}");
        }
    }

    /// A reply list built by field name, as the Lua side builds it (`SNAP.<field>`): every
    /// name of the list exactly once.
    fn by_name(names: &[&str], fields: Vec<(&str, Value)>) -> Value {
        assert_eq!(fields.len(), names.len(), "one value per field");
        let mut out = vec![Value::Nil; names.len()];
        for (name, value) in fields {
            let i = names.iter().position(|n| *n == name).expect(name);
            out[i] = value;
        }
        Value::Array(out)
    }

    #[test]
    fn the_library_sets_the_reply_fields_rust_reads_by_name() {
        let lib = RoomLibrary::get();
        assert!(lib.source.contains("out[1] = state\n  out[2] = pos\n"));
        assert!(lib.source.contains("out[18] = joined\n"));
        assert!(lib.source.contains("out[14] = cfg.phase or 'open'\n"));
        assert!(lib
            .source
            .contains(&format!("local out = {{{}}}\n", ["false"; 21].join(", "))));
        // Every place was written in: a misspelt field would be left as it was.
        for token in ["[SNAP.", "[VIEW.", "= SNAP_NEW", "= VIEW_NEW"] {
            assert!(!lib.source.contains(token), "{token} left in the library");
        }
        // Every field the Lua replies set is one Rust knows, and every one is set.
        let common = include_str!("lua/common.lua");
        for (list, names) in [("SNAP", SNAPSHOT_FIELDS), ("VIEW", ROOM_VIEW_FIELDS)] {
            let set: Vec<&str> = common
                .match_indices(&format!("out[{list}."))
                .map(|(i, m)| {
                    let rest = &common[i + m.len()..];
                    &rest[..rest.find(']').unwrap()]
                })
                .collect();
            let mut want = names.to_vec();
            let mut got = set.clone();
            want.sort_unstable();
            got.sort_unstable();
            assert_eq!(got, want, "{list}");
        }
    }

    #[test]
    fn a_snapshot_reply_is_decoded_and_a_wrong_shape_refused() {
        let queued = |state: &str, stock: i64| {
            vec![
                ("state", b(state)),
                ("position", Value::Int(3)),
                ("queue_length", Value::Int(10)),
                ("active", Value::Int(2)),
                ("capacity", Value::Int(2)),
                ("ttl_ms", Value::Int(60_000)),
                ("stock", Value::Int(stock)),
                ("serial", Value::Int(5)),
                ("issued_ms", Value::Int(1_000)),
                ("expires_ms", Value::Int(61_000)),
                ("now_ms", Value::Int(1_700_000_000_000)),
                ("promoted", Value::Array(vec![b("aa"), b("bb")])),
                ("rate_cap", Value::Int(20)),
                ("target", b("https://shop.example/")),
                ("away", Value::Int(1)),
                ("admits", Value::Int(42)),
                ("ticket", Value::Int(7_000)),
                ("joined_ms", Value::Int(1_699_999_999_000)),
                ("heartbeat_ms", Value::Int(1_700_000_007_500)),
                ("line_epoch", b("e1")),
                ("line_seq", Value::Int(12)),
            ]
        };
        let s = parse_snapshot(by_name(SNAPSHOT_FIELDS, queued("queued", -1))).unwrap();
        assert_eq!(s.state, VisitorState::Queued);
        assert_eq!(
            (s.position, s.queue_length, s.active, s.capacity),
            (3, 10, 2, 2)
        );
        assert_eq!(
            (s.session_ttl_ms, s.stock, s.admission),
            (60_000, None, None)
        );
        assert_eq!(s.now_ms, 1_700_000_000_000);
        assert_eq!(s.promoted, ["aa", "bb"]);
        assert_eq!((s.rate_cap_per_minute, s.admits), (20, 42));
        assert_eq!(s.target_url, "https://shop.example/");
        assert!(s.rejoined_after_absence);
        assert_eq!((s.ticket, s.joined_at_ms), (7_000, 1_699_999_999_000));
        assert_eq!(s.heartbeat_ms, 1_700_000_007_500);
        assert_eq!((s.line.epoch.as_str(), s.line.seq), ("e1", 12));

        let a = parse_snapshot(by_name(SNAPSHOT_FIELDS, queued("admitted", 7))).unwrap();
        assert_eq!(a.stock, Some(7));
        let adm = a.admission.unwrap();
        assert_eq!(
            (adm.serial, adm.issued_at_ms, adm.expires_at_ms),
            (5, 1_000, 61_000)
        );

        assert!(matches!(
            parse_snapshot(Value::Array(vec![b("queued")])),
            Err(StoreError::Protocol(_))
        ));
        assert!(matches!(
            parse_snapshot(by_name(SNAPSHOT_FIELDS, queued("dancing", -1))),
            Err(StoreError::Protocol(_))
        ));
    }

    #[test]
    fn a_room_view_is_decoded_and_a_wrong_shape_refused() {
        let v = parse_room_view(by_name(
            ROOM_VIEW_FIELDS,
            vec![
                ("queue_length", Value::Int(4)),
                ("active", Value::Int(2)),
                ("capacity", Value::Int(3)),
                ("ttl_ms", Value::Int(30_000)),
                ("stock", Value::Int(9)),
                ("now_ms", Value::Int(5_000)),
                ("rate_cap", Value::Int(0)),
                ("target", b("https://t/")),
                ("paused", Value::Int(1)),
                ("closed", Value::Int(0)),
                ("admits", Value::Int(11)),
                ("mode", b("reject")),
                ("queue_all", Value::Int(1)),
                ("phase", b("prequeue")),
            ],
        ))
        .unwrap();
        assert_eq!(v.phase, crate::config::schedule::EventPhase::Prequeue);
        assert_eq!(
            (v.queue_length, v.active, v.capacity, v.stock),
            (4, 2, 3, Some(9))
        );
        assert_eq!((v.paused, v.closed, v.admits), (true, false, 11));
        assert_eq!(
            (v.mode, v.queue_all),
            (crate::config::QueueMode::Reject, true)
        );
        assert!(matches!(
            parse_room_view(Value::Array(vec![Value::Int(4)])),
            Err(StoreError::Protocol(_))
        ));
    }
}
