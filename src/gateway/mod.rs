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
//! `copy_bidirectional`. It runs on its own multi-threaded runtime so proxied traffic
//! never competes with the actix workers' event loops.

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

/// What every gateway request shares.
pub struct Gateway {
    engine: Arc<Engine>,
    guard: Guard,
    upstream: Upstream,
    /// When each visitor's session was last renewed here (`renew_on_activity`).
    renewals: renew::Renewals,
    header_read_timeout: Duration,
    /// The TLS handshake, when `gateway.tls_cert` is set (HTTP/2 or HTTP/1.1 by ALPN).
    tls: Option<tokio_rustls::TlsAcceptor>,
    /// The bound address (the `Host` of a request that sent none).
    local_addr: SocketAddr,
    /// What the origin answered to each room's visitors (the outflow controller's
    /// signal, docs/outflow.md).
    meter: Arc<crate::domain::outflow::OriginMeter>,
}

/// A running gateway: its port, its runtime and the server task.
pub struct Running {
    pub port: u16,
    server: Option<tokio::task::JoinHandle<()>>,
    /// Declared last: dropped after the task handle.
    _runtime: OwnRuntime,
}

impl Running {
    /// Waits for the server task (after the cancellation token passed to [`start`]): it
    /// ends once the open connections have finished their requests, or after
    /// [`server::SHUTDOWN_GRACE`].
    pub async fn stopped(mut self) {
        if let Some(t) = self.server.take() {
            let _ = t.await;
        }
    }
}

/// The gateway's runtime, shut down without blocking when dropped: a runtime cannot be
/// dropped the ordinary way inside another one's async context.
struct OwnRuntime(Option<tokio::runtime::Runtime>);

impl Drop for OwnRuntime {
    fn drop(&mut self) {
        if let Some(rt) = self.0.take() {
            rt.shutdown_background();
        }
    }
}

/// Starts the gateway on `listener` with `workers` threads (0: one per core), serving
/// until `cancel`. `revoked` is fed by [`revoked::run_poller`], which the caller runs;
/// `meter` is read by the outflow task (`crate::outflow`).
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
    let own = OwnRuntime(Some(
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .thread_name("anteroom-gateway")
            .enable_all()
            .build()?,
    ));
    // unwrap: just set.
    let runtime = own.0.as_ref().expect("the runtime was just built");
    let server = {
        // The listener and the client's pool belong to the gateway's runtime.
        let _enter = runtime.enter();
        let gateway = Arc::new(Gateway {
            engine,
            guard: Guard {
                routes: Routes::new(&settings.routes),
                revoked: revoked.clone(),
                checked: Default::default(),
            },
            upstream: Upstream::new(settings)?,
            renewals: Default::default(),
            header_read_timeout: Duration::from_millis(settings.header_read_timeout_ms),
            tls,
            local_addr,
            meter,
        });
        let listener = tokio::net::TcpListener::from_std(listener)?;
        runtime.spawn(server::serve(listener, gateway, cancel))
    };
    tracing::info!(addr = %local_addr, tls = settings.tls_cert.is_some(), upstream = settings.upstream.as_deref().unwrap_or(""), routes = settings.routes.len(), "gateway listening");
    Ok(Running {
        port: local_addr.port(),
        server: Some(server),
        _runtime: own,
    })
}
