//! Typed configuration, loaded in layers: the built-in defaults (`default.toml` beside
//! this file, compiled in — the one place where every default is written, and the
//! annotated reference the docs show), then a TOML file (named by `--config PATH` or
//! `ANTEROOM_CONFIG`), then `ANTEROOM_…` environment variables (`__` separates nested
//! keys, e.g. `ANTEROOM_RATE_LIMIT__VISITOR_REQUESTS=60`).
//!
//! Each `[[rooms]]` entry starts from `[room_defaults]` (which a file may change too).
//! This struct tree documents every setting; `validate()` runs right after loading so a
//! bad value stops the process with a message naming the field.

use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use figment::providers::{Env, Format, Serialized, Toml};
use figment::value::{Dict, Value};
use figment::Figment;
use serde::{Deserialize, Serialize};

mod admin;
mod gateway;
pub(crate) mod redact;
pub(crate) mod schedule;
pub use admin::{AdminSettings, AdminUser, OidcSettings, Role, PASSWORD_USER, TOKEN_USER};
pub use gateway::{GatewayRoute, GatewaySettings};
pub(crate) mod webhook;
pub use webhook::{WebhookSecret, WebhookSettings};
pub(crate) mod outflow;
pub use outflow::{OutflowConfig, OutflowMode};
pub mod brand;
pub(crate) mod sentinel_url;

/// The most stock a room may hold. Redis keeps numbers in Lua as doubles, exact to
/// 2^53; this bound keeps every stock exact (a top-up past it stops at it).
pub const MAX_STOCK: u64 = 1_000_000_000_000_000;

/// Room ids appear in URLs, Redis keys and cookie names, so they are restricted to
/// `[A-Za-z0-9_-]{1,64}`.
pub fn valid_room_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A string that must never appear in logs, responses or `Debug` output: it serialises
/// as [`redact::SET`] (so a room's `entry_secret` reads `"[set]"` in the admin API, the
/// audit log and the log line each change writes) and debugs as `Secret([redacted])`.
/// Read it with [`Secret::expose`], only where it is used.
#[derive(Clone, Default, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(transparent)]
pub struct Secret(String);

impl Serialize for Secret {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(redact::SET)
    }
}

