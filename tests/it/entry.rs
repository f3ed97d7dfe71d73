//! Enqueue tokens (one place per person): refused tokens with their reasons, two browsers
//! with the same `sub` holding one place, one stock unit per `sub`, the queue page.

use crate::helpers::{room, spawn_app, test_settings, RedisServer, Reply, TestApp};
use anteroom::room::{EntryMode, RoomConfig, Secret};
use jsonwebtoken::{Algorithm, EncodingKey, Header};

const SECRET: &str = "site-entry-secret-0123456789abcdef";

fn token(sub: &str, room: &str, exp_in: i64, secret: &str) -> String {
    let exp = jsonwebtoken::get_current_timestamp() as i64 + exp_in;
    jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &serde_json::json!({"sub": sub, "room": room, "exp": exp}),
        &EncodingKey::from_secret(secret.as_bytes()),
    )
    .unwrap()
}

fn token_room(id: &str, capacity: u64) -> RoomConfig {
    RoomConfig {
        entry: EntryMode::Token,
        entry_secret: Some(Secret::new(SECRET)),
        ..room(id, capacity)
    }
}

async fn app(rooms: Vec<RoomConfig>) -> (TestApp, RedisServer) {
    let r = RedisServer::start();
    let app = spawn_app(test_settings(
        Some(r.url()),
        &crate::helpers::prefix(),
        rooms,
    ))
    .await;
    (app, r)
}

/// A join from a fresh client (no cookie), with this body.
async fn join(app: &TestApp, room: &str, body: serde_json::Value) -> Reply {
    let client = reqwest::Client::new();
    Reply::from(
        client
            .post(app.url(&format!("/api/rooms/{room}/join")))
            .json(&body)
            .send()
            .await
            .unwrap(),
    )
    .await
}

/// A fresh client's join to room `t` with a good token for `sub`.
async fn join_as(app: &TestApp, sub: &str) -> Reply {
    join(
        app,
        "t",
        serde_json::json!({"enqueue_token": token(sub, "t", 60, SECRET)}),
    )
    .await
}

#[tokio::test]
async fn a_token_room_refuses_joins_without_a_valid_token_each_with_its_reason() {
    let (app, _r) = app(vec![token_room("t", 1), room("open", 1)]).await;
    for (body, code) in [
        (serde_json::json!({}), "token_required"),
        (
            serde_json::json!({"enqueue_token": token("u", "t", -120, SECRET)}),
            "token_expired",
        ),
        (
            serde_json::json!({"enqueue_token": token("u", "open", 60, SECRET)}),
            "token_wrong_room",
        ),
        (
            serde_json::json!({"enqueue_token": token("u", "t", 60, "forged-secret-0123456789abcdef01")}),
            "token_invalid",
        ),
        (
            serde_json::json!({"enqueue_token": "garbage"}),
            "token_invalid",
        ),
    ] {
        let r = join(&app, "t", body.clone()).await;
        assert_eq!(r.status, 401, "{body}");
        assert_eq!(r.body["error"]["code"], code, "{body}");
    }
    // Nobody got a place from any of that.
    let ok = join_as(&app, "u").await;
    assert_eq!((ok.status, ok.state()), (200, "admitted"));
    // A room without an entry key takes no tokens (rather than ignoring one).
    let r = join(
        &app,
        "open",
        serde_json::json!({"enqueue_token": token("u", "open", 60, SECRET)}),
    )
    .await;
    assert_eq!(
        (r.status, r.body["error"]["code"].as_str()),
        (401, Some("token_not_accepted"))
    );
}

#[tokio::test]
async fn two_browsers_with_the_same_sub_hold_one_place() {
    let (app, _r) = app(vec![token_room("t", 1)]).await;
    let holder = join_as(&app, "holder").await;
    assert_eq!(holder.state(), "admitted");
    let a = join_as(&app, "alice").await;
    let b = join_as(&app, "alice").await;
    assert_eq!((a.state(), b.state()), ("queued", "queued"));
    assert_eq!(a.body["position"], 1);
    assert_eq!(
        b.body["position"], 1,
        "the second browser gets the same place"
    );
    assert_eq!(b.body["queue_length"], 1, "the line did not grow");
    assert_eq!(a.body["support_code"], b.body["support_code"]);
    // Without a token, the second browser's own visitor token brings it back (it holds
    // the place); a fresh client without one is refused.
    let status = Reply::from(
        reqwest::Client::new()
            .get(app.url("/api/rooms/t/status"))
            .bearer_auth(b.token())
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        (status.status, status.body["position"].as_u64()),
        (200, Some(1))
    );
    let again = Reply::from(
        reqwest::Client::new()
            .post(app.url("/api/rooms/t/join"))
            .json(&serde_json::json!({"visitor_token": b.token()}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        (again.status, again.body["position"].as_u64()),
        (200, Some(1))
    );
    assert_eq!(join(&app, "t", serde_json::json!({})).await.status, 401);
}

#[tokio::test]
async fn a_stock_unit_is_taken_once_per_sub() {
    let (app, _r) = app(vec![RoomConfig {
        stock: Some(2),
        ..token_room("t", 5)
    }])
    .await;
    for _ in 0..3 {
        let r = join_as(&app, "alice").await;
        assert_eq!(r.state(), "admitted");
        assert_eq!(r.body["stock"], 1, "alice's browsers share one unit");
    }
    let bob = join_as(&app, "bob").await;
    assert_eq!(
        (bob.state(), bob.body["stock"].as_u64()),
        ("admitted", Some(0))
    );
}

#[tokio::test]
async fn the_queue_page_takes_the_token_in_its_address_and_explains_a_missing_one() {
    let (app, _r) = app(vec![token_room("t", 1)]).await;
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let r = client.get(app.url("/r/t")).send().await.unwrap();
    assert_eq!(r.status(), 401);
    let page = r.text().await.unwrap();
    assert!(page.contains("needs an invitation from the site"), "{page}");
    assert!(!page.contains("Try again"), "{page}");
    let url = app.url(&format!(
        "/r/t?enqueue_token={}",
        token("alice", "t", 60, SECRET)
    ));
    let r = client.get(url).send().await.unwrap();
    // The first in an empty room is let in at once (303 to the target).
    assert_eq!(r.status(), 303);
}

/// The socket's handshake joins too: a visitor token from another room (any signed
/// identity) gets no place in a token room that way; a token holder's socket works.
#[tokio::test]
async fn the_socket_handshake_gives_no_place_without_a_token() {
    use crate::helpers::ws::{connect, next_json};
    use tokio_tungstenite::tungstenite::Error as WsError;
    let (app, _r) = app(vec![token_room("t", 1), room("open", 1)]).await;
    let elsewhere = app.join("open").await.token();
    match connect(&app, "t", &elsewhere, None).await {
        Err(WsError::Http(res)) => assert_eq!(res.status(), 401),
        other => panic!("expected 401, got {:?}", other.map(|_| ())),
    }
    let holder = join_as(&app, "holder").await;
    assert_eq!(holder.state(), "admitted");
    let alice = join_as(&app, "alice").await;
    let mut ws = connect(&app, "t", &alice.token(), None).await.unwrap();
    let first = next_json(&mut ws, std::time::Duration::from_secs(10)).await;
    assert_eq!(
        (first["state"].as_str(), first["position"].as_u64()),
        (Some("queued"), Some(1))
    );
}
