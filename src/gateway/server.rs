//! The gateway's server (hyper; HTTP/1.1, and HTTP/2 over its own TLS when ALPN agrees
//! on it): accepts connections until cancelled, asks the
//! [`Guard`](super::guard::Guard) about each request, and either answers itself
//! (redirect, cookie, `503`) or proxies through [`Upstream`](super::proxy::Upstream),
//! acting on the upstream's `Anteroom-Command` on the way back.

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use http::header::{HeaderValue, COOKIE, HOST, SET_COOKIE};
use http::{Method, Request, Response};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::server::conn::{http1, http2};
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio_util::sync::CancellationToken;

use super::guard::{split_pass_param, with_query, Decision, RequestInfo};
use super::headers::{self, client_proto, set_forwarded, strip_hop_by_hop};
use super::pages::{answer, Failure};
use super::respond::{
    answer_response, failure_response, header_text, pass_cookie_header, redirect,
};
use super::Gateway;
use crate::domain::bypass::RequestFacts;
use crate::domain::i18n::Lang;
use crate::domain::pass::Claims;
use crate::domain::request_target::{read_host, read_path, BadTarget, Host};
use crate::store::Revocation;

use super::Body;

/// How long a stopping gateway waits for its open connections to finish their requests
/// (as long as the main listener's graceful stop, actix-web's default): then the runtime
/// goes, and with it what is left.
pub const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(30);

/// Accepts connections on `listener` until `cancel`; then stops accepting at once, and
/// returns once every open connection has finished its current request and closed
/// (tunnels close at once), or after [`SHUTDOWN_GRACE`].
pub async fn serve(listener: tokio::net::TcpListener, gw: Arc<Gateway>, cancel: CancellationToken) {
    let open = tokio_util::task::TaskTracker::new();
    loop {
        let (stream, peer) = tokio::select! {
            _ = cancel.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of descriptors, mostly: wait a moment rather than spin.
                    tracing::warn!(error = %e, "gateway: accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let gw = gw.clone();
        let cancel = cancel.clone();
        // Each kind of connection boxed: the task itself stays small (the TLS handshake
        // and hyper's HTTP/2 state would otherwise be in every task, plain ones too).
        open.spawn(async move {
            match gw.tls.clone() {
                None => Box::pin(super::idle::serve(stream, gw, peer, cancel)).await,
                Some(acceptor) => Box::pin(serve_tls(stream, acceptor, gw, peer, cancel)).await,
            }
        });
    }
    drop(listener);
    open.close();
    if tokio::time::timeout(SHUTDOWN_GRACE, open.wait())
        .await
        .is_err()
    {
        tracing::warn!(
            open = open.len(),
            "gateway: connections still open {} s after shutdown began; closing them",
            SHUTDOWN_GRACE.as_secs()
        );
    }
}

/// A connection over the gateway's own TLS: the handshake, then HTTP/2 or HTTP/1.1 as
/// ALPN agreed.
async fn serve_tls(
    stream: tokio::net::TcpStream,
    acceptor: tokio_rustls::TlsAcceptor,
    gw: Arc<Gateway>,
    peer: SocketAddr,
    cancel: CancellationToken,
) {
    // A client has as long for its handshake as for its request headers.
    let stream = match tokio::time::timeout(gw.header_read_timeout, acceptor.accept(stream)).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => {
            tracing::debug!(%peer, error = %e, "gateway: TLS handshake failed");
            return;
        }
        Err(_) => return,
    };
    let hop = match stream.get_ref().1.alpn_protocol() {
        Some(crate::tls::ALPN_H2) => Hop::TlsH2,
        _ => Hop::TlsH1,
    };
    serve_connection(stream, hop, gw, peer, cancel).await
}

/// How a client connection reached the gateway.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Hop {
    Plain,
    /// TLS, HTTP/1.1 (agreed by ALPN, or no ALPN).
    TlsH1,
    /// TLS, HTTP/2 agreed by ALPN.
    TlsH2,
}

/// Serves one connection until it closes, or until `cancel`: then the requests under
/// way finish and the connection closes (HTTP/2: a GOAWAY).
async fn serve_connection<I>(
    io: I,
    hop: Hop,
    gw: Arc<Gateway>,
    peer: SocketAddr,
    cancel: CancellationToken,
) where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let timeout = gw.header_read_timeout;
    let tls = hop != Hop::Plain;
    let svc = service_fn(move |req| {
        let gw = gw.clone();
        async move { Ok::<_, Infallible>(gw.handle(req, peer, tls).await) }
    });
    let io = TokioIo::new(io);
    macro_rules! until_cancelled {
        ($conn:expr) => {{
            let conn = $conn;
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = cancel.cancelled() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
            }
        }};
    }
    if hop == Hop::TlsH2 {
        until_cancelled!(http2::Builder::new(TokioExecutor::new())
            .timer(TokioTimer::new())
            .serve_connection(io, svc))
    } else {
        until_cancelled!(http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(timeout)
            .serve_connection(io, svc)
            .with_upgrades())
    }
}