impl Secret {
    pub fn new(s: impl Into<String>) -> Self {
        Self(s.into())
    }
    pub fn expose(&self) -> &str {
        &self.0
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

/// Top-level settings.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Address the HTTP server binds, e.g. `"127.0.0.1:8080"`. Port 0 picks a free port.
    pub listen: String,
    /// Redis URL (`redis://host:port/db`, or `redis+cluster://host:port` for Redis
    /// Cluster). Absent: the embedded in-memory store (single instance, demo use).
    pub redis_url: Option<String>,
    /// Every Redis key Anteroom writes starts with this prefix.
    pub key_prefix: String,
    /// Public base URL of this server (used in redirects and absolute links), e.g.
    /// `"https://queue.example.com"`. Default: `http://{listen}`.
    pub public_url: Option<String>,
    /// HMAC key that signs visitor ids (cookie and `visitor_token`). Every instance
    /// serving the same rooms needs the same value. Absent: a random key per process
    /// (visitors lose their place when the process restarts).
    pub secret_key: Option<Secret>,
    /// Ed25519 signing key for passes: the 32-byte seed, base64 (standard or URL-safe).
    /// Every instance needs the same value. Absent: generated at start and printed.
    pub signing_key: Option<Secret>,
    /// Set `Secure` on cookies. Default: true when `public_url` starts with `https://`
    /// or the main listener serves TLS (`tls_cert`).
    pub secure_cookies: Option<bool>,
    /// PEM file with the certificate chain (leaf first) the main listener serves. With
    /// `tls_key`, `listen` speaks HTTPS only, HTTP/2 and HTTP/1.1 offered by ALPN; the
    /// files are read again on SIGHUP. Unset: plain HTTP (TLS in front of Anteroom).
    pub tls_cert: Option<PathBuf>,
    /// PEM file with the private key of `tls_cert` (PKCS#8, PKCS#1 or SEC1). Both or
    /// neither.
    pub tls_key: Option<PathBuf>,
    /// A directory of Fluent files (`de.ftl`, `pt-BR.ftl`…) that add languages or
    /// override messages of the built-in ones, read at start and again on SIGHUP (a bad
    /// file stops start-up naming it and its line; on SIGHUP it is logged and the
    /// languages in force are kept). docs/visitor-page.md#languages
    #[serde(default)]
    pub i18n_dir: Option<PathBuf>,
    /// Take the client IP from the last `X-Forwarded-For` entry, the one your own proxy
    /// appended (only behind a trusted proxy; clients can forge earlier entries).
    pub trust_forwarded_for: bool,
    /// With `trust_forwarded_for`: the networks of your proxies (CIDRs or addresses).
    /// Empty: the peer is taken as the one trusted proxy and the last `X-Forwarded-For`
    /// entry is the client. Set: only a peer inside them is believed, and entries are
    /// walked from the right past every trusted address (nginx `real_ip_recursive`).
    pub trusted_proxies: Vec<String>,
    /// Serve the built-in demo origin at `/demo/origin`.
    pub demo: bool,
    /// HTTP worker threads; 0 = one per CPU core.
    pub workers: usize,
    /// Bearer token that `GET /metrics` requires (it lists room ids and figures).
    /// Unset: `/metrics` is public; keep it off the internet some other way.
    pub metrics_token: Option<Secret>,
    /// Log one line per HTTP request (target `anteroom::http`, level info). Off by
    /// default: it costs CPU on the hot path; a proxy in front usually logs anyway.
    pub access_log: bool,
    /// Redis connection behaviour.
    pub store: StoreSettings,
    /// Request limits.
    pub rate_limit: RateLimitSettings,
    /// Background reaper.
    pub reaper: ReaperSettings,
    /// Admin dashboard and API.
    pub admin: AdminSettings,
    /// The folder rooms' custom queue templates (`template = "…"`) are read from: a
    /// room's `template` is a path inside it. Unset: no room may have a template. Files
    /// outside it are never read, whatever a room (or an admin change) names.
    #[serde(default)]
    pub template_dir: Option<PathBuf>,
    /// Rooms seeded into the store at start. A room already in the store keeps its live
    /// configuration (the admin API changes it at run time); the file only creates it.
    #[serde(default)]
    pub rooms: Vec<RoomConfig>,
    /// What every `[[rooms]]` entry (and a room created through the admin API) starts
    /// from; `id` and `target_url` must be given per room.
    pub room_defaults: RoomConfig,
    /// Requests that pass `verify` without a pass (monitoring, declared crawlers, static
    /// files): see [`BypassRule`] and `docs/abuse.md`.
    #[serde(default)]
    pub bypass: Vec<BypassRule>,
    /// The built-in gateway (`[gateway]`, `docs/gateway.md`): off unless `listen` is set.
    pub gateway: GatewaySettings,
    /// The webhook deliverer's timings (`[webhooks]`): every room with a `webhook_url`.
    pub webhooks: WebhookSettings,
}

/// One `[[bypass]]` rule: a `name` and exactly one condition. A request that matches
/// passes `verify` with `200` and `X-Anteroom-Bypass: <name>`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BypassRule {
    /// Shown in `X-Anteroom-Bypass` and the `/metrics` label: letters, digits, `-`, `_`.
    pub name: String,
    /// The client IP (as `trust_forwarded_for` finds it) is in this network (CIDR or
    /// address; IPv4 or IPv6).
    pub cidr: Option<String>,
    /// The `User-Agent` contains this (case-sensitive). Spoofable: for declared crawlers.
    pub user_agent: Option<String>,
    /// This request header (name, any case) carries exactly `value`: a shared secret for
    /// monitoring and health checks.
    pub header: Option<String>,
    pub value: Option<Secret>,
    /// The original path (`X-Original-URI` from the proxy, query left out) matches this
    /// glob, e.g. `/static/*` (`*` within a segment, `**` across segments).
    pub path: Option<String>,
}

/// Redis connection timeouts, so no request ever hangs on a dead store.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StoreSettings {
    /// Milliseconds allowed to open a connection.
    pub connect_timeout_ms: u64,
    /// Milliseconds allowed for one command (or script) to answer.
    pub response_timeout_ms: u64,
    /// While the store is unreachable, let new visitors through with a short fail-open
    /// pass instead of answering 503. Off: nobody new gets in during an outage.
    /// Either way, passes already issued keep verifying offline meanwhile.
    pub fail_open: bool,
    /// Lifetime of a fail-open pass, in seconds.
    pub fail_open_pass_secs: u64,
    /// After the store lost its data, how long (ms) a re-created declared room holds its
    /// admissions and new places while every instance puts back the places (its
    /// sockets', receipts') and sessions (the passes it issued) it knows. Longer than
    /// the keeper's interval plus a hub tick, so every instance has looked.
    pub restore_hold_ms: u64,
    /// Answer a queued visitor's status from this instance's view of the line (its hub
    /// follows the line log) while the store would only have read: a room open and first
    /// come first served, the visitor's heartbeat not due. Off: every status asks the
    /// store (docs/design.md#status-from-the-line-view).
    pub local_status: bool,
    /// Take the joins to one room that arrive while this instance has two calls for it in
    /// flight together, in one call (`join_many`), in arrival order; a join that finds a
    /// call free goes at once. Off: one call per join
    /// (docs/design.md#joins-taken-together).
    pub batch_joins: bool,
}

/// Limits on the hot endpoints.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RateLimitSettings {
    /// Per visitor (fixed window in the store): requests allowed per window on join and
    /// status. 0 turns the per-visitor limit off.
    pub visitor_requests: u32,
    /// Per visitor: window length in seconds.
    pub visitor_window_secs: u32,
    /// Per IP (in process, `governor`): sustained joins per second. 0 turns it off.
    pub ip_per_second: u32,
    /// Per IP: burst allowed above the sustained rate.
    pub ip_burst: u32,
}

