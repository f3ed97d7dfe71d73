//! The room model, the ground floor: a room's settings ([`RoomConfig`] and its parts),
//! its modes, the admin's partial change ([`RoomPatch`]), the limits a setting must keep
//! ([`MAX_STOCK`], [`MAX_LANES`]), the room-id rule and a scheduled event's phase.
//!
//! It imports nothing of Anteroom's own: the store writes these types, the domain
//! decides with them, `config` reads them from a file, the admin API from JSON. Each
//! check here needs the settings alone (`RoomConfig::check`); the checks that need the
//! instance (the languages it serves, an entry key that parses, a template file) are the
//! domain's (`domain::room_check`). A room's defaults are the `[room_defaults]` table of
//! `config/default.toml`, the one file every default is written in.

use std::sync::LazyLock;

use figment::providers::Format as _;
use serde::{Deserialize, Serialize};

pub mod brand;
mod check;
mod modes;
pub mod outflow;
mod patch;
pub mod redact;
pub mod schedule;
mod secret;
pub mod webhook;

pub use check::template_path;
pub use modes::{ChallengeMode, EntryMode, QueueMode};
pub use outflow::{OutflowConfig, OutflowMode, OutflowPatch};
pub use patch::RoomPatch;
pub use schedule::EventPhase;
pub use secret::Secret;
pub use webhook::WebhookSecret;

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

/// `[room_defaults]` of the built-in defaults (`config/default.toml`), parsed once.
static ROOM_DEFAULTS: LazyLock<RoomConfig> = LazyLock::new(|| {
    // unwrap: default.toml is compiled in and parsed by a unit test.
    figment::Figment::from(figment::providers::Toml::string(include_str!(
        "../config/default.toml"
    )))
    .extract_inner("room_defaults")
    .expect("the built-in [room_defaults] is valid")
});

impl Default for RoomConfig {
    fn default() -> Self {
        ROOM_DEFAULTS.clone()
    }
}
