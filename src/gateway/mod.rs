//! The built-in gateway (`[gateway]`, `docs/gateway.md`): a reverse proxy on its own
//! address that puts rooms in front of a site without nginx or Caddy. A request on a
//! guarded route needs its room's pass in the `anteroom_pass_{room}` cookie; without
//! one, `GET`/`HEAD` are redirected to the queue page with `?return=` and the rest get
//! `503`. The queue sends an admitted visitor back with `?anteroom_pass=`, which the
//! gateway turns into its own cookie. Everything else is proxied.
//!
//! - [`routes`]: which room guards a host and path (longest prefix).
//! - [`guard`]: the decision for one request, checking passes without the store.
//! - [`revoked`]: passes revoked anywhere, read from the store's log every 250 ms.
//! - [`renew`]: `renew_on_activity`, sessions extended as visitors use the site.
//! - [`headers`]: hop-by-hop and forwarding headers.
//! - [`pages`]: the `503`/`502`/`504` answers, HTML or JSON by `Accept`.
//! - [`proxy`]: the pooled upstream client, timeouts and upgrades.
//! - [`server`]: the hyper server that ties them together, over TLS when
//!   `gateway.tls_cert` is set (tokio-rustls; HTTP/2 or HTTP/1.1 as ALPN agreed).
//!
//! Why hyper here while the main listener is actix-web: a proxy needs bodies passed
//! through as they arrive (no buffering), one keep-alive pool, and upgraded connections
//! joined at the byte level so any WebSocket subprotocol or extension passes untouched;
//! hyper and hyper-util give exactly those parts, and the upgrade stays a plain
//! `copy_bidirectional`. It runs on its own threads, one single-threaded runtime each
//! ([`start`]), so proxied traffic never competes with the actix workers' event loops.

pub(crate) mod guard;
pub(crate) mod headers;
mod idle;
pub(crate) mod pages;
pub(crate) mod pass_cache;
pub(crate) mod proxy;
pub(crate) mod renew;
mod respond;
/// Moved to the domain (the status path reads it too); the gateway's path stays.
pub(crate) use crate::domain::revoked;
pub mod routes;
pub(crate) mod server;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::config::GatewaySettings;
use crate::domain::admission::Engine;
use guard::Guard;
use proxy::Upstream;
use revoked::RevokedSet;
use routes::Routes;

/// The body of every answer the gateway gives (its own pages and the proxied ones).
pub type Body = http_body_util::combinators::BoxBody<bytes::Bytes, hyper::Error>;

/// What one worker's requests share (the engine, guard and renewals with every worker).
pub struct Gateway {
    engine: Arc<Engine>,
    /// Shared by the workers (one pass cache, one revocation view).
    guard: Arc<Guard>,
    /// This worker's own pool of upstream connections.
    upstream: Upstream,
    /// When each visitor's session was last renewed here (`renew_on_activity`), shared
    /// by the workers.
    renewals: Arc<renew::Renewals>,
    header_read_timeout: Duration,
    /// The TLS handshake, when `gateway.tls_cert` is set (HTTP/2 or HTTP/1.1 by ALPN).
    tls: Option<tokio_rustls::TlsAcceptor>,
    /// The bound address (the `Host` of a request that sent none).
    local_addr: SocketAddr,
    /// What the origin answered to each room's visitors (the outflow controller's
    /// signal, docs/outflow.md).
    meter: Arc<crate::domain::outflow::OriginMeter>,
}

/// A running gateway: its port and its worker threads.
pub struct Running {
    pub port: u16,
    /// One per worker thread, resolved when its server task has ended.
    stopped: Vec<tokio::sync::oneshot::Receiver<()>>,
    /// Cancelled when this is dropped: the workers then stop at once, without the
    /// graceful wait (as a dropped runtime would).
    _kill: tokio_util::sync::DropGuard,
}

impl Running {
    /// Waits for the server tasks (after the cancellation token passed to [`start`]):
    /// they end once the open connections have finished their requests, or after
    /// [`server::SHUTDOWN_GRACE`].
    pub async fn stopped(mut self) {
        for done in self.stopped.drain(..) {
            let _ = done.await;
        }
    }
}

/// Starts the gateway on `listener` with `workers` threads (0: one per core), serving
/// until `cancel`. `revoked` is fed by [`revoked::run_poller`], which the caller runs;
/// `meter` is read by the outflow task (`crate::outflow`).
///
/// Each worker is a thread running its own single-threaded runtime (nginx's worker
/// model): it accepts on its own handle of the listener and serves what it accepted to
/// the end, through its own pool of upstream connections, so a request never wakes
/// another thread and no task is stolen or moved. The pass cache, the renewals and the
/// routes are shared. (A work-stealing runtime of one thread measured slower: its wakes
/// and queues go through atomics and a second queue; BENCHMARKS.md, lever table.)
// Each argument is a separate piece the composition root owns; a struct for them would
// only be built here.
#[allow(clippy::too_many_arguments)]
pub fn start(
    listener: std::net::TcpListener,
    settings: &GatewaySettings,
    tls: Option<tokio_rustls::TlsAcceptor>,
    engine: Arc<Engine>,
    revoked: Arc<RevokedSet>,
    meter: Arc<crate::domain::outflow::OriginMeter>,
    workers: usize,
    cancel: CancellationToken,
) -> anyhow::Result<Running> {
    let local_addr = listener.local_addr()?;
    listener.set_nonblocking(true)?;
    let threads = if workers == 0 {
        std::thread::available_parallelism().map_or(2, |n| n.get())
    } else {
        workers
    };
    let guard = Arc::new(Guard {
        routes: Routes::new(&settings.routes),
        revoked,
        checked: Default::default(),
    });
    let renewals = Arc::new(renew::Renewals::default());
    let kill = CancellationToken::new();
    let mut stopped = Vec::with_capacity(threads);
    for _ in 0..threads {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let gateway = Gateway {
            engine: engine.clone(),
            guard: guard.clone(),
            upstream: Upstream::new(settings)?,
            renewals: renewals.clone(),
            header_read_timeout: Duration::from_millis(settings.header_read_timeout_ms),
            tls: tls.clone(),
            local_addr,
            meter: meter.clone(),
        };
        let listener = listener.try_clone()?;
        let (cancel, kill) = (cancel.clone(), kill.clone());
        let (done, done_rx) = tokio::sync::oneshot::channel();
        std::thread::Builder::new()
            .name("anteroom-gateway".into())
            .spawn(move || {
                runtime.block_on(async move {
                    // The listener's registration belongs to this runtime's driver.
                    match tokio::net::TcpListener::from_std(listener) {
                        Ok(listener) => tokio::select! {
                            _ = server::serve(listener, Arc::new(gateway), cancel) => {}
                            _ = kill.cancelled() => {}
                        },
                        Err(e) => tracing::error!(error = %e, "gateway: worker could not listen"),
                    }
                });
                // What is left (a tunnel opened over TLS) goes with the runtime, without
                // waiting: as the main listener's stop does.
                runtime.shutdown_background();
                let _ = done.send(());
            })?;
        stopped.push(done_rx);
    }
    tracing::info!(addr = %local_addr, tls = settings.tls_cert.is_some(), upstream = settings.upstream.as_deref().unwrap_or(""), routes = settings.routes.len(), workers = threads, "gateway listening");
    Ok(Running {
        port: local_addr.port(),
        stopped,
        _kill: kill.drop_guard(),
    })
}