/// Background reaper and promoter timings.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ReaperSettings {
    /// Milliseconds between reaper passes (each pass: drop silent visitors, prune
    /// expired sessions, promote).
    pub interval_ms: u64,
    /// Milliseconds between promote ticks, which reuse freed capacity quickly.
    pub promote_interval_ms: u64,
    /// How long a queued visitor whose page went to the background (a hidden tab, a
    /// locked phone) keeps the place without a heartbeat, once the page said so
    /// (`POST /api/rooms/{room}/away`). Not less than a room's `heartbeat_timeout_secs`
    /// in effect; 0 leaves every room at its heartbeat timeout.
    pub hidden_grace_secs: u64,
    /// Entries removed per script call, so Redis is never blocked for long.
    pub batch_size: u32,
    /// Lease length in milliseconds; a crashed holder's lease frees itself after this.
    pub lease_ms: u64,
    /// Milliseconds between the room keeper's looks (re-creating declared rooms that
    /// went missing, noticing a store that lost its data).
    pub keeper_interval_ms: u64,
}

/// One room: an independent queue in front of one target.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RoomConfig {
    /// Room id (`[A-Za-z0-9_-]{1,64}`), used in URLs and keys.
    pub id: String,
    /// Human-readable name shown to visitors. Default: the id.
    pub name: String,
    /// Maximum number of concurrently admitted visitors.
    pub capacity: u64,
    /// Arrival-rate cap: admissions allowed in any 60 s window. 0 = off.
    pub max_admissions_per_minute: u64,
    /// How long an admission (and its pass) lasts, in seconds.
    pub session_ttl_secs: u64,
    /// Queued visitors silent longer than this are dropped by the reaper.
    pub heartbeat_timeout_secs: u64,
    /// Where admitted visitors are sent.
    pub target_url: String,
    /// Finite units; each admission consumes one (at most one per visitor).
    /// Absent = unlimited.
    pub stock: Option<u64>,
    /// Admissions start paused (the queue still grows).
    pub paused: bool,
    /// The room is closed: new visitors are turned away, queued visitors are told.
    pub closed: bool,
    /// How the room lets visitors in: `fifo` (a line in order of arrival, the default),
    /// `passthrough` (no line: every join is let in at once, capacity and the rate cap
    /// ignored, stock still kept) or `reject` (nobody is let in or given a new place;
    /// visitors already in line keep their places).
    #[serde(default)]
    pub mode: QueueMode,
    /// Emergency switch: every newcomer queues and nobody is let in, whatever the mode
    /// (like `paused`, but a join that would have walked in queues too). Sessions already
    /// granted run on.
    #[serde(default)]
    pub queue_all: bool,
    /// Origins allowed to embed the room's widget in an iframe.
    pub embed_origins: Vec<String>,
    /// The languages the room's page offers in its language switch: codes the instance
    /// serves (`GET /api/languages`: the built-in ones and `i18n_dir`'s), e.g.
    /// `["en", "de", "fr"]`. Empty (the default): all of them.
    #[serde(default)]
    pub languages: Vec<String>,
    /// The language of a visitor who asks for none the room offers (`?lang=` and
    /// `Accept-Language` come first). Unset: English if offered, else the first of
    /// `languages`. Must be one of `languages` when both are set.
    #[serde(default)]
    pub default_language: Option<String>,
    /// Who may join: anyone, or only visitors with an enqueue token the site signed.
    #[serde(default)]
    pub entry: EntryMode,
    /// HS256 key the site signs enqueue tokens with (at least 32 characters).
    #[serde(default)]
    pub entry_secret: Option<Secret>,
    /// Ed25519 public key the site signs enqueue tokens with (EdDSA): PEM or a JWK.
    #[serde(default)]
    pub entry_public_key: Option<String>,
    /// Ask a visitor who needs a new place for a proof of work (ALTCHA) first.
    #[serde(default)]
    pub challenge: ChallengeMode,
    /// The proof of work's difficulty: the largest number a challenge hides (a client
    /// tries about half of them on average).
    #[serde(default = "default_pow_max_number")]
    pub pow_max_number: u64,
    /// The most places (or live sessions) one client address, or one IPv6 /64, may hold
    /// in the room at once; 0 = no cap. Default 300 (`default.toml`): one address cannot
    /// hold thousands of places, and a shared network (an office, carrier NAT) can still
    /// queue 300 people at once (the trade-off: `docs/abuse.md#places-per-network`).
    #[serde(default = "default_max_places_per_ip")]
    pub max_places_per_ip: u64,
    /// Priority lanes: visitors whose enqueue token names a lane queue in it, and each
    /// lane gets its share of the admissions; everyone else shares the rest.
    #[serde(default)]
    pub lanes: Vec<Lane>,
    /// Extend an admitted visitor's session while they use the site through the gateway:
    /// a request with the pass pushes the session's end to now + `session_ttl_secs`
    /// (asked of the store at most once per visitor per a tenth of the TTL, at least 1 s)
    /// and the gateway hands over a fresh pass with the new expiry, up to
    /// `max_session_secs` after the admission. Passes checked elsewhere keep their own
    /// expiry.
    #[serde(default)]
    pub renew_on_activity: bool,
    /// With `renew_on_activity`: the longest a session may last from its admission, in
    /// seconds (`session_ttl_secs` to 604800). 0: unset (required with it on).
    #[serde(default)]
    pub max_session_secs: u64,
    /// Where the room's events are POSTed, signed (Standard Webhooks): an http(s) URL.
    /// Unset: no webhook. `docs/integrations.md#signed-webhooks`. Shown (admin API,
    /// audit log) with its credentials as `[set]` ([`redact::url`]).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "redact::opt_url"
    )]
    pub webhook_url: Option<String>,
    /// The key deliveries are signed with: `whsec_` + standard base64 (required with
    /// `webhook_url`). Never shown back: responses say `"[set]"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook_secret: Option<WebhookSecret>,
    /// A scheduled event (docs/configuration.md#scheduled-events): from this time
    /// (RFC 3339) visitors join the pre-queue, put in a random order at `opens_at`.
    /// Requires `opens_at`.
    #[serde(default, with = "schedule::opt_time")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub prequeue_opens_at: Option<u64>,
    /// The event opens (RFC 3339): before it nobody is let in (nor queued, without a
    /// pre-queue).
    #[serde(default, with = "schedule::opt_time")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub opens_at: Option<u64>,
    /// The event ends (RFC 3339): the room closes (`closed_reason: "event_ended"`).
    #[serde(default, with = "schedule::opt_time")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub closes_at: Option<u64>,
    /// `capacity` between `opens_at` and `closes_at` (requires `opens_at`).
    #[serde(default)]
    pub event_capacity: Option<u64>,
    /// `session_ttl_secs` between `opens_at` and `closes_at` (requires `opens_at`).
    #[serde(default)]
    pub event_session_ttl_secs: Option<u64>,
    /// `max_admissions_per_minute` between `opens_at` and `closes_at` (requires
    /// `opens_at`).
    #[serde(default)]
    pub event_max_admissions_per_minute: Option<u64>,
    /// `[rooms.outflow]`: a fixed capacity, or one the outflow controller sets from the
    /// origin's health (docs/outflow.md).
    #[serde(default)]
    pub outflow: OutflowConfig,
    /// An admitted visitor whose pass is not presented (through the gateway or `verify`)
    /// within this many seconds loses the admission (`state: "no_show"`) and the slot
    /// goes to the next in line. 0: off (below `session_ttl_secs`).
    #[serde(default)]
    pub claim_timeout_secs: u64,
    /// `[rooms.brand]`: the room's title, logo, colours and message on the built-in page
    /// and the widget ([`brand::Brand`]; docs/visitor-page.md#branding).
    #[serde(default, skip_serializing_if = "brand::Brand::is_empty")]
    pub brand: brand::Brand,
    /// The room's own queue page: a minijinja template, a path relative to `template_dir`
    /// (docs/visitor-page.md#custom-templates). Unset: the built-in page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
}

