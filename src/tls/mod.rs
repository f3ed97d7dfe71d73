//! TLS where Anteroom faces the internet itself: `tls_cert` / `tls_key` for the main
//! listener and `gateway.tls_cert` / `gateway.tls_key` for the gateway (PEM files).
//!
//! Both listeners are served with rustls (the ring provider; no OpenSSL) and offer
//! HTTP/2 and HTTP/1.1 by ALPN. The main listener hands its [`ServerConfig`] to
//! actix-web, which adds the ALPN protocols itself; the gateway does the handshake with
//! tokio-rustls and picks hyper's HTTP/2 or HTTP/1.1 server by the protocol agreed.
//!
//! Certificates are reloaded without a restart: each listener's `ServerConfig` asks a
//! [`ReloadingCert`] for the certificate on every handshake, and SIGHUP (or
//! [`Certificates::reload`]) reads the files again and swaps the new one in. Open
//! connections keep the session they negotiated; only handshakes after the swap see the
//! new certificate. A file that does not load on reload is logged and the old
//! certificate is kept, so a half-copied renewal never takes the site down.

mod cert;

use std::sync::Arc;

pub use cert::{load, ReloadingCert};
use rustls::ServerConfig;

pub use crate::config::CertPaths;

/// The crypto provider both listeners use (ring, chosen explicitly: no process-wide
/// default has to be installed first).
pub fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A server configuration that asks `cert` for the certificate on every handshake.
/// `alpn` is what the listener offers (empty for actix-web, which adds its own).
pub fn server_config(cert: Arc<ReloadingCert>, alpn: &[&[u8]]) -> anyhow::Result<ServerConfig> {
    let mut config = ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_cert_resolver(cert);
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Ok(config)
}

/// ALPN identifiers the gateway offers, most preferred first.
pub const ALPN_H2: &[u8] = b"h2";
pub const ALPN_HTTP11: &[u8] = b"http/1.1";

/// Every certificate this process serves: what SIGHUP reloads. Cheap to clone.
#[derive(Clone, Default)]
pub struct Certificates(Vec<Arc<ReloadingCert>>);

/// What one [`Certificates::reload`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReloadOutcome {
    /// Listeners now serving the certificate read from disk.
    pub reloaded: usize,
    /// Listeners whose files did not load: they keep the old certificate (logged).
    pub kept: usize,
}

impl Certificates {
    pub fn push(&mut self, cert: Arc<ReloadingCert>) {
        self.0.push(cert);
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Reads every listener's files again and swaps in those that load.
    pub fn reload(&self) -> ReloadOutcome {
        let mut out = ReloadOutcome::default();
        for c in &self.0 {
            match c.reload() {
                Ok(()) => out.reloaded += 1,
                Err(_) => out.kept += 1,
            }
        }
        out
    }

    /// Reloads on every SIGHUP until `cancel` (Unix only; elsewhere it just waits).
    pub async fn reload_on_sighup(self, cancel: tokio_util::sync::CancellationToken) {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            let mut hup = match signal(SignalKind::hangup()) {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot listen for SIGHUP: certificates reload only on restart");
                    return cancel.cancelled().await;
                }
            };
            loop {
                tokio::select! {
                    _ = cancel.cancelled() => return,
                    got = hup.recv() => if got.is_none() { return },
                }
                let out = self.reload();
                tracing::info!(
                    reloaded = out.reloaded,
                    kept = out.kept,
                    "SIGHUP: certificates reloaded"
                );
            }
        }
        #[cfg(not(unix))]
        cancel.cancelled().await
    }
}
