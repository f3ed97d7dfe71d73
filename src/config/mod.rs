//! Typed configuration, loaded in layers: the built-in defaults (`default.toml` beside
//! this file, compiled in — the one place where every default is written, and the
//! annotated reference the docs show), then a TOML file (named by `--config PATH` or
//! `ANTEROOM_CONFIG`), then `ANTEROOM_…` environment variables (`__` separates nested
//! keys, e.g. `ANTEROOM_RATE_LIMIT__VISITOR_REQUESTS=60`).
//!
//! Each `[[rooms]]` entry starts from `[room_defaults]` (which a file may change too).
//! This struct tree documents every setting; `validate()` runs right after loading so a
//! bad value stops the process with a message naming the field.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use figment::providers::{Env, Format, Serialized, Toml};
use figment::value::{Dict, Value};
use figment::Figment;
use serde::{Deserialize, Serialize};

use crate::room::{RoomConfig, Secret};

mod admin;
mod gateway;
pub use admin::{AdminSettings, AdminUser, OidcSettings, Role, PASSWORD_USER, TOKEN_USER};
pub use gateway::{GatewayRoute, GatewaySettings};
pub(crate) mod webhook;
pub use webhook::WebhookSettings;
pub(crate) mod sentinel_url;

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

/// The two PEM files of one listener and the names of the settings they come from, so
/// every error names the field (`gateway.tls_cert`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CertPaths {
    /// The certificate chain, leaf first.
    pub cert: PathBuf,
    /// The private key (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
    /// The setting `cert` came from.
    pub cert_field: &'static str,
    /// The setting `key` came from.
    pub key_field: &'static str,
}

impl CertPaths {
    /// Both or neither of `cert` and `key`: `Ok(None)` for neither; one alone is an error
    /// naming the one that is missing.
    pub fn from_pair(
        cert: Option<&PathBuf>,
        key: Option<&PathBuf>,
        cert_field: &'static str,
        key_field: &'static str,
    ) -> Result<Option<Self>, ConfigError> {
        let missing = |field: &str, other: &str| ConfigError::Invalid {
            field: field.into(),
            message: format!("is required when {other} is set"),
        };
        match (cert, key) {
            (None, None) => Ok(None),
            (Some(_), None) => Err(missing(key_field, cert_field)),
            (None, Some(_)) => Err(missing(cert_field, key_field)),
            (Some(c), Some(k)) => Ok(Some(Self {
                cert: c.clone(),
                key: k.clone(),
                cert_field,
                key_field,
            })),
        }
    }
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
    /// Reads defaults, then the TOML file (if any), then `ANTEROOM_*` variables, and fills
    /// the values that depend on others; nothing is checked yet. `Settings::load`
    /// (`crate::preflight`) reads and then checks.
    pub fn read(config_path: Option<&Path>) -> Result<Self, ConfigError> {
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
    pub fn tls(&self) -> Result<Option<CertPaths>, ConfigError> {
        CertPaths::from_pair(
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
