//! Plain HTTP/1.1 connections held as a bare socket while idle. hyper's connection keeps
//! two 8 KiB buffers (and its state) for its whole life, so a keep-alive connection that
//! waits between requests would cost that much for nothing. Here, once a connection has
//! been idle for [`HANDOVER_AFTER`] to twice that (no request in flight, its last response
//! written whole and nothing read since), hyper's connection is ended without closing the
//! socket (`graceful_shutdown` + `poll_without_shutdown` →
//! [`hyper::server::conn::http1::Parts`]),
//! and the task waits on the socket alone (`readable()`, no buffer) until the client sends
//! its next request, then serves it with a fresh hyper connection. Bytes hyper had read
//! and not yet used (part of a pipelined request) are handed to the next connection first:
//! nothing is lost. An upgrade (WebSocket) is joined here, from the same `Parts`.
//!
//! Timeouts as before: an idle connection is closed when no request head starts within
//! `header_read_timeout_ms` (counted from the handover: up to 2 × [`HANDOVER_AFTER`]
//! late); on `cancel`, an idle connection closes at once, a busy one finishes its request
//! first, and a tunnel closes at once.

use std::future::poll_fn;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Buf, Bytes};
use http_body_util::BodyExt;
use hyper::body::{Body as HttpBody, Frame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::proxy::{Tunnel, TunnelSlot};
use super::{Body, Gateway};

/// How long a connection stays idle in hyper's hands before it is handed over to the
/// bare socket: long enough that a client sending request after request (a page's
/// assets, a load test) keeps one hyper connection, short enough that a connection left
/// open costs little.
pub const HANDOVER_AFTER: Duration = Duration::from_millis(200);

/// The least a request head is given after an idle wait, when the wait used most of
/// `header_read_timeout_ms` (hyper's timer cannot be started part-way through).
const LEAST_HEAD_TIME: Duration = Duration::from_millis(500);

/// What the connection's IO and its service tell the loop.
#[derive(Default)]
struct State {
    /// Requests whose response has not been sent whole.
    in_flight: AtomicUsize,
    /// Reads that brought bytes (to tell "nothing read since").
    reads: AtomicU64,
    /// The client closed its side (a read of 0 bytes from the socket).
    eof: AtomicBool,
    /// hyper's last read would block: it waits on the client.
    waiting: AtomicBool,
}

/// The socket as hyper sees it: a [`Prefixed`] socket (bytes a previous hyper connection
/// had read and not used first), and a note in [`State`] of every read.
struct Io {
    inner: Prefixed,
    state: Arc<State>,
}

impl AsyncRead for Io {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let from_prefix = !this.inner.prefix.is_empty();
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() == before && !from_prefix {
                    this.state.eof.store(true, Ordering::Relaxed);
                } else {
                    this.state.reads.fetch_add(1, Ordering::Relaxed);
                }
                this.state.waiting.store(false, Ordering::Relaxed);
                Poll::Ready(Ok(()))
            }
            Poll::Pending => {
                this.state.waiting.store(true, Ordering::Relaxed);
                Poll::Pending
            }
            other => other,
        }
    }
}

