//! `GET /r/{room}/ws`: the visitor's live socket.
//!
//! Upgrade checks, in order: room id, `Origin` (a cross-site page gets 403 before any
//! upgrade — WebSocket hijacking), per-IP limiter, visitor identity (`?token=` or the
//! cookie), then the join's own checks ([`crate::domain::enter`]: room, entry with an
//! optional `?enqueue_token=`, proof of work, and the per-visitor limiter, skipped for
//! the socket a queue page opens within 15 s of being served, with the page's `?grant=`:
//! one page load costs one request), the handshake, and an idempotent join (so a
//! reconnect never loses or duplicates the place). The 101 is returned at once; the
//! session runs as a plain `async fn` selecting over incoming frames, hub pushes and a
//! heartbeat tick.
//!
//! Client → server frames: JSON text `{"type":"ping"}` (answered with
//! `{"type":"pong"}`). Anything else closes the socket: binary → 1003, invalid JSON →
//! 1007, unknown type or fragmented frames → 1008, more than 4 KiB → 1009 (refused from
//! the frame header, before the payload is buffered: [`super::frame_guard`]), more than
//! [`FRAME_BURST`] frames at once or [`FRAMES_PER_SEC`] sustained → 1008.
//!
//! A client that stops reading cannot hold the session: every write has
//! [`SEND_TIMEOUT`], after which the socket is dropped (and with it the hub's
//! heartbeat for the visitor).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_web::{dev, get, web, FromRequest, HttpRequest, HttpResponse};
use actix_ws::{CloseCode, CloseReason, Message, ProtocolError};
use serde::Deserialize;

use super::error::ApiError;
use super::support::{client_ip, origin_allowed, room_id, unavailable_keeping};
use crate::domain::admission::{Engine, VisitorView};
use crate::domain::enter::{Checked, EnterOutcome, EnterRequest};
use crate::domain::identity::{VisitorId, VISITOR_COOKIE};
use crate::domain::ratelimit::LimitedAction;
use crate::hub::{admitted_message, status_message, Command, HubHandle, Push};
use crate::store::VisitorState;

/// Largest client frame accepted.
pub const MAX_FRAME: usize = 4096;
/// Server pings this often. Queued sockets also get a status at least every 5 s; the
/// ping is what makes a silent client answer (a pong) so dead ones are found within
/// `CLIENT_TIMEOUT`. 15 s keeps frames per socket low (50,000 sockets: 3,300 pings/s).
pub const PING_EVERY: Duration = Duration::from_secs(15);
/// A socket we have heard nothing from (not even a pong) for this long is closed.
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(30);
/// A write that cannot be handed to the connection within this time (the client stopped
/// reading and every buffer on the way is full) ends the session.
pub const SEND_TIMEOUT: Duration = Duration::from_secs(10);
/// Client frames allowed at once, on top of the sustained rate. The page sends one ping
/// every 10 s; this only stops floods (11 M pings in 8 s cost 3.8 s of CPU before).
pub const FRAME_BURST: f64 = 60.0;
/// Client frames allowed per second, sustained.
pub const FRAMES_PER_SEC: f64 = 10.0;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(ws);
}

#[derive(Deserialize)]
struct WsQuery {
    token: Option<String>,
    /// The queue page's grant: the socket a page load opens is not counted again.
    grant: Option<String>,
    #[serde(rename = "return")]
    ret: Option<String>,
    /// An enqueue token the site signed: the same person and lane as at the join route.
    enqueue_token: Option<String>,
}