/// The host routes are matched on: the `Host` header, else the HTTP/2 `:authority` (the
/// upstream is sent the same), read by [`read_host`]; `None` when neither is there. Two
/// `Host` headers, or one that names no host, are refused (nginx answers `400` too).
fn request_host(req: &Request<Incoming>) -> Result<Option<Host>, BadTarget> {
    let mut hosts = req.headers().get_all(HOST).iter();
    let raw = match (hosts.next(), hosts.next()) {
        (Some(_), Some(_)) => return Err(BadTarget::Host),
        (Some(h), None) => Some(h.to_str().map_err(|_| BadTarget::Host)?),
        (None, _) => req.uri().authority().map(|a| a.as_str()),
    };
    raw.map(read_host_cached).transpose()
}

/// [`read_host`], remembered for the last host this thread read: a connection (and
/// most of a site's traffic) names the same host request after request, and reading
/// one through `url`'s IDNA parser was a twelfth of the gateway's instructions per
/// request (callgrind, BENCHMARKS.md's lever table). A pure function's cache: whatever
/// thread a task runs on, the answer is the same.
fn read_host_cached(raw: &str) -> Result<Host, BadTarget> {
    thread_local! {
        static LAST: std::cell::RefCell<Option<(String, Host)>> = const { std::cell::RefCell::new(None) };
    }
    LAST.with(|last| {
        if let Some((r, host)) = &*last.borrow() {
            if r == raw {
                return Ok(host.clone());
            }
        }
        let host = read_host(raw)?;
        *last.borrow_mut() = Some((raw.to_string(), host.clone()));
        Ok(host)
    })
}

/// The visitor a proxied request was let in as.
struct Visitor {
    room: String,
    claims: Claims,
}

