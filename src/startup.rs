//! Builds the application from settings: store, keys, rooms, HTTP server and background
//! tasks. `Application::build` binds its own listener so tests can pass port 0.

use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use actix_web::dev::Server;
use actix_web::{web, App, HttpServer};
use anyhow::Context;
use rand::RngCore;
use tokio_util::sync::CancellationToken;

use crate::admission::Engine;
use crate::config::Settings;
use crate::error::{json_error_handler, path_error_handler, query_error_handler};
use crate::identity::VisitorSigner;
use crate::metrics::Metrics;
use crate::pass::PassKeys;
use crate::ratelimit::IpLimiter;
use crate::reaper::{run_promoter, run_reaper};
use crate::store::memory::MemoryStore;
use crate::store::redis::RedisStore;
use crate::store::Store;

pub struct Application {
    port: u16,
    server: Server,
    engine: web::Data<Engine>,
    hub: web::Data<crate::hub::HubHandle>,
    cancel: CancellationToken,
    background: Vec<tokio::task::JoinHandle<()>>,
}

/// Opens the configured store.
pub async fn open_store(settings: &Settings) -> anyhow::Result<Arc<dyn Store>> {
    Ok(match &settings.redis_url {
        Some(url) => Arc::new(
            RedisStore::connect(url, &settings.key_prefix, &settings.store)
                .await
                .with_context(|| format!("connecting to Redis at {url}"))?,
        ),
        None => Arc::new(MemoryStore::new()),
    })
}

/// Writes configured rooms that the store does not have yet. Retries in the background
/// if the store is down at start.
async fn seed_rooms(store: Arc<dyn Store>, settings: &Settings, base: &str, port: u16) {
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
    let attempt = {
        let store = store.clone();
        move |rooms: Vec<crate::config::RoomConfig>| {
            let store = store.clone();
            async move {
                for r in &rooms {
                    store.put_room(r, true).await?;
                }
                Ok::<_, crate::store::StoreError>(())
            }
        }
    };
    if let Err(e) = attempt(rooms.clone()).await {
        tracing::warn!(error = %e, "could not seed rooms yet; retrying in the background");
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_secs(1)).await;
                if attempt(rooms.clone()).await.is_ok() {
                    tracing::info!("rooms seeded");
                    break;
                }
            }
        });
    }
}

impl Application {
    pub async fn build(settings: Settings) -> anyhow::Result<Self> {
        let store = open_store(&settings).await?;
        Self::build_with_store(settings, store).await
    }

    /// Like `build`, with a store made by the caller (tests inject a clocked memory store).
    pub async fn build_with_store(
        settings: Settings,
        store: Arc<dyn Store>,
    ) -> anyhow::Result<Self> {
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

        seed_rooms(store.clone(), &settings, &base, addr.port()).await;

        let holder = format!(
            "{}-{}",
            addr,
            &crate::identity::VisitorId::random().as_str()[..8]
        );
        let admin = admin_auth(&settings)?;
        let secure_cookies = settings
            .secure_cookies
            .unwrap_or_else(|| base.starts_with("https://"));
        let engine = web::Data::new(Engine {
            store: store.clone(),
            passes,
            visitors,
            metrics: Metrics::new(),
            ip_limiter: IpLimiter::new(&settings.rate_limit),
            settings: settings.clone(),
            secure_cookies,
            public_base: base.clone(),
            instance: holder.clone(),
        });

        let cancel = CancellationToken::new();
        let mut background = vec![
            tokio::spawn(run_reaper(
                store.clone(),
                holder,
                settings.reaper.clone(),
                engine.metrics.clone(),
                cancel.clone(),
            )),
            tokio::spawn(run_promoter(
                store.clone(),
                settings.reaper.clone(),
                engine.metrics.clone(),
                cancel.clone(),
            )),
        ];
        {
            let limiter = engine.ip_limiter.clone();
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

        let hub = web::Data::new(crate::hub::start(engine.clone(), cancel.clone()));
        let data = engine.clone();
        let hub_data = hub.clone();
        let admin_data = admin.map(web::Data::new);
        let access_log = settings.access_log;
        let server = HttpServer::new(move || {
            let mut app = App::new();
            if let Some(a) = &admin_data {
                app = app.app_data(a.clone());
            }
            // The Logger runs a regex per request even when its lines are filtered out
            // (~4 % of CPU under load), so it is only installed when asked for.
            app.wrap(actix_web::middleware::Condition::new(
                access_log,
                tracing_actix(),
            ))
            .app_data(data.clone())
            .app_data(hub_data.clone())
            .app_data(web::JsonConfig::default().error_handler(json_error_handler))
            .app_data(web::QueryConfig::default().error_handler(query_error_handler))
            .app_data(web::PathConfig::default().error_handler(path_error_handler))
            .configure(crate::routes::configure)
        })
        .workers(if settings.workers == 0 {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        } else {
            settings.workers
        })
        .listen(listener)?
        .disable_signals()
        .run();

        tracing::info!(%base, store = if settings.redis_url.is_some() { "redis" } else { "memory" }, "anteroom listening");
        Ok(Self {
            port: addr.port(),
            server,
            engine,
            hub,
            cancel,
            background,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The shared engine (tests reach the store and keys through it).
    pub fn engine(&self) -> web::Data<Engine> {
        self.engine.clone()
    }

    /// The WebSocket hub (tests read its counters).
    pub fn hub(&self) -> web::Data<crate::hub::HubHandle> {
        self.hub.clone()
    }

    /// Serves until the server stops or `shutdown` is cancelled, then stops the
    /// background tasks.
    pub async fn run_until_stopped(self, shutdown: CancellationToken) -> anyhow::Result<()> {
        let handle = self.server.handle();
        let server = self.server;
        let result = tokio::select! {
            r = server => r.map_err(anyhow::Error::from),
            _ = shutdown.cancelled() => {
                handle.stop(true).await;
                Ok(())
            }
        };
        self.cancel.cancel();
        for t in self.background {
            let _ = t.await;
        }
        result
    }
}

/// The admin credentials, or an error when admin is on without any — except the plain
/// demo (`demo`, no Redis), which gets a generated token, printed once.
fn admin_auth(settings: &Settings) -> anyhow::Result<Option<crate::admin::auth::AdminAuth>> {
    let a = &settings.admin;
    if !a.enabled {
        return Ok(None);
    }
    let mut token = a.token.clone().filter(|t| !t.is_empty());
    if token.is_none() && a.password_hash.is_none() {
        if settings.demo && settings.redis_url.is_none() {
            let mut b = [0u8; 18];
            rand::thread_rng().fill_bytes(&mut b);
            let generated =
                base64::Engine::encode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, b);
            tracing::warn!(
                admin_token = %generated,
                "demo: generated an admin token for this run; sign in at /admin with it"
            );
            token = Some(crate::config::Secret::new(generated));
        } else {
            anyhow::bail!(
                "configuration: the admin interface is enabled but has no credential: set `admin.token` (ANTEROOM_ADMIN__TOKEN) or `admin.password_hash`, or set `admin.enabled = false`"
            );
        }
    }
    Ok(Some(crate::admin::auth::AdminAuth::new(
        token,
        a.password_hash.clone(),
        a.session_ttl_secs,
        a.login_attempts_per_minute,
    )))
}

/// Request logging (`access_log = true`; target `anteroom::http`, hidden by the default
/// filter — enable with `ANTEROOM_LOG=info`).
fn tracing_actix() -> actix_web::middleware::Logger {
    actix_web::middleware::Logger::new("%a \"%r\" %s %Dms").log_target("anteroom::http")
}