/// A priority lane (`lanes = [{ name = "members", share = 0.3 }]`).
#[derive(Clone, Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Lane {
    /// `[A-Za-z0-9_-]{1,32}`, as the enqueue token's `lane` claim carries it.
    pub name: String,
    /// The part of the admissions the lane gets while it has visitors waiting, 0.01–0.99.
    pub share: f64,
}

impl PartialEq for Lane {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.share.to_bits() == other.share.to_bits()
    }
}
impl Eq for Lane {}

/// The most lanes a room may have.
pub const MAX_LANES: usize = 8;

/// The default difficulty (see `BENCHMARKS.md` for the solve time it costs).
pub const DEFAULT_POW_MAX_NUMBER: u64 = 100_000;

fn default_pow_max_number() -> u64 {
    DEFAULT_POW_MAX_NUMBER
}

/// The default cap on places per address (`docs/abuse.md#places-per-network`).
pub const DEFAULT_MAX_PLACES_PER_IP: u64 = 300;

fn default_max_places_per_ip() -> u64 {
    DEFAULT_MAX_PLACES_PER_IP
}

/// A room's `challenge`.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ChallengeMode {
    #[default]
    Off,
    /// Proof of work before a new place.
    Pow,
}

impl ChallengeMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Pow => "pow",
        }
    }
}

/// A room's `mode`: how it lets visitors in.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum QueueMode {
    /// A line in order of arrival (with the room's lanes), capacity and the rate cap
    /// deciding when the next visitor goes in.
    #[default]
    Fifo,
    /// No line: every join is let in at once, capacity and the rate cap ignored (stock is
    /// still kept, so a sale never oversells). Sessions are recorded as ever.
    Passthrough,
    /// Nobody is let in and no new place is given (join answers `rejected`); visitors
    /// already in line keep their places for when the room admits again.
    Reject,
    /// Each admission draws uniformly among those waiting: a visitor's place in line is
    /// `HMAC-SHA256(seed, visitor id)`, the seed revealed when the room closes or its
    /// event ends (`GET /api/rooms/{room}/fairness`).
    Random,
}

