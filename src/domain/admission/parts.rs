//! Building the engine ([`Engine::new`] from [`EngineParts`]) and the read access the
//! layers above the domain have to its parts: its fields are the domain's alone, and the
//! store is reached by role ([`Engine::line_store`], [`Engine::recovery_store`], …).

use std::sync::Arc;

use super::Engine;
use crate::config::Settings;
use crate::domain::forecast::Forecasts;
use crate::domain::identity::VisitorSigner;
use crate::domain::pass::PassKeys;
use crate::domain::ratelimit::IpLimiter;
use crate::metrics::Metrics;
use crate::store::Store;

/// What start-up hands the engine, the settings' parsed values among them (parsed once, by
/// start-up's check); the rest (limiters, ledgers, caches) the engine builds itself.
pub struct EngineParts {
    pub store: Arc<dyn Store>,
    pub passes: PassKeys,
    pub visitors: VisitorSigner,
    pub metrics: Metrics,
    pub settings: Settings,
    /// Set `Secure` on cookies (TLS deployments).
    pub secure_cookies: bool,
    /// Base URL visitors reach this server at, without a trailing slash.
    pub public_base: String,
    /// This instance's name in leases and socket reports (`<addr>-<random>`).
    pub instance: String,
    /// The rooms declared in the configuration, as seeded.
    pub declared_rooms: Vec<crate::room::RoomConfig>,
    /// `trusted_proxies`, parsed.
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// The `[[bypass]]` rules, parsed.
    pub bypass: crate::domain::bypass::Bypass,
    /// The declared rooms' entry keys, parsed by start-up's check (others are parsed on
    /// their first token check).
    pub entry_keys: crate::domain::entry::EntryKeys,
}

impl Engine {
    /// Builds the engine from its parts (nothing left to parse or to fail).
    pub fn new(p: EngineParts) -> Self {
        Engine {
            ip_limiter: IpLimiter::new(&p.settings.rate_limit),
            trusted_proxies: p.trusted_proxies,
            bypass: p.bypass,
            data_lost_at: Default::default(),
            data_losses: Default::default(),
            known_epoch: Default::default(),
            known_sessions: Default::default(),
            ended: Default::default(),
            forecasts: Default::default(),
            room_cache: Default::default(),
            entry_keys: p.entry_keys,
            pow: p.visitors.pow_keys(),
            line_views: crate::domain::line_view::LineViews::new(p.settings.store.local_status),
            presented: Default::default(),
            revoked: Default::default(),
            store: p.store,
            passes: p.passes,
            visitors: p.visitors,
            metrics: p.metrics,
            settings: p.settings,
            secure_cookies: p.secure_cookies,
            public_base: p.public_base,
            instance: p.instance,
            declared_rooms: p.declared_rooms,
        }
    }
}

/// Read access for the layers above the domain: the hub, the tasks and the doors use
/// these; only the domain changes an engine's parts.
impl Engine {
    pub fn passes(&self) -> &PassKeys {
        &self.passes
    }
    pub fn visitors(&self) -> &VisitorSigner {
        &self.visitors
    }
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }
    pub fn ip_limiter(&self) -> &IpLimiter {
        &self.ip_limiter
    }
    pub fn settings(&self) -> &Settings {
        &self.settings
    }
    pub fn secure_cookies(&self) -> bool {
        self.secure_cookies
    }
    pub fn public_base(&self) -> &String {
        &self.public_base
    }
    pub fn instance(&self) -> &String {
        &self.instance
    }
    pub fn trusted_proxies(&self) -> &Vec<ipnet::IpNet> {
        &self.trusted_proxies
    }
    pub fn bypass(&self) -> &crate::domain::bypass::Bypass {
        &self.bypass
    }
    pub fn declared_rooms(&self) -> &Vec<crate::room::RoomConfig> {
        &self.declared_rooms
    }
    pub fn data_losses(&self) -> &std::sync::atomic::AtomicU64 {
        &self.data_losses
    }
    pub fn known_epoch(&self) -> &std::sync::Mutex<Option<String>> {
        &self.known_epoch
    }
    pub fn known_sessions(&self) -> &crate::domain::known_sessions::KnownSessions {
        &self.known_sessions
    }
    pub fn ended(&self) -> &crate::domain::ended::EndedLedger {
        &self.ended
    }
    pub fn forecasts(&self) -> &Forecasts {
        &self.forecasts
    }
    pub fn pow(&self) -> &crate::domain::pow::PowKeys {
        &self.pow
    }
    pub fn line_views(&self) -> &crate::domain::line_view::LineViews {
        &self.line_views
    }
    /// The revoked passes (shared with the gateway and the poller that fills it).
    pub fn revoked(&self) -> &Arc<crate::domain::revoked::RevokedSet> {
        &self.revoked
    }
    /// The whole store, for a task that owns a handle to it (the loops, the hub's
    /// spawned claims, the revocation poller).
    pub fn shared_store(&self) -> Arc<dyn Store> {
        self.store.clone()
    }
    pub fn room_store(&self) -> &dyn crate::store::RoomStore {
        self.store.as_ref()
    }
    pub fn admission_store(&self) -> &dyn crate::store::AdmissionStore {
        self.store.as_ref()
    }
    pub fn line_store(&self) -> &dyn crate::store::LineStore {
        self.store.as_ref()
    }
    pub fn admin_store(&self) -> &dyn crate::store::AdminStore {
        self.store.as_ref()
    }
    pub fn recovery_store(&self) -> &dyn crate::store::RecoveryStore {
        self.store.as_ref()
    }
    pub fn event_store(&self) -> &dyn crate::store::EventStore {
        self.store.as_ref()
    }
    pub fn lease_store(&self) -> &dyn crate::store::LeaseStore {
        self.store.as_ref()
    }
    pub fn fairness_store(&self) -> &dyn crate::store::FairnessStore {
        self.store.as_ref()
    }
    pub fn revocation_store(&self) -> &dyn crate::store::RevocationStore {
        self.store.as_ref()
    }
    pub fn outflow_store(&self) -> &dyn crate::store::OutflowStore {
        self.store.as_ref()
    }
}
