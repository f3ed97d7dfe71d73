//! Generated hostile inputs against a real server on a real Redis: bodies, headers,
//! tokens and raw WebSocket frames. Whatever arrives, the server answers with a status
//! from the error table (never a 5xx other than the store's 503), in the one JSON error
//! shape, and stays up. A bounded number of cases (`CASES` per property), so CI time is
//! bounded too.

use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::helpers::{raw_ws_handshake, room, spawn_app, test_settings, RedisServer, TestApp};

const CASES: u32 = 96;

/// Statuses a hostile request may get.
const ALLOWED: &[u16] = &[200, 204, 400, 401, 403, 404, 408, 429];

struct Harness {
    rt: tokio::runtime::Runtime,
    app: TestApp,
    _redis: RedisServer,
}

impl Harness {
    fn start() -> Self {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let redis = RedisServer::start();
        let app = rt.block_on(spawn_app(test_settings(
            Some(redis.url()),
            &crate::helpers::prefix(),
            vec![room("r", 2)],
        )));
        Self {
            rt,
            app,
            _redis: redis,
        }
    }

    /// Sends `req`, checks the answer's status and error shape, and that the server is
    /// still up afterwards.
    fn check(&self, req: reqwest::RequestBuilder) -> Result<(), TestCaseError> {
        self.rt.block_on(async {
            let res = req
                .send()
                .await
                .map_err(|e| TestCaseError::fail(format!("no answer: {e}")))?;
            let status = res.status().as_u16();
            let body = res.text().await.unwrap_or_default();
            prop_assert!(ALLOWED.contains(&status), "status {status}: {body}");
            if status >= 400 {
                let v: serde_json::Value = serde_json::from_str(&body)
                    .map_err(|_| TestCaseError::fail(format!("not JSON: {body}")))?;
                prop_assert!(v["error"]["code"].is_string(), "{body}");
            }
            self.alive().await
        })
    }

    async fn alive(&self) -> Result<(), TestCaseError> {
        let r = self.app.client.get(self.app.url("/healthz")).send().await;
        prop_assert!(matches!(r, Ok(ref r) if r.status() == 200), "server down");
        Ok(())
    }
}

fn runner() -> TestRunner {
    TestRunner::new(Config {
        cases: CASES,
        failure_persistence: None,
        ..Config::default()
    })
}

/// Header bytes a client can put on the wire (visible ASCII, space, tab, obs-text).
fn header_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![Just(b' '), Just(b'\t'), 0x21u8..0x7f, 0x80u8..=0xff],
        0..300,
    )
}

#[test]
fn generated_join_bodies_get_a_clear_answer() {
    let h = Harness::start();
    let json_like = prop_oneof![
        prop::collection::vec(any::<u8>(), 0..600),
        "\\PC{0,200}".prop_map(String::into_bytes),
        "[{}\\[\\]\":,a-z0-9 ]{0,80}".prop_map(String::into_bytes),
        "\\PC{0,80}".prop_map(|t| format!(r#"{{"visitor_token":"{t}"}}"#).into_bytes()),
    ];
    runner()
        .run(&json_like, |body| {
            h.check(
                h.app
                    .client
                    .post(h.app.url("/api/rooms/r/join"))
                    .header("content-type", "application/json")
                    .body(body),
            )
        })
        .unwrap();
}

#[test]
fn generated_headers_and_tokens_get_a_clear_answer() {
    let h = Harness::start();
    let cases = (
        0usize..5,
        header_bytes(),
        header_bytes(),
        "[A-Za-z0-9._~-]{0,120}",
    );
    runner()
        .run(&cases, |(endpoint, auth, xff, room)| {
            let c = &h.app.client;
            // "." and ".." are dot-segments: the client's URL parser removes them (RFC 3986
            // 5.2.4), so the request would go to another route (`/r/./ws` is the page of a
            // room called "ws", which rightly answers in HTML), never to a room so named.
            let room = if room.is_empty() || room == "." || room == ".." {
                "r".to_string()
            } else {
                room
            };
            let req = match endpoint {
                0 => c.post(h.app.url(&format!("/api/rooms/{room}/join"))),
                1 => c.get(h.app.url(&format!("/api/rooms/{room}/status"))),
                2 => c.get(h.app.url(&format!("/api/rooms/{room}/verify"))),
                3 => c.post(h.app.url(&format!("/api/rooms/{room}/release"))),
                _ => c.get(h.app.url(&format!("/r/{room}/ws?token={room}"))),
            };
            let mut req = req;
            if let Ok(v) = reqwest::header::HeaderValue::from_bytes(&auth) {
                req = req.header("authorization", v);
            }
            if let Ok(v) = reqwest::header::HeaderValue::from_bytes(&xff) {
                req = req.header("x-forwarded-for", v.clone()).header("origin", v);
            }
            h.check(req)
        })
        .unwrap();
}

#[test]
fn generated_websocket_frames_never_bring_the_server_down() {
    let h = Harness::start();
    let token = h.rt.block_on(h.app.join("r")).token();
    let frames = prop::collection::vec(
        (
            any::<u8>(),
            prop_oneof![0u64..200, Just(126), Just(127), 4000u64..5000, any::<u64>()],
            prop::collection::vec(any::<u8>(), 0..300),
        ),
        1..6,
    );
    runner()
        .run(&frames, |frames| {
            h.rt.block_on(async {
                let port = h.app.port;
                let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
                    .await
                    .unwrap();
                raw_ws_handshake(&mut s, port, "r", &token).await;
                for (first, len, payload) in frames {
                    // A masked client frame with any first byte and any declared length,
                    // followed by whatever payload bytes were generated.
                    let mut f = vec![first];
                    match len {
                        0..=125 => f.push(0x80 | len as u8),
                        126..=0xffff => {
                            f.push(0x80 | 126);
                            f.extend_from_slice(&(len as u16).to_be_bytes());
                        }
                        _ => {
                            f.push(0x80 | 127);
                            f.extend_from_slice(&len.to_be_bytes());
                        }
                    }
                    f.extend_from_slice(&[7, 7, 7, 7]);
                    f.extend_from_slice(&payload);
                    if s.write_all(&f).await.is_err() {
                        break;
                    }
                }
                // Read whatever the server says (or its hang-up) for a moment.
                let mut buf = vec![0u8; 4096];
                let _ = tokio::time::timeout(Duration::from_millis(50), s.read(&mut buf)).await;
                drop(s);
                h.alive().await
            })
        })
        .unwrap();
}