impl QueueMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fifo => "fifo",
            Self::Passthrough => "passthrough",
            Self::Reject => "reject",
            Self::Random => "random",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "fifo" => Self::Fifo,
            "passthrough" => Self::Passthrough,
            "reject" => Self::Reject,
            "random" => Self::Random,
            _ => return None,
        })
    }
}

/// A room's `entry`.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum EntryMode {
    /// Anyone may join (a token, when presented, still gives one place per `sub`).
    #[default]
    Open,
    /// A join that needs a new place must present a valid enqueue token.
    Token,
}

impl EntryMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Token => "token",
        }
    }
}

impl RoomConfig {
    /// `languages` and `default_language` name languages the instance serves.
    fn check_languages(&self) -> Result<(), (&'static str, String)> {
        let served = crate::domain::i18n::catalog::current();
        let codes = || {
            served
                .languages()
                .iter()
                .map(|l| l.code)
                .collect::<Vec<_>>()
                .join(", ")
        };
        for code in &self.languages {
            if served.get(code).is_none() {
                return Err((
                    "languages",
                    format!(
                        "`{code}` is not a language this instance serves ({})",
                        codes()
                    ),
                ));
            }
        }
        if let Some(code) = &self.default_language {
            if served.get(code).is_none() {
                return Err((
                    "default_language",
                    format!(
                        "`{code}` is not a language this instance serves ({})",
                        codes()
                    ),
                ));
            }
            if !self.languages.is_empty()
                && !self.languages.iter().any(|c| c.eq_ignore_ascii_case(code))
            {
                return Err((
                    "default_language",
                    format!("`{code}` is not one of the room's `languages`"),
                ));
            }
        }
        Ok(())
    }