impl Gateway {
    /// Answers one request; `tls`: it came over the gateway's own TLS.
    pub(super) async fn handle(
        &self,
        req: Request<Incoming>,
        peer: SocketAddr,
        tls: bool,
    ) -> Response<Body> {
        let settings = self.engine.settings();
        let trusted = settings.trust_forwarded_for
            && (self.engine.trusted_proxies().is_empty()
                || self
                    .engine
                    .trusted_proxies()
                    .iter()
                    .any(|n| n.contains(&peer.ip())));
        let h = req.headers();
        let proto = if tls {
            "https"
        } else {
            client_proto(h, trusted)
        };
        let host = h
            .get(HOST)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
            .or_else(|| req.uri().authority().map(|a| a.to_string()));
        // The path and host the routes and rules are matched on, read as the shared reader
        // reads them; a form it refuses is answered `400` and never proxied.
        let read = read_path(req.uri().path()).and_then(|path| Ok((path, request_host(&req)?)));
        let (path, route_host) = match read {
            Ok(read) => read,
            Err(why) => {
                tracing::debug!(reason = why.reason(), "gateway: request refused");
                return failure_response(self, Failure::BadTarget(why), &req, None);
            }
        };
        let ip = self.client_ip(&req, peer.ip());
        // In a block: the borrowed lookups must not live across the awaits below (they
        // are not `Send`).
        let decision = {
            let cookies: Vec<&str> = h
                .get_all(COOKIE)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .collect();
            let cookie = |name: &str| -> Option<&str> {
                cookies
                    .iter()
                    .flat_map(|c| c.split(';'))
                    .filter_map(|kv| kv.trim().split_once('='))
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v)
            };
            let header = |name: &str| h.get(name).and_then(|v| v.to_str().ok());
            let info = RequestInfo {
                host: route_host.as_ref(),
                path: &path,
                raw_path: req.uri().path(),
                query: req.uri().query(),
                cookie: &cookie,
                facts: RequestFacts {
                    ip,
                    user_agent: header("user-agent"),
                    path: Some(&path),
                    header: &header,
                },
            };
            self.guard
                .decide(&info, self.engine.bypass(), self.engine.passes())
        };
        let secure = self.engine.secure_cookies() || proto == "https";
        let client = headers::Client {
            peer: peer.ip(),
            proto,
            host: host.as_deref(),
            trusted,
        };
        match decision {
            Decision::Unguarded => self.proxy(req, &client, None, None, None).await,
            Decision::Bypass(rule) => {
                self.engine
                    .metrics()
                    .bypassed
                    .with_label_values(&[&rule])
                    .inc();
                self.proxy(req, &client, None, Some(&rule), None).await
            }
            Decision::Admitted { room, claims } => {
                // No-shows: the first request with this session's pass clears its
                // deadline (one store call per session and instance, none after).
                self.engine.presented(&room, &claims).await;
                let renewed = self.renew(&room, &claims, secure).await;
                self.proxy(req, &client, Some(Visitor { room, claims }), None, renewed)
                    .await
            }
            Decision::Adopt {
                room,
                pass,
                max_age_secs,
                location,
            } => {
                let cookie = pass_cookie_header(&room, &pass, max_age_secs, secure);
                redirect(&location, Some(cookie))
            }
            Decision::Refused {
                room,
                why,
                clear_cookie,
            } => {
                tracing::debug!(room, why = why.as_str(), "gateway: sent to the queue");
                let (_, rest) = split_pass_param(req.uri().query());
                let here = format!(
                    "{proto}://{}{}",
                    host.as_deref().unwrap_or(&self.local_addr.to_string()),
                    with_query(req.uri().path(), &rest)
                );
                let queue = format!(
                    "{}/r/{room}?return={}",
                    self.engine.public_base(),
                    url::form_urlencoded::byte_serialize(here.as_bytes()).collect::<String>()
                );
                let clear = clear_cookie.then(|| pass_cookie_header(&room, "", 0, secure));
                if req.method() == Method::GET || req.method() == Method::HEAD {
                    return redirect(&queue, clear);
                }
                let mut res = failure_response(self, Failure::NeedPass, &req, Some(&queue));
                if let Some(c) = clear {
                    res.headers_mut().append(SET_COOKIE, c);
                }
                res
            }
        }
    }

    /// The client address, as the main listener finds it (`trust_forwarded_for`).
    fn client_ip(&self, req: &Request<Incoming>, peer: IpAddr) -> IpAddr {
        if !self.engine.settings().trust_forwarded_for {
            return peer;
        }
        let entries: Vec<&str> = req
            .headers()
            .get_all(http::header::HeaderName::from_static("x-forwarded-for"))
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .collect();
        crate::domain::request_target::forwarded_client(
            peer,
            &entries,
            self.engine.trusted_proxies(),
        )
    }

    /// With the room's `renew_on_activity`, extends the visitor's session (at most once
    /// per [`super::renew::interval`]) and returns the cookie of a fresh pass when its end
    /// moved past the pass's `exp`. A store that fails is no reason to refuse: the
    /// visitor goes in on the pass they have.
    async fn renew(&self, room: &str, claims: &Claims, secure: bool) -> Option<HeaderValue> {
        let serial = claims.serial()?;
        let cfg = self.engine.room_config_cached(room).await.ok()?;
        if !cfg.renew_on_activity {
            return None;
        }
        let every = super::renew::interval(cfg.session_ttl_secs);
        if !self
            .renewals
            .due(room, &claims.sub, every, std::time::Instant::now())
        {
            return None;
        }
        let renewed = self
            .engine
            .admission_store()
            .extend_session(
                room,
                &claims.sub,
                serial,
                cfg.session_ttl_secs.saturating_mul(1000),
                cfg.max_session_secs.saturating_mul(1000),
            )
            .await;
        let a = match renewed {
            Ok(Some(a)) => a,
            Ok(None) => return None,
            Err(e) => {
                tracing::debug!(room, error = %e, "gateway: could not renew a session");
                return None;
            }
        };
        let exp = a.expires_at_ms.div_ceil(1000);
        if exp <= claims.exp {
            return None;
        }
        let pass = self.engine.passes().sign(&Claims {
            exp,
            ..claims.clone()
        });
        let max_age = exp.saturating_sub(crate::clock::wall_ms() / 1000).max(1);
        Some(pass_cookie_header(room, &pass, max_age, secure))
    }

    /// Forwards the request as `visitor` (a guarded route) or by a bypass `rule`, and
    /// acts on the upstream's `Anteroom-Command`; `renewed` is a fresh pass's cookie
    /// (`renew_on_activity`), set unless the upstream ended the session.
    async fn proxy(
        &self,
        req: Request<Incoming>,
        client: &headers::Client<'_>,
        visitor: Option<Visitor>,
        rule: Option<&str>,
        renewed: Option<HeaderValue>,
    ) -> Response<Body> {
        let (mut parts, body) = req.into_parts();
        // Kept (a reference count, no copy) for the gateway's own page if the upstream
        // fails; read only then.
        let accept = parts.headers.get(http::header::ACCEPT).cloned();
        let accept_language = parts.headers.get(http::header::ACCEPT_LANGUAGE).cloned();
        strip_hop_by_hop(&mut parts.headers);
        // Only the gateway says who the visitor is, or which rule let them in.
        parts.headers.remove(headers::VISITOR);
        parts.headers.remove(headers::BYPASS);
        let said = [
            (
                headers::VISITOR,
                visitor.as_ref().map(|v| v.claims.sub.as_str()),
            ),
            (headers::BYPASS, rule),
        ];
        for (name, value) in said {
            if let Some(v) = value.and_then(|v| HeaderValue::from_str(v).ok()) {
                parts.headers.insert(name, v);
            }
        }
        set_forwarded(&mut parts.headers, client);
        // HTTP/2 names the host in `:authority`, not `Host`; HTTP/1.1 needs `Host`.
        if !parts.headers.contains_key(HOST) {
            if let Some(h) = client.host.and_then(|h| HeaderValue::from_str(h).ok()) {
                parts.headers.insert(HOST, h);
            }
        }
        // A tunnel (WebSocket) opened with a pass is cut when that pass is revoked.
        let ends = visitor.as_ref().and_then(|v| {
            let serial = v.claims.serial()?;
            let (set, room, sub) = (
                self.guard.revoked.clone(),
                v.room.clone(),
                v.claims.sub.clone(),
            );
            let end: super::proxy::TunnelEnd =
                Box::pin(async move { set.until_revoked(&room, &sub, serial).await });
            Some(end)
        });
        let started = std::time::Instant::now();
        let forwarded = self
            .upstream
            .forward(Request::from_parts(parts, body), ends)
            .await;
        if let Some(v) = &visitor {
            use crate::domain::outflow::Seen;
            let seen = match &forwarded {
                Ok(res) => Seen::Answered {
                    ms: started.elapsed().as_secs_f64() * 1000.0,
                    status: res.status().as_u16(),
                },
                Err(super::pages::Failure::UpstreamTimeout) => Seen::TimedOut,
                Err(_) => Seen::Refused,
            };
            self.meter.record(&v.room, seen);
        }
        let res = match forwarded {
            Ok(res) => res,
            Err(f) => {
                let lang = Lang::negotiate(None, header_text(&accept_language));
                let a = answer(
                    f,
                    header_text(&accept),
                    lang,
                    self.engine.public_base(),
                    None,
                );
                return answer_response(a);
            }
        };
        let (mut parts, body) = res.into_parts();
        let revoke = parts
            .headers
            .get_all(headers::COMMAND)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|c| c.trim().eq_ignore_ascii_case("revoke"));
        parts.headers.remove(headers::COMMAND);
        strip_hop_by_hop(&mut parts.headers);
        if let (false, Some(c)) = (revoke, renewed) {
            parts.headers.append(SET_COOKIE, c);
        }
        if revoke {
            match &visitor {
                Some(v) => {
                    self.revoke(v).await;
                    self.renewals.forget(&v.room, &v.claims.sub);
                    let secure = self.engine.secure_cookies() || client.proto == "https";
                    parts
                        .headers
                        .append(SET_COOKIE, pass_cookie_header(&v.room, "", 0, secure));
                }
                None => tracing::debug!(
                    "gateway: Anteroom-Command: revoke on a request without a pass; ignored"
                ),
            }
        }
        Response::from_parts(parts, body.boxed())
    }

    /// Ends the visitor's session (the origin said so): refused here at once, by every
    /// other gateway once they read the store's log.
    async fn revoke(&self, v: &Visitor) {
        if let Some(serial) = v.claims.serial() {
            self.guard.revoked.insert(&Revocation {
                room: v.room.clone(),
                visitor: v.claims.sub.clone(),
                serial,
                expires_at_ms: v.claims.exp.saturating_mul(1000),
            });
        }
        if let Err(e) = self.engine.revoke(&v.room, &v.claims).await {
            tracing::warn!(room = v.room, error = %e, "gateway: could not end the session the origin revoked");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_remembered_host_answers_as_read_host_does() {
        for raw in [
            "Shop.Example",
            "shop.example:8080",
            "shop.example:8080",
            "other.example.",
            "BÜCHER.example",
            "[::1]:80",
            "127.0.0.1",
            "bad%host",
            "shop.example:x",
            "Shop.Example",
            "",
        ] {
            assert_eq!(read_host_cached(raw), read_host(raw), "{raw}");
        }
    }
}
