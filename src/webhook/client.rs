//! The HTTP client deliveries go out with: hyper-util's pooled client (as the gateway's)
//! over `hyper-rustls`, so `http://` and `https://` URLs both work. The trust roots are
//! the system's CA bundle (`SSL_CERT_FILE`, else `/etc/ssl/certs/ca-certificates.crt`);
//! a receiver behind a private CA adds it there.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::CertificateDer;

/// The most of a receiver's answer read (the rest is dropped with the connection).
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// Where the CA bundle is read when `SSL_CERT_FILE` is unset.
const DEFAULT_CA_FILE: &str = "/etc/ssl/certs/ca-certificates.crt";

/// A cloneable client for webhook deliveries, each bounded by `timeout`.
#[derive(Clone)]
pub struct WebhookClient {
    inner: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    timeout: Duration,
}

impl WebhookClient {
    /// Trusting the system's CA bundle (`SSL_CERT_FILE`, else the default file).
    pub fn new(timeout: Duration) -> anyhow::Result<Self> {
        let ca_file = std::env::var_os("SSL_CERT_FILE")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| DEFAULT_CA_FILE.into());
        Self::with_ca_file(timeout, &ca_file)
    }

    /// Trusting the certificates of the PEM bundle `ca_file` (none when it cannot be
    /// read: https deliveries then fail and are retried, http ones still work).
    pub fn with_ca_file(timeout: Duration, ca_file: &std::path::Path) -> anyhow::Result<Self> {
        let mut roots = rustls::RootCertStore::empty();
        if let Ok(pem) = std::fs::read(ca_file) {
            for cert in CertificateDer::pem_slice_iter(&pem).flatten() {
                let _ = roots.add(cert);
            }
        }
        let tls = rustls::ClientConfig::builder_with_provider(crate::tls::provider())
            .with_safe_default_protocol_versions()?
            .with_root_certificates(roots)
            .with_no_client_auth();
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_connect_timeout(Some(timeout));
        http.set_nodelay(true);
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        Ok(Self {
            inner: Client::builder(TokioExecutor::new()).build(https),
            timeout,
        })
    }

    /// POSTs `body` with `headers`; the answer's status, or why there was none.
    pub async fn post(
        &self,
        url: &str,
        headers: &[(&'static str, String)],
        body: Bytes,
    ) -> Result<u16, String> {
        let mut req = http::Request::post(url);
        for (k, v) in headers {
            req = req.header(*k, v);
        }
        let req = req.body(Full::new(body)).map_err(|e| e.to_string())?;
        let send = async {
            let res = self.inner.request(req).await.map_err(|e| e.to_string())?;
            let status = res.status().as_u16();
            // Read the (bounded) answer so the connection goes back to the pool.
            let _ = Limited::new(res.into_body(), MAX_ANSWER_BYTES)
                .collect()
                .await;
            Ok(status)
        };
        tokio::time::timeout(self.timeout, send)
            .await
            .map_err(|_| format!("no answer within {} ms", self.timeout.as_millis()))?
    }
}

impl WebhookClient {
    /// Sends `req` and reads the whole answer (at most 1 MiB), for the OpenID Connect
    /// client (`web::admin::oidc`: discovery, keys, the token exchange), which shares
    /// this client's TLS setup. Redirects are not followed.
    pub async fn send(
        &self,
        req: http::Request<Vec<u8>>,
    ) -> Result<http::Response<Vec<u8>>, std::io::Error> {
        const MAX_BODY: usize = 1024 * 1024;
        let (parts, body) = req.into_parts();
        let req = http::Request::from_parts(parts, Full::new(Bytes::from(body)));
        let send = async {
            let res = self
                .inner
                .request(req)
                .await
                .map_err(std::io::Error::other)?;
            let (parts, body) = res.into_parts();
            let body = Limited::new(body, MAX_BODY)
                .collect()
                .await
                .map_err(|e| std::io::Error::other(e.to_string()))?
                .to_bytes();
            Ok(http::Response::from_parts(parts, body.to_vec()))
        };
        tokio::time::timeout(self.timeout, send)
            .await
            .map_err(|_| {
                std::io::Error::other(format!("no answer within {} ms", self.timeout.as_millis()))
            })?
    }
}