impl AsyncWrite for Io {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// A response body that counts its request as answered once it is sent whole (or
/// dropped).
struct Counted {
    inner: Body,
    state: Option<Arc<State>>,
}

impl Counted {
    fn done(&mut self) {
        if let Some(s) = self.state.take() {
            s.in_flight.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.done();
    }
}

impl HttpBody for Counted {
    type Data = Bytes;
    type Error = hyper::Error;
    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(None) = polled {
            self.done();
        }
        polled
    }
    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }
    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

/// Serves one plain HTTP/1.1 connection until it closes (see the module's text).
pub async fn serve(
    stream: TcpStream,
    gw: Arc<Gateway>,
    peer: std::net::SocketAddr,
    cancel: CancellationToken,
) {
    let timeout = gw.header_read_timeout;
    let mut builder = http1::Builder::new();
    builder.timer(TokioTimer::new());
    let mut stream = stream;
    let mut prefix = Bytes::new();
    let mut idle_since = Instant::now();
    loop {
        // Idle: the bare socket, until the client sends something.
        let head_time = if prefix.is_empty() {
            let deadline = idle_since + timeout;
            tokio::select! {
                r = stream.readable() => if r.is_err() { return },
                _ = tokio::time::sleep_until(deadline) => {
                    let _ = stream.shutdown().await;
                    return;
                }
                _ = cancel.cancelled() => {
                    let _ = stream.shutdown().await;
                    return;
                }
            }
            deadline
                .saturating_duration_since(Instant::now())
                .max(LEAST_HEAD_TIME)
        } else {
            timeout
        };
        builder.header_read_timeout(head_time);
        match Box::pin(one_round(
            &builder,
            stream,
            std::mem::take(&mut prefix),
            &gw,
            peer,
            &cancel,
        ))
        .await
        {
            Round::Idle {
                stream: s,
                unread,
                since,
            } => {
                stream = s;
                prefix = unread;
                idle_since = since;
            }
            Round::Ended => return,
        }
    }
}

enum Round {
    /// Handed back idle: the socket, bytes read but not used yet, and since when the
    /// connection has waited on the client.
    Idle {
        stream: TcpStream,
        unread: Bytes,
        since: Instant,
    },
    /// The connection is closed (or became a tunnel, now ended).
    Ended,
}

/// One hyper connection on the socket, until it is handed back idle or ends.
async fn one_round(
    builder: &http1::Builder,
    stream: TcpStream,
    prefix: Bytes,
    gw: &Arc<Gateway>,
    peer: std::net::SocketAddr,
    cancel: &CancellationToken,
) -> Round {
    let state = Arc::new(State::default());
    let tunnel: Arc<Mutex<Option<Tunnel>>> = Default::default();
    let svc = {
        let (gw, state, tunnel) = (gw.clone(), state.clone(), tunnel.clone());
        service_fn(move |mut req: http::Request<Incoming>| {
            let (gw, state) = (gw.clone(), state.clone());
            state.in_flight.fetch_add(1, Ordering::Relaxed);
            if super::headers::is_upgrade(req.headers()) {
                req.extensions_mut().insert(TunnelSlot(tunnel.clone()));
            }
            // Boxed: hyper's `poll_without_shutdown` wants an `Unpin` future.
            Box::pin(async move {
                let res = gw.handle(req, peer, false).await;
                let (parts, body) = res.into_parts();
                let body = Counted {
                    inner: body,
                    state: Some(state),
                };
                Ok::<_, std::convert::Infallible>(http::Response::from_parts(parts, body.boxed()))
            })
        })
    };
    let io = Io {
        inner: Prefixed { prefix, stream },
        state: state.clone(),
    };
    let mut conn = builder.serve_connection(TokioIo::new(io), svc);
    let mut shutting = false;
    let mut handover = false;
    // A look every `HANDOVER_AFTER` (one timer per connection, none per request): handed
    // over when hyper waits on the client with nothing in flight and nothing has been
    // read since the last look.
    let mut seen = u64::MAX;
    let mut idle_since = Instant::now();
    let sleep = tokio::time::sleep(HANDOVER_AFTER);
    let cancelled = cancel.cancelled();
    tokio::pin!(sleep, cancelled);
    let ended = poll_fn(|cx| loop {
        if !shutting && cancelled.as_mut().poll(cx).is_ready() {
            Pin::new(&mut conn).graceful_shutdown();
            shutting = true;
        }
        if let Poll::Ready(r) = conn.poll_without_shutdown(cx) {
            return Poll::Ready(r);
        }
        if shutting || sleep.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        let reads = state.reads.load(Ordering::Relaxed);
        let waiting =
            state.waiting.load(Ordering::Relaxed) && state.in_flight.load(Ordering::Relaxed) == 0;
        if waiting && reads == seen {
            Pin::new(&mut conn).graceful_shutdown();
            shutting = true;
            handover = true;
            idle_since = Instant::now();
            continue;
        }
        seen = reads;
        sleep.as_mut().reset(Instant::now() + HANDOVER_AFTER);
    })
    .await;
    if ended.is_err() {
        return Round::Ended;
    }
    let parts = conn.into_parts();
    let Prefixed {
        prefix: rest,
        mut stream,
    } = parts.io.into_inner().inner;
    // Copied out (a few bytes at most, mostly none): hyper's `read_buf` is a view of its
    // whole read buffer (8 KiB or more), which it would keep alive while the connection
    // idles.
    let unread = if rest.is_empty() && parts.read_buf.is_empty() {
        Bytes::new()
    } else {
        let mut all = bytes::BytesMut::with_capacity(parts.read_buf.len() + rest.len());
        all.extend_from_slice(&parts.read_buf);
        all.extend_from_slice(&rest);
        all.freeze()
    };
    let pending = tunnel.lock().map(|mut t| t.take()).unwrap_or(None);
    if let Some(t) = pending {
        // A tunnel closes when the gateway stops (its requests are done; it could run
        // for hours).
        tokio::select! {
            _ = t.join(Prefixed {
                prefix: unread,
                stream,
            }) => {}
            _ = cancel.cancelled() => {}
        }
        return Round::Ended;
    }
    if handover && !cancel.is_cancelled() && !state.eof.load(Ordering::Relaxed) {
        tracing::trace!(
            unread = unread.len(),
            "gateway: idle connection handed over"
        );
        return Round::Idle {
            stream,
            unread,
            since: idle_since,
        };
    }
    let _ = stream.shutdown().await;
    Round::Ended
}

/// A socket with bytes already read from it put back in front.
pub struct Prefixed {
    prefix: Bytes,
    stream: TcpStream,
}

impl AsyncRead for Prefixed {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if !this.prefix.is_empty() {
            let n = this.prefix.len().min(buf.remaining());
            buf.put_slice(&this.prefix[..n]);
            this.prefix.advance(n);
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Prefixed {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}
