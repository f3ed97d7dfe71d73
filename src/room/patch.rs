//! A partial change to a room's settings, as the admin API sends it and the store writes
//! it (one row per field in `store/redis/cfg_hash.rs`).

use serde::{Deserialize, Serialize};

use super::RoomConfig;

/// A partial change to a room's configuration (admin). `None` leaves a field as it is.
/// Stock is changed separately (the store's `StockChange`), atomically with admissions.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RoomPatch {
    pub name: Option<String>,
    pub capacity: Option<u64>,
    pub max_admissions_per_minute: Option<u64>,
    pub session_ttl_secs: Option<u64>,
    pub heartbeat_timeout_secs: Option<u64>,
    pub target_url: Option<String>,
    pub paused: Option<bool>,
    pub closed: Option<bool>,
    pub mode: Option<super::QueueMode>,
    pub queue_all: Option<bool>,
    pub embed_origins: Option<Vec<String>>,
    pub entry: Option<super::EntryMode>,
    /// `""` removes the key.
    pub entry_secret: Option<super::Secret>,
    /// `""` removes the key.
    pub entry_public_key: Option<String>,
    pub challenge: Option<super::ChallengeMode>,
    pub pow_max_number: Option<u64>,
    pub max_places_per_ip: Option<u64>,
    /// `[]` removes the lanes (visitors already in a lane keep their places).
    pub lanes: Option<Vec<super::Lane>>,
    pub renew_on_activity: Option<bool>,
    pub max_session_secs: Option<u64>,
    /// `""` removes the webhook.
    pub webhook_url: Option<String>,
    /// `""` removes the secret.
    pub webhook_secret: Option<super::WebhookSecret>,
    /// RFC 3339 in JSON; `""` removes the time.
    #[serde(default, deserialize_with = "super::schedule::patch_time")]
    #[schema(value_type = Option<String>)]
    pub prequeue_opens_at: Option<Option<u64>>,
    #[serde(default, deserialize_with = "super::schedule::patch_time")]
    #[schema(value_type = Option<String>)]
    pub opens_at: Option<Option<u64>>,
    #[serde(default, deserialize_with = "super::schedule::patch_time")]
    #[schema(value_type = Option<String>)]
    pub closes_at: Option<Option<u64>>,
    /// 0 removes the override.
    pub event_capacity: Option<u64>,
    /// 0 removes the override.
    pub event_session_ttl_secs: Option<u64>,
    /// 0 removes the override (use the room's own cap; to lift the cap during the
    /// event, set the room's `max_admissions_per_minute` to 0).
    pub event_max_admissions_per_minute: Option<u64>,
    /// The keys of `[rooms.outflow]` to change (docs/outflow.md).
    pub outflow: Option<super::outflow::OutflowPatch>,
    /// 0 turns no-show reclaim off.
    pub claim_timeout_secs: Option<u64>,
    /// The whole `[rooms.brand]` table, replacing the room's (`{}` removes the branding).
    pub brand: Option<super::brand::Brand>,
    /// A path inside `template_dir`; `""` goes back to the built-in page.
    pub template: Option<String>,
    /// The languages the page's switch lists; `[]` lists every language the instance serves.
    pub languages: Option<Vec<String>>,
    /// `""` goes back to negotiating from the browser alone.
    pub default_language: Option<String>,
}

impl RoomPatch {
    /// The configuration with this patch applied.
    pub fn applied_to(&self, cfg: &RoomConfig) -> RoomConfig {
        let mut c = cfg.clone();
        if let Some(v) = &self.name {
            c.name = v.clone();
        }
        if let Some(v) = self.capacity {
            c.capacity = v;
        }
        if let Some(v) = self.max_admissions_per_minute {
            c.max_admissions_per_minute = v;
        }
        if let Some(v) = self.session_ttl_secs {
            c.session_ttl_secs = v;
        }
        if let Some(v) = self.heartbeat_timeout_secs {
            c.heartbeat_timeout_secs = v;
        }
        if let Some(v) = &self.target_url {
            c.target_url = v.clone();
        }
        if let Some(v) = self.paused {
            c.paused = v;
        }
        if let Some(v) = self.closed {
            c.closed = v;
        }
        if let Some(v) = self.mode {
            c.mode = v;
        }
        if let Some(v) = self.queue_all {
            c.queue_all = v;
        }
        if let Some(v) = &self.embed_origins {
            c.embed_origins = v.clone();
        }
        if let Some(v) = self.entry {
            c.entry = v;
        }
        if let Some(v) = &self.entry_secret {
            c.entry_secret = (!v.is_empty()).then(|| v.clone());
        }
        if let Some(v) = &self.entry_public_key {
            c.entry_public_key = (!v.is_empty()).then(|| v.clone());
        }
        if let Some(v) = self.challenge {
            c.challenge = v;
        }
        if let Some(v) = self.pow_max_number {
            c.pow_max_number = v;
        }
        if let Some(v) = self.max_places_per_ip {
            c.max_places_per_ip = v;
        }
        if let Some(v) = &self.lanes {
            c.lanes = v.clone();
        }
        if let Some(v) = self.renew_on_activity {
            c.renew_on_activity = v;
        }
        if let Some(v) = self.max_session_secs {
            c.max_session_secs = v;
        }
        if let Some(v) = &self.webhook_url {
            c.webhook_url = (!v.is_empty()).then(|| v.clone());
        }
        if let Some(v) = &self.webhook_secret {
            c.webhook_secret = (!v.is_empty()).then(|| v.clone());
        }
        if let Some(v) = self.prequeue_opens_at {
            c.prequeue_opens_at = v;
        }
        if let Some(v) = self.opens_at {
            c.opens_at = v;
        }
        if let Some(v) = self.closes_at {
            c.closes_at = v;
        }
        let nonzero = |v: u64| (v > 0).then_some(v);
        if let Some(v) = self.event_capacity {
            c.event_capacity = nonzero(v);
        }
        if let Some(v) = self.event_session_ttl_secs {
            c.event_session_ttl_secs = nonzero(v);
        }
        if let Some(v) = self.event_max_admissions_per_minute {
            c.event_max_admissions_per_minute = nonzero(v);
        }
        if let Some(p) = &self.outflow {
            c.outflow = p.applied_to(&c.outflow);
        }
        if let Some(v) = self.claim_timeout_secs {
            c.claim_timeout_secs = v;
        }
        if let Some(v) = &self.brand {
            c.brand = v.clone();
        }
        if let Some(v) = &self.template {
            c.template = nonempty_string(v);
        }
        if let Some(v) = &self.languages {
            c.languages = v.clone();
        }
        if let Some(v) = &self.default_language {
            c.default_language = nonempty_string(v);
        }
        c
    }

    pub fn is_empty(&self) -> bool {
        self == &RoomPatch::default()
    }
}

/// `""` as none (a patch's way of removing a text setting).
fn nonempty_string(v: &str) -> Option<String> {
    (!v.is_empty()).then(|| v.to_string())
}
