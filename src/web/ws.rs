//! `GET /r/{room}/ws`: the visitor's live socket.
//!
//! Upgrade checks, in order: room id, `Origin` (a cross-site page gets 403 before any
//! upgrade — WebSocket hijacking), per-IP limiter, visitor identity (`?token=` or the
//! cookie), per-visitor limiter, then an idempotent join (so a reconnect never loses or
//! duplicates the place). The 101 is returned at once; the session runs as a plain
//! `async fn` selecting over incoming frames, hub pushes and a heartbeat tick.
//!
//! Client → server frames: JSON text `{"type":"ping"}` (answered with
//! `{"type":"pong"}`). Anything else closes the socket: binary → 1003, invalid JSON →
//! 1007, unknown type or fragmented frames → 1008, more than 4 KiB → 1009.

use std::time::{Duration, Instant};

use actix_web::{get, web, HttpRequest, HttpResponse};
use actix_ws::{CloseCode, CloseReason, Message, ProtocolError};
use serde::Deserialize;
use tokio::sync::mpsc;

use super::error::ApiError;
use super::support::{client_ip, origin_allowed, room_id};
use crate::domain::admission::{resolve_return, Engine, VisitorView};
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

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(ws);
}

#[derive(Deserialize)]
struct WsQuery {
    token: Option<String>,
    #[serde(rename = "return")]
    ret: Option<String>,
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
        Some(t) => engine.visitors.verify(t).ok_or_else(|| {
            ApiError::unauthorized("invalid_token", "the visitor token is not valid")
        })?,
        None => req
            .cookie(VISITOR_COOKIE)
            .and_then(|c| engine.visitors.verify(c.value()))
            .ok_or_else(|| {
                ApiError::unauthorized("no_visitor", "join first: no visitor cookie or token")
            })?,
    };
    engine
        .check_visitor_limit(&visitor, LimitedAction::WsUpgrade)
        .await?;
    let cfg_target = engine.room_config(&room).await?.target_url;
    let redirect_base = resolve_return(&cfg_target, q.ret.as_deref());
    // Check the handshake before joining, so a plain GET changes nothing.
    let (res, session, stream) = actix_ws::handle(&req, body)
        .map_err(|e| ApiError::bad_request(format!("not a WebSocket upgrade: {e}")))?;
    let first = engine
        .join_to(&room, &visitor, redirect_base.as_deref())
        .await?;
    let stream = stream.max_frame_size(MAX_FRAME);
    actix_web::rt::spawn(session_loop(
        session,
        stream,
        hub.get_ref().clone(),
        room,
        visitor,
        first,
        redirect_base,
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

async fn session_loop(
    mut session: actix_ws::Session,
    mut stream: actix_ws::MessageStream,
    hub: HubHandle,
    room: String,
    visitor: VisitorId,
    first: VisitorView,
    redirect_base: Option<String>,
) {
    let first_msg = if first.state == VisitorState::Admitted {
        admitted_message(&first)
    } else {
        status_message(&first)
    };
    if session.text(first_msg).await.is_err() {
        return;
    }
    let (tx, mut rx) = mpsc::unbounded_channel();
    let conn = hub.next_conn_id();
    hub.send(Command::Connect {
        room: room.clone(),
        visitor: visitor.as_str().to_string(),
        conn,
        redirect_base,
        told: first.state,
        told_figures: (first.position, first.queue_length),
        tx,
    });

    let mut ping = tokio::time::interval(PING_EVERY);
    ping.tick().await; // the first tick is immediate
    let mut last_heard = Instant::now();
    let reason: Option<CloseReason> = loop {
        tokio::select! {
            msg = stream.recv() => match msg {
                Some(Ok(Message::Text(t))) => {
                    last_heard = Instant::now();
                    match client_frame(&t) {
                        Ok(()) => {
                            if session.text(r#"{"type":"pong"}"#).await.is_err() { break None; }
                        }
                        Err(r) => break Some(r),
                    }
                }
                Some(Ok(Message::Ping(b))) => {
                    last_heard = Instant::now();
                    if session.pong(&b).await.is_err() { break None; }
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
                Some(Ok(Message::Nop)) => {}
                Some(Err(ProtocolError::Overflow)) => break Some(CloseReason {
                    code: CloseCode::Size,
                    description: Some(format!("frames are limited to {MAX_FRAME} bytes")),
                }),
                Some(Err(_)) => break Some(CloseCode::Protocol.into()),
                None => break None,
            },
            push = rx.recv() => match push {
                Some(Push::Text(s)) => {
                    if session.text(s).await.is_err() { break None; }
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
                if session.ping(b"").await.is_err() { break None; }
            }
        }
    };
    hub.send(Command::Disconnect {
        room,
        visitor: visitor.as_str().to_string(),
        conn,
    });
    let _ = session.close(reason).await;
}
