//! The upstream side: one pooled HTTP/1.1 client (hyper-util's), requests sent with
//! their bodies streaming through, an answer within `response_timeout_ms` or a `504`,
//! a refused connection a `502`, and protocol upgrades (WebSocket) joined byte for byte
//! once both sides have switched.

use std::time::Duration;

use http::{Request, Response, StatusCode, Uri, Version};
use hyper::body::Incoming;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};

use super::headers::is_upgrade;
use super::pages::Failure;
use crate::config::GatewaySettings;

/// What ends an upgraded tunnel early: its pass revoked
/// ([`RevokedSet::until_revoked`](super::revoked::RevokedSet::until_revoked)).
pub type TunnelEnd = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// The site behind the gateway.
pub struct Upstream {
    client: Client<HttpConnector, Incoming>,
    authority: http::uri::Authority,
    response_timeout: Duration,
}

impl Upstream {
    pub fn new(settings: &GatewaySettings) -> anyhow::Result<Self> {
        let url = settings.upstream_url()?;
        let authority = match url.port() {
            Some(p) => format!("{}:{p}", url.host_str().unwrap_or_default()),
            None => url.host_str().unwrap_or_default().to_string(),
        }
        .parse()?;
        let mut connector = HttpConnector::new();
        connector.set_connect_timeout(Some(Duration::from_millis(settings.connect_timeout_ms)));
        connector.set_nodelay(true);
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(settings.pool_idle_secs))
            .pool_max_idle_per_host(settings.pool_max_idle)
            // The client's `Host` is kept (the site sees the name visitors use).
            .set_host(false)
            .build(connector);
        Ok(Self {
            client,
            authority,
            response_timeout: Duration::from_millis(settings.response_timeout_ms),
        })
    }

    /// Sends `req` (headers already rewritten) and returns the upstream's response, its
    /// body still streaming. A `101 Switching Protocols` to an upgrade request starts a
    /// task that joins the two upgraded connections once the client has its `101` too,
    /// until either side closes or `ends` resolves (the tunnel's pass was revoked): then
    /// both connections are dropped, which closes them.
    pub async fn forward(
        &self,
        mut req: Request<Incoming>,
        ends: Option<TunnelEnd>,
    ) -> Result<Response<Incoming>, Failure> {
        // A plain connection joins the tunnel itself (it holds the socket, `idle.rs`);
        // over TLS, hyper hands the upgraded connection over.
        let slot = req.extensions_mut().remove::<TunnelSlot>();
        let client_side =
            (slot.is_none() && is_upgrade(req.headers())).then(|| hyper::upgrade::on(&mut req));
        let upgrading = is_upgrade(req.headers());
        let path = req
            .uri()
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .to_string();
        *req.uri_mut() = Uri::builder()
            .scheme("http")
            .authority(self.authority.clone())
            .path_and_query(path)
            .build()
            .map_err(|_| Failure::UpstreamRefused)?;
        *req.version_mut() = Version::HTTP_11;
        let mut res =
            match tokio::time::timeout(self.response_timeout, self.client.request(req)).await {
                Err(_) => return Err(Failure::UpstreamTimeout),
                Ok(Err(e)) if is_timeout(&e) => return Err(Failure::UpstreamTimeout),
                Ok(Err(e)) => {
                    tracing::debug!(error = %e, "gateway: upstream request failed");
                    return Err(Failure::UpstreamRefused);
                }
                Ok(Ok(res)) => res,
            };
        if res.status() == StatusCode::SWITCHING_PROTOCOLS && upgrading {
            let tunnel = Tunnel {
                upstream: hyper::upgrade::on(&mut res),
                ends,
            };
            if let Some(slot) = slot {
                if let Ok(mut t) = slot.0.lock() {
                    *t = Some(tunnel);
                }
            } else if let Some(client_side) = client_side {
                tokio::spawn(async move {
                    match client_side.await {
                        Ok(c) => tunnel.join(TokioIo::new(c)).await,
                        Err(e) => tracing::debug!(error = %e, "gateway: upgrade failed"),
                    }
                });
            }
        }
        Ok(res)
    }
}

/// Where a plain connection's service leaves an upgrade for the connection to join (hyper
/// hands the socket back rather than upgrading it itself: `poll_without_shutdown`; see
/// `idle.rs`).
#[derive(Clone)]
pub struct TunnelSlot(pub std::sync::Arc<std::sync::Mutex<Option<Tunnel>>>);

/// The upstream's side of an upgraded connection, to be joined with the client's.
pub struct Tunnel {
    upstream: hyper::upgrade::OnUpgrade,
    ends: Option<TunnelEnd>,
}

impl Tunnel {
    /// Joins `client` and the upstream byte for byte, until either side closes or the
    /// tunnel's pass is revoked; then both are dropped, which closes them.
    pub async fn join<C>(self, mut client: C)
    where
        C: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    {
        let mut u = match self.upstream.await {
            Ok(u) => TokioIo::new(u),
            Err(e) => {
                tracing::debug!(error = %e, "gateway: upgrade failed");
                return;
            }
        };
        let ended = async {
            match self.ends {
                Some(e) => e.await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = tokio::io::copy_bidirectional(&mut client, &mut u) => {}
            _ = ended => {
                tracing::debug!("gateway: a tunnel's pass was revoked; closed");
            }
        }
    }
}

/// Whether a client error is a timeout (the connect timeout) rather than a refusal.
fn is_timeout(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(err) = cur {
        if err
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut)
        {
            return true;
        }
        if err.to_string().contains("timed out") {
            return true;
        }
        cur = err.source();
    }
    false
}
