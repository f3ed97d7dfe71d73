//! A real webhook receiver for the webhook tests: a hyper server on a free port (HTTP, or
//! HTTPS with a test certificate) that records each request and checks its Standard
//! Webhooks signature itself, with the `hmac`/`sha2`/`base64` crates and the secret,
//! never through Anteroom's signing code.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use base64::Engine as _;
use bytes::Bytes;
use hmac::{Hmac, Mac};
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use sha2::Sha256;

/// The key, base64; the room's secret is `whsec_` + this.
pub const KEY_B64: &str = "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

pub fn secret() -> String {
    format!("whsec_{KEY_B64}")
}

/// How the receiver answers.
#[derive(Clone, Copy)]
pub enum Mode {
    Ok,
    /// 500 to the first attempt of each `webhook-id`, 200 after.
    FailFirstAttempt,
    /// 503 until then, 200 after.
    DownUntil(Instant),
    /// 500 always.
    AlwaysFail,
}

/// One request the receiver got.
#[derive(Clone, Debug)]
pub struct Received {
    pub id: String,
    pub signature: String,
    pub content_type: String,
    pub body: String,
    pub at: Instant,
    /// What the receiver answered.
    pub status: u16,
    /// The signature checked out (computed here from the secret).
    pub valid: bool,
}

impl Received {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap()
    }
}

/// A real HTTP receiver; stopped when dropped.
pub struct Receiver {
    pub port: u16,
    log: Arc<Mutex<Vec<Received>>>,
    mode: Arc<Mutex<Mode>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The Standard Webhooks check, written from the specification: HMAC-SHA256 with the
/// base64-decoded key over `{id}.{timestamp}.{body}`, compared with each `v1,` entry.
fn signature_valid(id: &str, timestamp: &str, body: &str, header: &str) -> bool {
    let key = base64::engine::general_purpose::STANDARD
        .decode(KEY_B64)
        .unwrap();
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{id}.{timestamp}.{body}").as_bytes());
    let want = format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
    );
    let fresh = timestamp.parse::<u64>().is_ok_and(|t| {
        let now = anteroom::clock::wall_ms() / 1000;
        t.abs_diff(now) < 300
    });
    fresh && header.split(' ').any(|s| s == want)
}

impl Receiver {
    pub async fn start(mode: Mode) -> Self {
        Self::start_with(mode, None).await
    }

    /// With `tls`, the receiver speaks HTTPS only.
    pub async fn start_with(mode: Mode, tls: Option<tokio_rustls::TlsAcceptor>) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let log: Arc<Mutex<Vec<Received>>> = Arc::default();
        let mode = Arc::new(Mutex::new(mode));
        let (l, m) = (log.clone(), mode.clone());
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let (l, m, tls) = (l.clone(), m.clone(), tls.clone());
                tokio::spawn(async move {
                    match tls {
                        Some(acceptor) => {
                            if let Ok(s) = acceptor.accept(stream).await {
                                serve(s, l, m).await;
                            }
                        }
                        None => serve(stream, l, m).await,
                    }
                });
            }
        });
        Self {
            port,
            log,
            mode,
            task,
        }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/hooks/anteroom", self.port)
    }

    pub fn set_mode(&self, mode: Mode) {
        *self.mode.lock().unwrap() = mode;
    }

    pub fn log(&self) -> Vec<Received> {
        self.log.lock().unwrap().clone()
    }
}

/// Serves one connection: records each request, checks its signature, answers as the
/// mode says.
async fn serve<S>(io: S, l: Arc<Mutex<Vec<Received>>>, m: Arc<Mutex<Mode>>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let svc = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
        let (l, m) = (l.clone(), m.clone());
        async move {
            let h = |k: &str| {
                req.headers()
                    .get(k)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_string()
            };
            let (id, timestamp, signature, content_type) = (
                h("webhook-id"),
                h("webhook-timestamp"),
                h("webhook-signature"),
                h("content-type"),
            );
            let body = req.into_body().collect().await.unwrap().to_bytes();
            let body = String::from_utf8(body.to_vec()).unwrap();
            let valid = signature_valid(&id, &timestamp, &body, &signature);
            let mut log = l.lock().unwrap();
            let mode = *m.lock().unwrap();
            let status = match mode {
                Mode::Ok => 200,
                Mode::FailFirstAttempt if log.iter().any(|r| r.id == id) => 200,
                Mode::FailFirstAttempt => 500,
                Mode::DownUntil(t) if Instant::now() < t => 503,
                Mode::DownUntil(_) => 200,
                Mode::AlwaysFail => 500,
            };
            log.push(Received {
                id,
                signature,
                content_type,
                body,
                at: Instant::now(),
                status,
                valid,
            });
            Ok::<_, Infallible>(
                Response::builder()
                    .status(status)
                    .body(Full::new(Bytes::from_static(b"ok")))
                    .unwrap(),
            )
        }
    });
    let _ = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(io), svc)
        .await;
}