    /// Checks ranges; returns `(field, message)` for the first problem.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if !valid_room_id(&self.id) {
            return Err(("id", "must match [A-Za-z0-9_-]{1,64}".into()));
        }
        if self.capacity == 0 || self.capacity > 10_000_000 {
            return Err(("capacity", "must be between 1 and 10000000".into()));
        }
        if self.session_ttl_secs == 0 || self.session_ttl_secs > 7 * 86_400 {
            return Err(("session_ttl_secs", "must be between 1 and 604800".into()));
        }
        if self.heartbeat_timeout_secs == 0 || self.heartbeat_timeout_secs > 86_400 {
            return Err((
                "heartbeat_timeout_secs",
                "must be between 1 and 86400".into(),
            ));
        }
        if self.max_admissions_per_minute > 1_000_000 {
            return Err((
                "max_admissions_per_minute",
                "must be at most 1000000".into(),
            ));
        }
        match url::Url::parse(&self.target_url) {
            Ok(u) if u.scheme() == "http" || u.scheme() == "https" => {}
            _ => return Err(("target_url", "must be an absolute http(s) URL".into())),
        }
        if self.stock.is_some_and(|s| s > MAX_STOCK) {
            return Err(("stock", format!("must be at most {MAX_STOCK}")));
        }
        if self.name.chars().count() > 200 {
            return Err(("name", "must be at most 200 characters".into()));
        }
        if self.max_places_per_ip > 1000 {
            return Err((
                "max_places_per_ip",
                "must be at most 1000 (0 = no cap)".into(),
            ));
        }
        if self.pow_max_number == 0 || self.pow_max_number > 100_000_000 {
            return Err(("pow_max_number", "must be between 1 and 100000000".into()));
        }
        check_lanes(&self.lanes).map_err(|m| ("lanes", m))?;
        self.check_languages()?;
        self.brand.check()?;
        if let Some(t) = &self.template {
            crate::domain::custom_page::check_path(t).map_err(|m| ("template", m))?;
        }
        if self.max_session_secs > 7 * 86_400 {
            return Err(("max_session_secs", "must be at most 604800".into()));
        }
        if self.renew_on_activity && self.max_session_secs < self.session_ttl_secs {
            return Err((
                "max_session_secs",
                "must be at least session_ttl_secs when renew_on_activity is on".into(),
            ));
        }
        webhook::check_room(self)?;
        outflow::check_room(self)?;
        self.check_schedule()?;
        if let Err(message) = crate::domain::entry::EntryKey::from_room(self) {
            return Err(("entry", message));
        }
        // Origins go into a CSP header and are compared exactly with postMessage origins:
        // exact origins only (a `*` would become a CSP wildcard).
        for o in &self.embed_origins {
            match url::Url::parse(o) {
                Ok(u)
                    if (u.scheme() == "http" || u.scheme() == "https")
                        && !o.contains('*')
                        && u.origin().ascii_serialization() == o.trim_end_matches('/') => {}
                _ => {
                    return Err((
                        "embed_origins",
                        "must list exact origins like https://shop.example (scheme, host, optional port; no wildcards)"
                            .into(),
                    ))
                }
            }
        }
        Ok(())
    }

    /// The scheduled event's times and overrides.
    fn check_schedule(&self) -> Result<(), (&'static str, String)> {
        if self.prequeue_opens_at.is_some() && self.opens_at.is_none() {
            return Err((
                "prequeue_opens_at",
                "needs opens_at (the pre-queue is shuffled then)".into(),
            ));
        }
        if let (Some(pq), Some(open)) = (self.prequeue_opens_at, self.opens_at) {
            if open < pq {
                return Err(("opens_at", "must not be before prequeue_opens_at".into()));
            }
        }
        if let Some(close) = self.closes_at {
            if self.opens_at.is_some_and(|open| close <= open)
                || self.prequeue_opens_at.is_some_and(|pq| close <= pq)
            {
                return Err(("closes_at", "must be after opens_at".into()));
            }
        }
        let overrides = [
            ("event_capacity", self.event_capacity),
            ("event_session_ttl_secs", self.event_session_ttl_secs),
            (
                "event_max_admissions_per_minute",
                self.event_max_admissions_per_minute,
            ),
        ];
        for (field, v) in overrides {
            if v.is_some() && self.opens_at.is_none() {
                return Err((
                    field,
                    "needs opens_at (it applies from opens_at to closes_at)".into(),
                ));
            }
        }
        if self
            .event_capacity
            .is_some_and(|c| c == 0 || c > 10_000_000)
        {
            return Err(("event_capacity", "must be between 1 and 10000000".into()));
        }
        if self
            .event_session_ttl_secs
            .is_some_and(|t| t == 0 || t > 7 * 86_400)
        {
            return Err((
                "event_session_ttl_secs",
                "must be between 1 and 604800".into(),
            ));
        }
        if self
            .event_max_admissions_per_minute
            .is_some_and(|r| r > 1_000_000)
        {
            return Err((
                "event_max_admissions_per_minute",
                "must be at most 1000000".into(),
            ));
        }
        Ok(())
    }

    /// `(capacity, session_ttl_secs, max_admissions_per_minute)` in force at `now` (ms):
    /// the event's overrides between `opens_at` and `closes_at`, else the room's own.
    pub fn effective_limits(&self, now: u64) -> (u64, u64, u64) {
        if schedule::overrides_apply(now, self.opens_at, self.closes_at) {
            (
                self.event_capacity.unwrap_or(self.capacity),
                self.event_session_ttl_secs.unwrap_or(self.session_ttl_secs),
                self.event_max_admissions_per_minute
                    .unwrap_or(self.max_admissions_per_minute),
            )
        } else {
            (
                self.capacity,
                self.session_ttl_secs,
                self.max_admissions_per_minute,
            )
        }
    }

    /// The display name (the id when no name is set).
    pub fn display_name(&self) -> &str {
        if self.name.is_empty() {
            &self.id
        } else {
            &self.name
        }
    }
}

/// A room's lanes: at most [`MAX_LANES`], unique names, each share 0.01–0.99 and all
/// together at most 0.99, so visitors without a lane always keep a share.
fn check_lanes(lanes: &[Lane]) -> Result<(), String> {
    if lanes.len() > MAX_LANES {
        return Err(format!("at most {MAX_LANES} lanes"));
    }
    let mut total = 0.0;
    for (i, l) in lanes.iter().enumerate() {
        let name_ok = !l.name.is_empty()
            && l.name.len() <= 32
            && l.name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !name_ok {
            return Err(format!("lanes[{i}].name must match [A-Za-z0-9_-]{{1,32}}"));
        }
        if lanes[..i].iter().any(|o| o.name == l.name) {
            return Err(format!("lanes[{i}].name \"{}\" is used twice", l.name));
        }
        if !(0.01..=0.99).contains(&l.share) {
            return Err(format!("lanes[{i}].share must be between 0.01 and 0.99"));
        }
        total += l.share;
    }
    if total > 0.99 + 1e-9 {
        return Err(format!(
            "the shares add up to {total:.2}; at most 0.99, so visitors without a lane keep a share"
        ));
    }
    Ok(())
}

/// The built-in defaults, the first configuration layer.
pub const DEFAULT_TOML: &str = include_str!("default.toml");

/// The built-in defaults, parsed once.
static DEFAULTS: LazyLock<Settings> = LazyLock::new(|| {
    // unwrap: default.toml is compiled in and parsed by a unit test.
    Figment::from(Toml::string(DEFAULT_TOML))
        .extract()
        .expect("the built-in default.toml is valid")
});

impl Default for Settings {
    fn default() -> Self {
        DEFAULTS.clone()
    }
}

/// Each section's default is its part of `default.toml`.
macro_rules! default_from_toml {
    ($($ty:ty => $field:ident),* $(,)?) => {$(
        impl Default for $ty {
            fn default() -> Self {
                DEFAULTS.$field.clone()
            }
        }
    )*};
}

