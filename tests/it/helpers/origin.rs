//! A shop that slows down under load, for the outflow tests and the outflow benchmark: a
//! hyper HTTP/1.1 server whose every answer takes `base_ms × slowness × (1 + in_flight /
//! knee)` ms (in flight counted when the request arrives), and answers `503` at once past
//! `limit` requests in flight. `slowness` can be changed while it runs (a deploy gone
//! wrong). It counts what it answered, and keeps each answer's latency for a p95.

use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use hyper::Response;
use hyper_util::rt::TokioIo;

/// How the origin behaves.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub base_ms: f64,
    /// In-flight requests that double the latency.
    pub knee: f64,
    /// In flight past this: `503` at once.
    pub limit: u64,
}

#[derive(Default)]
struct State {
    in_flight: AtomicU64,
    /// Slowness × 1000.
    slowness: AtomicU64,
    ok: AtomicU64,
    failed: AtomicU64,
    /// Latencies (ms) of the answers since the last [`SlowOrigin::take`].
    latencies: Mutex<Vec<f64>>,
}

/// A running origin, on a runtime of its own (its latencies are its own, not those of
/// the test's tasks); stopped when dropped.
pub struct SlowOrigin {
    pub port: u16,
    state: Arc<State>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Drop for SlowOrigin {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

/// What the origin served over a stretch of time.
#[derive(Clone, Debug, Default)]
pub struct Served {
    pub ok: u64,
    pub failed: u64,
    /// The p95 of the latencies of every answer (ms).
    pub p95_ms: f64,
    /// Every answer's latency (ms), sorted.
    pub latencies: Vec<f64>,
}

impl SlowOrigin {
    pub async fn start(shape: Shape) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        std_listener.set_nonblocking(true).unwrap();
        let port = std_listener.local_addr().unwrap().port();
        let state = Arc::new(State::default());
        state.slowness.store(1000, Ordering::Relaxed);
        let st = state.clone();
        runtime.spawn(async move {
            let listener = tokio::net::TcpListener::from_std(std_listener).unwrap();
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let st = st.clone();
                tokio::spawn(async move {
                    let svc = hyper::service::service_fn(move |_req| {
                        let st = st.clone();
                        async move { Ok::<_, Infallible>(answer(&st, shape).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), svc)
                        .await;
                });
            }
        });
        Self {
            port,
            state,
            runtime: Some(runtime),
        }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every answer from now on takes `factor` times as long.
    pub fn set_slowness(&self, factor: f64) {
        self.state
            .slowness
            .store((factor * 1000.0) as u64, Ordering::Relaxed);
    }

    /// What it served since the last call.
    pub fn take(&self) -> Served {
        let mut l = std::mem::take(&mut *self.state.latencies.lock().unwrap());
        l.sort_by(f64::total_cmp);
        let p95_ms = if l.is_empty() {
            0.0
        } else {
            l[((l.len() as f64 * 0.95).ceil() as usize).clamp(1, l.len()) - 1]
        };
        Served {
            ok: self.state.ok.swap(0, Ordering::Relaxed),
            failed: self.state.failed.swap(0, Ordering::Relaxed),
            p95_ms,
            latencies: l,
        }
    }
}

async fn answer(st: &State, shape: Shape) -> Response<Full<Bytes>> {
    let start = Instant::now();
    let n = st.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    let res = if n > shape.limit {
        st.failed.fetch_add(1, Ordering::Relaxed);
        Response::builder()
            .status(503)
            .body(Full::new(Bytes::from("overloaded")))
            .unwrap()
    } else {
        let slow = st.slowness.load(Ordering::Relaxed) as f64 / 1000.0;
        let ms = shape.base_ms * slow * (1.0 + n as f64 / shape.knee);
        tokio::time::sleep(Duration::from_secs_f64(ms / 1000.0)).await;
        st.ok.fetch_add(1, Ordering::Relaxed);
        Response::new(Full::new(Bytes::from("page")))
    };
    st.in_flight.fetch_sub(1, Ordering::SeqCst);
    st.latencies
        .lock()
        .unwrap()
        .push(start.elapsed().as_secs_f64() * 1000.0);
    res
}