#[get("/r/{room}/ws")]
async fn ws(
    req: HttpRequest,
    body: web::Payload,
    room: web::Path<String>,
    q: web::Query<WsQuery>,
    engine: web::Data<Engine>,
    hub: web::Data<HubHandle>,
) -> Result<HttpResponse, ApiError> {
    let room = room_id(&room)?;
    if !origin_allowed(&req, &engine) {
        return Err(ApiError::Forbidden(
            "cross-origin WebSocket connections are not allowed".into(),
        ));
    }
    engine.check_ip_limit(client_ip(&req, &engine), LimitedAction::WsUpgrade)?;
    let visitor = match q.token.as_deref() {
        Some(t) => engine.visitors().verify(t).ok_or_else(|| {
            ApiError::unauthorized("invalid_token", "the visitor token is not valid")
        })?,
        None => req
            .cookie(VISITOR_COOKIE)
            .and_then(|c| engine.visitors().verify(c.value()))
            .ok_or_else(|| {
                ApiError::unauthorized("no_visitor", "join first: no visitor cookie or token")
            })?,
    };
    let granted = q.grant.as_deref().is_some_and(|g| {
        engine
            .visitors()
            .check_page_grant(g, &room, &visitor, crate::clock::wall_ms())
    });
    // The handshake joins, as the join route does. In a room that lets people in line
    // only with an enqueue token or a proof of work, a visitor who does not already hold
    // a place needs the token (`?enqueue_token=`, which also puts them in its lane); a
    // proof of work cannot come this way.
    let checked = engine
        .check_entry(EnterRequest {
            room: &room,
            visitor: Some(&visitor),
            enqueue_token: q.enqueue_token.as_deref(),
            pow_solution: None,
            place_receipt: None,
            ip: client_ip(&req, &engine),
            return_to: q.ret.as_deref(),
            count_as: (!granted).then_some(LimitedAction::WsUpgrade),
            rejoin: false,
        })
        .await?;
    let cleared = match checked {
        Checked::Cleared(c) => *c,
        Checked::Answered(EnterOutcome::StoreDown { visitor }) => {
            return Ok(unavailable_keeping(&engine, &visitor))
        }
        // A refusal (a proof of work needed); a restored place needs a receipt, which
        // the socket does not take.
        Checked::Answered(other) => {
            other.into_refusal()?;
            return Err(ApiError::Internal("a socket join restored a place".into()));
        }
    };
    let (visitor, redirect_base) = (
        cleared.visitor().clone(),
        cleared.redirect_base().map(str::to_string),
    );
    // Check the handshake before joining, so a plain GET changes nothing. The client's
    // bytes go through the frame guard first.
    let oversized = Arc::new(AtomicBool::new(false));
    let guarded = super::frame_guard::FrameGuard::new(body, MAX_FRAME, oversized.clone());
    let guarded: std::pin::Pin<
        Box<dyn futures_util::Stream<Item = Result<web::Bytes, actix_web::error::PayloadError>>>,
    > = Box::pin(guarded);
    let mut guarded = dev::Payload::Stream { payload: guarded };
    let body = web::Payload::from_request(&req, &mut guarded)
        .await
        .map_err(|e| ApiError::bad_request(format!("not a WebSocket upgrade: {e}")))?;
    let (res, session, stream) = actix_ws::handle(&req, body)
        .map_err(|e| ApiError::bad_request(format!("not a WebSocket upgrade: {e}")))?;
    let first = match engine.take_place(cleared).await? {
        EnterOutcome::StoreDown { visitor } => return Ok(unavailable_keeping(&engine, &visitor)),
        other => other.into_refusal()?,
    };
    let stream = stream.max_frame_size(MAX_FRAME);
    // Only what the socket needs from the first answer travels into its task: the whole
    // view (token, support code, room…) would stay allocated as long as the socket.
    let first = FirstWord::from(&*first);
    actix_web::rt::spawn(session_loop(
        session,
        stream,
        hub.get_ref().clone(),
        room,
        visitor,
        first,
        redirect_base,
        oversized,
    ));
    Ok(res)
}

/// What a client frame asks for.
fn client_frame(text: &str) -> Result<(), CloseReason> {
    #[derive(Deserialize)]
    struct Frame {
        #[serde(rename = "type")]
        kind: String,
    }
    let f: Frame = serde_json::from_str(text).map_err(|_| CloseReason {
        code: CloseCode::Invalid,
        description: Some("frames must be JSON objects with a \"type\"".into()),
    })?;
    match f.kind.as_str() {
        "ping" => Ok(()),
        other => Err(CloseReason {
            code: CloseCode::Policy,
            description: Some(format!(
                "unknown message type {:?}",
                other.chars().take(32).collect::<String>()
            )),
        }),
    }
}

/// Sends within [`SEND_TIMEOUT`]; `false` when the socket is gone or stuck.
async fn sent<F, E>(send: F) -> bool
where
    F: std::future::Future<Output = Result<(), E>>,
{
    matches!(tokio::time::timeout(SEND_TIMEOUT, send).await, Ok(Ok(())))
}

/// A token bucket over the client's frames.
struct FrameBudget {
    tokens: f64,
    at: Instant,
}

impl FrameBudget {
    fn new() -> Self {
        Self {
            tokens: FRAME_BURST,
            at: Instant::now(),
        }
    }

