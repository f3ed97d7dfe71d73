//! Builds the application from settings: store, keys, rooms, HTTP server and background
//! tasks. `Application::build` binds its own listener so tests can pass port 0.

use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use rand::RngCore;
use tokio_util::sync::CancellationToken;

use crate::config::Settings;
use crate::domain::admission::{Engine, EngineParts};
use crate::domain::identity::VisitorSigner;
use crate::domain::pass::PassKeys;
use crate::hub::HubHandle;
use crate::metrics::Metrics;
use crate::preflight::Prepared;
use crate::reaper::{run_promoter, run_reaper};
use crate::room::RoomConfig;
use crate::store::memory::MemoryStore;
use crate::store::redis::RedisStore;
use crate::store::Store;
use crate::tls::{Certificates, ReloadingCert};

pub struct Application {
    port: u16,
    server: crate::web::Server,
    engine: Arc<Engine>,
    hub: HubHandle,
    cancel: CancellationToken,
    /// The gateway, when `[gateway]` sets `listen`.
    gateway: Option<crate::gateway::Running>,
    /// The certificates the listeners serve (none without TLS): what SIGHUP reloads.
    certificates: Certificates,
    /// Every task shutdown waits for: reaper, promoter, keeper, limiter pruning, the hub
    /// and its admission subscription.
    background: Vec<tokio::task::JoinHandle<()>>,
}

/// Opens the configured store.
pub async fn open_store(settings: &Settings) -> anyhow::Result<Arc<dyn Store>> {
    Ok(match &settings.redis_url {
        Some(url) => Arc::new(
            RedisStore::connect(url, &settings.key_prefix, &settings.store)
                .await
                .with_context(|| format!("redis_url: cannot connect to Redis at {url}"))?,
        ),
        None => Arc::new(MemoryStore::new()),
    })
}

/// The rooms the configuration declares, as they are seeded: the demo room's target and
/// embed origins filled in from the address this server listens on.
fn declared_rooms(settings: &Settings, base: &str, port: u16) -> Vec<RoomConfig> {
    let mut rooms = settings.rooms.clone();
    for r in &mut rooms {
        if r.target_url.is_empty() {
            r.target_url = format!("{base}/demo/origin");
        }
        // The demo host page is opened as http://localhost:PORT/demo/host: another site
        // than 127.0.0.1, so the embed is really cross-site.
        if settings.demo && r.id == "demo" && r.embed_origins.is_empty() {
            r.embed_origins = vec![
                format!("http://localhost:{port}"),
                format!("http://127.0.0.1:{port}"),
            ];
        }
    }
    rooms
}

impl Application {
    /// Builds from settings that were not put through [`Settings::check`]: the values
    /// start-up uses are parsed here ([`Settings::prepare`]), the rest is taken as given.
    pub async fn build(settings: Settings) -> anyhow::Result<Self> {
        let prepared = settings.prepare()?;
        Self::build_prepared(settings, prepared).await
    }

    /// Builds from checked settings and what the check parsed
    /// ([`Settings::load_prepared`]): nothing of it is parsed or read again.
    pub async fn build_prepared(settings: Settings, prepared: Prepared) -> anyhow::Result<Self> {
        let store = open_store(&settings).await?;
        Self::build_with_store_prepared(settings, prepared, store).await
    }

    /// Like `build`, with a store made by the caller (tests inject a clocked memory store).
    pub async fn build_with_store(
        settings: Settings,
        store: Arc<dyn Store>,
    ) -> anyhow::Result<Self> {
        let prepared = settings.prepare()?;
        Self::build_with_store_prepared(settings, prepared, store).await
    }