default_from_toml! {
    StoreSettings => store,
    RateLimitSettings => rate_limit,
    ReaperSettings => reaper,
    AdminSettings => admin,
    RoomConfig => room_defaults,
    WebhookSettings => webhooks,
}

/// Top-level settings that `ANTEROOM_*` variables may set: the fields of [`Settings`].
fn env_keys() -> Vec<String> {
    // unwrap: the settings always serialise to a map.
    match serde_json::to_value(Settings::default()).unwrap() {
        serde_json::Value::Object(m) => m.keys().cloned().collect(),
        _ => Vec::new(),
    }
}

/// Fills each `[[rooms]]` entry's missing keys from `[room_defaults]`.
fn rooms_with_defaults(fig: &Figment) -> Result<Option<Vec<Value>>, Box<figment::Error>> {
    let rooms: Option<Vec<Value>> = fig.extract_inner("rooms").ok();
    let Some(rooms) = rooms else {
        return Ok(None);
    };
    let defaults: Dict = fig.extract_inner("room_defaults").map_err(Box::new)?;
    Ok(Some(
        rooms
            .into_iter()
            .map(|room| match room {
                Value::Dict(tag, mut d) => {
                    for (k, v) in &defaults {
                        match (d.get_mut(k), v) {
                            // A table the room sets in part (`[rooms.outflow]`) takes
                            // its other keys from the defaults' table.
                            (Some(Value::Dict(_, inner)), Value::Dict(_, dv)) => {
                                for (ik, iv) in dv {
                                    inner.entry(ik.clone()).or_insert_with(|| iv.clone());
                                }
                            }
                            (Some(_), _) => {}
                            (None, _) => {
                                d.insert(k.clone(), v.clone());
                            }
                        }
                    }
                    Value::Dict(tag, d)
                }
                other => other,
            })
            .collect(),
    ))
}

/// A configuration problem, naming the field.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("configuration: {0}")]
    Load(#[from] Box<figment::Error>),
    #[error("configuration: `{field}` {message}")]
    Invalid { field: String, message: String },
}

impl Settings {
    /// Loads defaults, then the TOML file (if any), then `ANTEROOM_*` variables.
    pub fn load(config_path: Option<&Path>) -> Result<Self, ConfigError> {
        let mut fig = Figment::from(Toml::string(DEFAULT_TOML));
        if let Some(path) = config_path {
            if !path.exists() {
                return Err(ConfigError::Invalid {
                    field: "config".into(),
                    message: format!("file {} does not exist", path.display()),
                });
            }
            fig = fig.merge(Toml::file(path));
        }
        // Only variables naming a setting are read, so an unrelated ANTEROOM_* variable
        // in the environment never stops the server.
        let keys = env_keys();
        fig = fig.merge(
            Env::prefixed("ANTEROOM_")
                .filter(move |k| {
                    let top = k.as_str().split("__").next().unwrap_or("");
                    keys.iter().any(|e| top.eq_ignore_ascii_case(e))
                })
                .split("__"),
        );
        if let Some(rooms) = rooms_with_defaults(&fig)? {
            fig = fig.merge(Serialized::default("rooms", rooms));
        }
        let mut settings: Settings = fig.extract().map_err(Box::new)?;
        settings.apply_defaults();
        settings.validate()?;
        Ok(settings)
    }

    /// Fills values that depend on other values (the demo room, the public URL).
    pub fn apply_defaults(&mut self) {
        if self.redis_url.as_deref() == Some("") {
            self.redis_url = None;
        }
        if self.rooms.is_empty() && self.demo {
            self.rooms.push(RoomConfig {
                id: "demo".into(),
                name: "Anteroom demo".into(),
                capacity: 2,
                session_ttl_secs: 60,
                heartbeat_timeout_secs: 60,
                target_url: String::new(), // filled in from the public URL at start
                ..self.room_defaults.clone()
            });
        }
    }