    /// Takes one frame; `false` when the client is over its budget.
    fn take(&mut self, now: Instant) -> bool {
        let refill = now.duration_since(self.at).as_secs_f64() * FRAMES_PER_SEC;
        self.tokens = (self.tokens + refill).min(FRAME_BURST);
        self.at = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// The socket's first message and what it told, for the hub.
struct FirstWord {
    msg: String,
    state: VisitorState,
    figures: (u64, u64),
    place: Option<(u64, u64)>,
}

impl From<&VisitorView> for FirstWord {
    fn from(first: &VisitorView) -> Self {
        let msg = if first.state == VisitorState::Admitted {
            admitted_message(first)
        } else {
            status_message(first)
        };
        Self {
            msg,
            state: first.state,
            figures: (first.position, first.queue_length),
            place: first.place,
        }
    }
}

#[allow(clippy::too_many_arguments)]
async fn session_loop(
    mut session: actix_ws::Session,
    mut stream: actix_ws::MessageStream,
    hub: HubHandle,
    room: String,
    visitor: VisitorId,
    first: FirstWord,
    redirect_base: Option<String>,
    oversized: Arc<AtomicBool>,
) {
    let FirstWord {
        msg,
        state,
        figures,
        place,
    } = first;
    if !sent(session.text(msg)).await {
        let _ = session.close(None).await;
        return;
    }
    let (tx, mut rx) = crate::hub::mailbox::mailbox();
    let conn = hub.next_conn_id();
    hub.send(Command::Connect {
        room: room.clone(),
        visitor: visitor.as_str().to_string(),
        conn,
        redirect_base,
        told: state,
        told_figures: figures,
        place,
        tx,
    });

    let mut ping = tokio::time::interval(PING_EVERY);
    ping.tick().await; // the first tick is immediate
    let mut last_heard = Instant::now();
    let mut budget = FrameBudget::new();
    let too_many = || CloseReason {
        code: CloseCode::Policy,
        description: Some("too many messages".into()),
    };
    let reason: Option<CloseReason> = loop {
        tokio::select! {
            msg = stream.recv() => match msg {
                Some(Ok(Message::Nop)) => {}
                Some(Ok(_)) if !budget.take(Instant::now()) => break Some(too_many()),
                Some(Ok(Message::Text(t))) => {
                    last_heard = Instant::now();
                    match client_frame(&t) {
                        Ok(()) => {
                            if !sent(session.text(r#"{"type":"pong"}"#)).await { break None; }
                        }
                        Err(r) => break Some(r),
                    }
                }
                Some(Ok(Message::Ping(b))) => {
                    last_heard = Instant::now();
                    if !sent(session.pong(&b)).await { break None; }
                }
                Some(Ok(Message::Pong(_))) => last_heard = Instant::now(),
                Some(Ok(Message::Binary(_))) => break Some(CloseReason {
                    code: CloseCode::Unsupported,
                    description: Some("binary frames are not accepted".into()),
                }),
                Some(Ok(Message::Continuation(_))) => break Some(CloseReason {
                    code: CloseCode::Policy,
                    description: Some("fragmented frames are not accepted".into()),
                }),
                Some(Ok(Message::Close(r))) => break r,
                Some(Err(ProtocolError::Overflow)) => break Some(too_big()),
                Some(Err(_)) if oversized.load(Ordering::Relaxed) => break Some(too_big()),
                Some(Err(_)) => break Some(CloseCode::Protocol.into()),
                None => break None,
            },
            push = rx.recv() => match push {
                Some(Push::Text(s)) => {
                    if !sent(session.text(s)).await { break None; }
                }
                Some(Push::Close) => break Some(CloseCode::Normal.into()),
                None => break None,
            },
            _ = ping.tick() => {
                if last_heard.elapsed() > CLIENT_TIMEOUT {
                    break Some(CloseReason {
                        code: CloseCode::Away,
                        description: Some("no heartbeat".into()),
                    });
                }
                if !sent(session.ping(b"")).await { break None; }
            }
        }
    };
    hub.send(Command::Disconnect {
        room,
        visitor: visitor.as_str().to_string(),
        conn,
    });
    let _ = tokio::time::timeout(SEND_TIMEOUT, session.close(reason)).await;
}

fn too_big() -> CloseReason {
    CloseReason {
        code: CloseCode::Size,
        description: Some(format!("frames are limited to {MAX_FRAME} bytes")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_write_that_never_completes_gives_up_after_the_send_timeout() {
        let started = tokio::time::Instant::now();
        let stuck = std::future::pending::<Result<(), ()>>();
        assert!(!sent(stuck).await);
        assert_eq!(started.elapsed(), SEND_TIMEOUT);
        assert!(sent(async { Ok::<(), ()>(()) }).await);
    }

    #[test]
    fn the_frame_budget_allows_a_burst_then_the_sustained_rate() {
        let mut b = FrameBudget::new();
        let t0 = b.at;
        for _ in 0..FRAME_BURST as usize {
            assert!(b.take(t0));
        }
        assert!(!b.take(t0));
        // One second later, the sustained rate's worth of frames is back.
        let t1 = t0 + Duration::from_secs(1);
        for _ in 0..FRAMES_PER_SEC as usize {
            assert!(b.take(t1));
        }
        assert!(!b.take(t1));
    }
}