    /// Like `build_prepared`, with a store made by the caller.
    pub async fn build_with_store_prepared(
        settings: Settings,
        prepared: Prepared,
        store: Arc<dyn Store>,
    ) -> anyhow::Result<Self> {
        let Prepared {
            trusted_proxies,
            bypass,
            main_cert,
            gateway_cert,
            entry_keys,
        } = prepared;
        // Every store call of the application is timed (anteroom_store_call_seconds).
        let metrics = Metrics::new();
        let store: Arc<dyn Store> = Arc::new(crate::store::timed::Timed::new(
            store,
            metrics.store_latency.clone(),
        ));
        // The certificates were loaded by the check (a bad file stopped start-up there,
        // before anything was bound).
        let mut certificates = Certificates::default();
        for c in main_cert.iter().chain(&gateway_cert) {
            certificates.push(c.clone());
        }
        let listener = TcpListener::bind(&settings.listen)
            .with_context(|| format!("binding {}", settings.listen))?;
        let addr = listener.local_addr()?;
        let base = settings.public_base(addr);

        let passes = match &settings.signing_key {
            Some(k) => PassKeys::from_base64(k.expose())?,
            None => {
                let (keys, seed) = PassKeys::generate();
                tracing::warn!(
                    signing_key = %seed,
                    "no signing_key configured: generated one for this process; set ANTEROOM_SIGNING_KEY to keep passes valid across restarts and instances"
                );
                keys
            }
        };
        let visitors = match &settings.secret_key {
            Some(k) if !k.is_empty() => VisitorSigner::new(k.expose().as_bytes()),
            _ => {
                let mut key = [0u8; 32];
                rand::thread_rng().fill_bytes(&mut key);
                tracing::warn!(
                    "no secret_key configured: visitor ids are signed with a per-process key (set ANTEROOM_SECRET_KEY for several instances)"
                );
                VisitorSigner::new(&key)
            }
        };

        let cancel = CancellationToken::new();
        let declared = declared_rooms(&settings, &base, addr.port());
        // Seed the declared rooms now (create-only: a room already in the store keeps its
        // live configuration); the keeper retries every second if the store is down.
        let mut known_epoch = None;
        if let Err(e) =
            crate::keeper::keep_once(store.as_ref(), &declared, &mut known_epoch, 0).await
        {
            tracing::warn!(error = %e, "could not seed rooms yet; the keeper retries (reaper.keeper_interval_ms)");
        }

        let holder = format!(
            "{}-{}",
            addr,
            &crate::domain::identity::VisitorId::random().as_str()[..8]
        );
        let secure_cookies = settings
            .secure_cookies
            .unwrap_or_else(|| base.starts_with("https://") || main_cert.is_some());
        let engine = Arc::new(Engine::new(EngineParts {
            store: store.clone(),
            passes,
            visitors,
            metrics,
            settings: settings.clone(),
            secure_cookies,
            public_base: base.clone(),
            instance: holder.clone(),
            declared_rooms: declared,
            trusted_proxies,
            bypass,
            entry_keys,
        }));
        // A first look at the live sessions and at what ended (the last minute of
        // releases, the last flush) before the first request: what ended before this
        // instance started is known to it from the start (domain::ended).
        if known_epoch.is_some() {
            crate::keeper::list_sessions(&engine, &known_epoch).await;
        }

        let mut background = vec![
            tokio::spawn(run_reaper(
                store.clone(),
                holder,
                settings.reaper.clone(),
                engine.metrics().clone(),
                cancel.clone(),
            )),
            tokio::spawn(run_promoter(
                store.clone(),
                settings.reaper.clone(),
                engine.metrics().clone(),
                cancel.clone(),
            )),
        ];
        {
            let limiter = engine.ip_limiter().clone();
            let cancel = cancel.clone();
            background.push(tokio::spawn(async move {
                let mut tick = tokio::time::interval(Duration::from_secs(10));
                loop {
                    tokio::select! {
                        _ = cancel.cancelled() => break,
                        _ = tick.tick() => limiter.prune(),
                    }
                }
            }));
        }

        background.push(tokio::spawn(crate::webhook::run_deliverer(
            crate::webhook::Deliverer::new(
                store.clone(),
                engine.instance().clone(),
                settings.webhooks.clone(),
                engine.metrics().clone(),
            )?,
            cancel.clone(),
        )));
        background.push(tokio::spawn(crate::drops::run_drops(
            engine.clone(),
            engine.instance().clone(),
            settings.reaper.lease_ms,
            cancel.clone(),
        )));
        background.push(tokio::spawn(crate::keeper::run_keeper(
            engine.clone(),
            known_epoch,
            cancel.clone(),
        )));
        // What this instance's gateway measures of the origin, per room; the outflow task
        // reports it and runs the adaptive rooms' controllers (docs/outflow.md).
        let meter = Arc::new(crate::domain::outflow::OriginMeter::default());
        background.push(tokio::spawn(crate::outflow::run_outflow(
            engine.clone(),
            meter.clone(),
            cancel.clone(),
        )));
        // The revocation log, read for the gateway (which checks passes without the store)
        // and for the statuses answered here (an admitted one only for a session not in
        // it, domain::line_view).
        if settings.gateway.listen.is_some() || settings.store.local_status {
            background.push(tokio::spawn(crate::domain::revoked::run_poller(
                engine.shared_store(),
                engine.revoked().clone(),
                cancel.clone(),
            )));
        }
        let (hub, hub_tasks) = crate::hub::start(engine.clone(), cancel.clone());
        background.extend(hub_tasks);
        let main_tls = match main_cert
            .map(|c| crate::tls::server_config(c, &[]))
            .transpose()
        {
            Ok(t) => t,
            Err(e) => {
                cancel.cancel();
                return Err(e);
            }
        };
        let server =
            match crate::web::serve(listener, &settings, engine.clone(), hub.clone(), main_tls) {
                Ok(s) => s,
                Err(e) => {
                    cancel.cancel();
                    return Err(e);
                }
            };
        let gateway = match start_gateway(&settings, gateway_cert, &engine, meter, &cancel) {
            Ok(g) => g,
            Err(e) => {
                cancel.cancel();
                return Err(e);
            }
        };

        tracing::info!(%base, store = if settings.redis_url.is_some() { "redis" } else { "memory" }, tls = settings.tls_cert.is_some(), "anteroom listening");
        Ok(Self {
            port: addr.port(),
            server,
            engine,
            hub,
            cancel,
            gateway,
            certificates,
            background,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The gateway's port, when it runs.
    pub fn gateway_port(&self) -> Option<u16> {
        self.gateway.as_ref().map(|g| g.port)
    }

    /// The shared engine (tests reach the store and keys through it).
    pub fn engine(&self) -> Arc<Engine> {
        self.engine.clone()
    }

    /// The certificates the listeners serve; [`Certificates::reload`] is what SIGHUP
    /// calls (`main.rs`), and what tests call.
    pub fn certificates(&self) -> Certificates {
        self.certificates.clone()
    }

    /// Reads `i18n_dir` again on every SIGHUP (`main.rs`); nothing to do without one.
    pub fn reload_languages_on_sighup(
        &self,
        shutdown: CancellationToken,
    ) -> impl std::future::Future<Output = ()> + Send + 'static {
        let dir = self.engine.settings().i18n_dir.clone();
        async move {
            match dir {
                Some(dir) => crate::domain::i18n::catalog::reload_on_sighup(dir, shutdown).await,
                None => shutdown.cancelled().await,
            }
        }
    }

    /// The WebSocket hub (tests read its counters).
    pub fn hub(&self) -> HubHandle {
        self.hub.clone()
    }

    /// Serves until the server stops or `shutdown` is cancelled, then stops the
    /// background tasks.
    pub async fn run_until_stopped(self, shutdown: CancellationToken) -> anyhow::Result<()> {
        let result = self
            .server
            .run_until(shutdown)
            .await
            .map_err(anyhow::Error::from);
        self.cancel.cancel();
        if let Some(g) = self.gateway {
            g.stopped().await;
        }
        for t in self.background {
            let _ = t.await;
        }
        result
    }
}

/// Binds and starts the gateway beside the main server when `[gateway]` sets `listen`
/// (the revocation poller it reads is among the background tasks).
fn start_gateway(
    settings: &Settings,
    cert: Option<Arc<ReloadingCert>>,
    engine: &Arc<Engine>,
    meter: Arc<crate::domain::outflow::OriginMeter>,
    cancel: &CancellationToken,
) -> anyhow::Result<Option<crate::gateway::Running>> {
    let Some(listen) = &settings.gateway.listen else {
        return Ok(None);
    };
    let listener =
        TcpListener::bind(listen).with_context(|| format!("gateway.listen: binding {listen}"))?;
    let revoked = engine.revoked().clone();
    let tls = cert
        .map(|c| {
            crate::tls::server_config(c, &[crate::tls::ALPN_H2, crate::tls::ALPN_HTTP11])
                .map(|config| tokio_rustls::TlsAcceptor::from(Arc::new(config)))
        })
        .transpose()?;
    crate::gateway::start(
        listener,
        &settings.gateway,
        tls,
        engine.clone(),
        revoked,
        meter,
        settings.workers,
        cancel.clone(),
    )
    .map(Some)
}
