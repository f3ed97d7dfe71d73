//! A real origin for the gateway tests: a hyper HTTP/1.1 server on a free port with a few
//! endpoints that show what arrived and how it was sent.
//!
//! - `GET /ws` (and `/checkout/ws`, behind a guarded route): a WebSocket echo.
//! - `POST /upload`: reads the body as it streams and answers `{"len", "sha256"}`.
//! - `GET /download?bytes=N`: N bytes (`i % 251`) in 64 KiB chunks.
//! - `GET /gated`: sends `first`, then `second` only once the test calls
//!   [`Upstream::open_gate`] (a proxy that buffered would never deliver `first`).
//! - `GET /revoke-me`: `200 bye` with `Anteroom-Command: revoke`.
//! - `GET /slow`: answers after 5 s.
//! - anything else: `{"method", "path", "query", "headers"}` as JSON.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use http_body_util::{combinators::BoxBody, BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use sha2::{Digest, Sha256};
use tokio::sync::Notify;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::Role;
use tokio_tungstenite::WebSocketStream;

type Body = BoxBody<Bytes, Infallible>;

/// A running origin; stopped when dropped.
pub struct Upstream {
    pub port: u16,
    gate: Arc<Notify>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Upstream {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Upstream {
    pub async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let gate = Arc::new(Notify::new());
        let g = gate.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let g = g.clone();
                tokio::spawn(async move {
                    let svc = hyper::service::service_fn(move |req| {
                        let g = g.clone();
                        async move { Ok::<_, Infallible>(handle(req, g).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), svc)
                        .with_upgrades()
                        .await;
                });
            }
        });
        Self { port, gate, task }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Lets `/gated` send its second chunk.
    pub fn open_gate(&self) {
        self.gate.notify_one();
    }
}

fn full(b: impl Into<Bytes>) -> Body {
    Full::new(b.into()).boxed()
}

async fn handle(mut req: Request<Incoming>, gate: Arc<Notify>) -> Response<Body> {
    match req.uri().path() {
        "/ws" | "/checkout/ws" => {
            let key = req.headers()["sec-websocket-key"].as_bytes().to_vec();
            let upgrade = hyper::upgrade::on(&mut req);
            tokio::spawn(async move {
                let io = TokioIo::new(upgrade.await.unwrap());
                let mut ws = WebSocketStream::from_raw_socket(io, Role::Server, None).await;
                while let Some(Ok(m)) = ws.next().await {
                    if m.is_text() || m.is_binary() {
                        let _ = ws.send(m).await;
                    }
                }
            });
            Response::builder()
                .status(101)
                .header("connection", "upgrade")
                .header("upgrade", "websocket")
                .header("sec-websocket-accept", derive_accept_key(&key))
                .body(full(""))
                .unwrap()
        }
        "/upload" => {
            let mut body = req.into_body();
            let (mut len, mut hash) = (0usize, Sha256::new());
            while let Some(frame) = body.frame().await {
                if let Ok(data) = frame.unwrap().into_data() {
                    len += data.len();
                    hash.update(&data);
                }
            }
            let v = serde_json::json!({ "len": len, "sha256": format!("{:x}", hash.finalize()) });
            Response::new(full(v.to_string()))
        }
        "/download" => {
            let n: usize = req
                .uri()
                .query()
                .and_then(|q| q.strip_prefix("bytes="))
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            let chunks = (0..n).step_by(65536).map(move |start| {
                let end = (start + 65536).min(n);
                let chunk: Vec<u8> = (start..end).map(|i| (i % 251) as u8).collect();
                Ok::<_, Infallible>(Frame::data(Bytes::from(chunk)))
            });
            Response::new(BodyExt::boxed(StreamBody::new(futures_util::stream::iter(
                chunks,
            ))))
        }
        "/gated" => {
            let first = futures_util::stream::once(async { Ok(Frame::data(Bytes::from("first"))) });
            let second = futures_util::stream::once(async move {
                gate.notified().await;
                Ok(Frame::data(Bytes::from("second")))
            });
            Response::new(BodyExt::boxed(StreamBody::new(first.chain(second))))
        }
        "/revoke-me" => Response::builder()
            .header("anteroom-command", "revoke")
            .body(full("bye"))
            .unwrap(),
        "/slow" => {
            tokio::time::sleep(Duration::from_secs(5)).await;
            Response::new(full("late"))
        }
        path => {
            let headers: serde_json::Map<String, serde_json::Value> = req
                .headers()
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").into()))
                .collect();
            let v = serde_json::json!({
                "method": req.method().as_str(),
                "path": path,
                "query": req.uri().query(),
                "headers": headers,
            });
            Response::new(full(v.to_string()))
        }
    }
}