    /// Checks every range; the error names the offending field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |field: &str, message: &str| ConfigError::Invalid {
            field: field.into(),
            message: message.into(),
        };
        if self.listen.parse::<SocketAddr>().is_err() {
            return Err(invalid("listen", "must be an address like 127.0.0.1:8080"));
        }
        // The languages first: the rooms' `languages` are checked against them.
        if let Some(dir) = &self.i18n_dir {
            let catalog = crate::domain::i18n::catalog::Catalog::load(Some(dir))
                .map_err(|e| invalid("i18n_dir", &e.to_string()))?;
            crate::domain::i18n::catalog::install(catalog);
        }
        if let Some(url) = &self.redis_url {
            let ok = [
                "redis://",
                "redis+cluster://",
                "redis+unix://",
                "redis+sentinel://",
            ]
            .iter()
            .any(|p| url.starts_with(p));
            if !ok {
                return Err(invalid(
                    "redis_url",
                    "must start with redis://, redis+cluster://, redis+sentinel:// or redis+unix:// (TLS is not built in; terminate it with a local proxy such as stunnel)",
                ));
            }
            if url.starts_with("redis+sentinel://") {
                sentinel_url::parse_url(url).map_err(|m| invalid("redis_url", &m))?;
            }
        }
        self.trusted_proxy_nets()?;
        crate::domain::bypass::Bypass::from_rules(&self.bypass)?;
        self.gateway.validate(&self.listen)?;
        self.webhooks.validate()?;
        // The certificates are read here too, so a bad file stops start-up naming it.
        for paths in [self.tls()?, self.gateway.tls()?].into_iter().flatten() {
            crate::tls::load(&paths)?;
        }
        if self.key_prefix.is_empty() || self.key_prefix.contains(['{', '}', ' ']) {
            return Err(invalid(
                "key_prefix",
                "must be non-empty, without braces or spaces",
            ));
        }
        if let Some(url) = &self.public_url {
            if url::Url::parse(url).is_err() {
                return Err(invalid("public_url", "must be an absolute URL"));
            }
        }
        if self.rate_limit.visitor_window_secs == 0 {
            return Err(invalid(
                "rate_limit.visitor_window_secs",
                "must be at least 1",
            ));
        }
        // Lua's unpack() is bounded by its C stack (~8000 values), so batches stay small.
        if self.reaper.batch_size == 0 || self.reaper.batch_size > 5000 {
            return Err(invalid("reaper.batch_size", "must be between 1 and 5000"));
        }
        if self.reaper.interval_ms < 10 {
            return Err(invalid("reaper.interval_ms", "must be at least 10"));
        }
        if self.reaper.keeper_interval_ms < 10 {
            return Err(invalid("reaper.keeper_interval_ms", "must be at least 10"));
        }
        if self.reaper.hidden_grace_secs > 86_400 {
            return Err(invalid("reaper.hidden_grace_secs", "must be at most 86400"));
        }
        if self.reaper.promote_interval_ms < 10 {
            return Err(invalid("reaper.promote_interval_ms", "must be at least 10"));
        }
        if self.store.response_timeout_ms == 0 {
            return Err(invalid("store.response_timeout_ms", "must be at least 1"));
        }
        if self.store.restore_hold_ms > 60_000 {
            return Err(invalid("store.restore_hold_ms", "must be at most 60000"));
        }
        if self.store.fail_open_pass_secs == 0 || self.store.fail_open_pass_secs > 3600 {
            return Err(invalid(
                "store.fail_open_pass_secs",
                "must be between 1 and 3600",
            ));
        }
        if self.store.connect_timeout_ms == 0 {
            return Err(invalid("store.connect_timeout_ms", "must be at least 1"));
        }
        self.admin.validate()?;
        let mut seen = std::collections::HashSet::new();
        for (i, room) in self.rooms.iter().enumerate() {
            if !seen.insert(room.id.as_str()) {
                return Err(invalid(&format!("rooms[{i}].id"), "is a duplicate"));
            }
            // The demo room's target is filled in at start.
            if room.target_url.is_empty() && self.demo && room.id == "demo" {
                continue;
            }
            room.check()
                .map_err(|(field, message)| ConfigError::Invalid {
                    field: format!("rooms[{i}].{field}"),
                    message,
                })?;
            // A custom template is read and parsed now: a syntax error stops start-up
            // naming the file and line.
            crate::domain::custom_page::check_room(self, room).map_err(|message| {
                ConfigError::Invalid {
                    field: format!("rooms[{i}].template"),
                    message,
                }
            })?;
        }
        Ok(())
    }

    /// `trusted_proxies` parsed (a plain address is a /32 or /128).
    pub fn trusted_proxy_nets(&self) -> Result<Vec<ipnet::IpNet>, ConfigError> {
        self.trusted_proxies
            .iter()
            .enumerate()
            .map(|(i, p)| {
                p.parse::<ipnet::IpNet>()
                    .or_else(|_| p.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
                    .map_err(|_| ConfigError::Invalid {
                        field: format!("trusted_proxies[{i}]"),
                        message: "must be an address or a CIDR network like 10.0.0.0/8".into(),
                    })
            })
            .collect()
    }

    /// The main listener's certificate files (`tls_cert`, `tls_key`): both or neither.
    pub fn tls(&self) -> Result<Option<crate::tls::CertPaths>, ConfigError> {
        crate::tls::CertPaths::from_pair(
            self.tls_cert.as_ref(),
            self.tls_key.as_ref(),
            "tls_cert",
            "tls_key",
        )
    }

    /// The base URL visitors reach this server at (`https://` when the listener serves
    /// TLS and no `public_url` is set).
    pub fn public_base(&self, bound: SocketAddr) -> String {
        match &self.public_url {
            Some(u) => u.trim_end_matches('/').to_string(),
            None if self.tls_cert.is_some() => format!("https://{bound}"),
            None => format!("http://{bound}"),
        }
    }
}

#[cfg(test)]
mod tests;
