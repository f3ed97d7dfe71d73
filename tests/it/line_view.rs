//! A queued visitor's status answered from the instance's view of the line
//! (`store.local_status`, docs/design.md#status-from-the-line-view), on a real Redis: it
//! says what the store says (the position `ZRANK` gives), and the store answers whatever
//! the view cannot.

use std::time::{Duration, Instant};

use anteroom::room::RoomConfig;
use anteroom::store::RoomPatch;
use serde_json::Value;

use crate::helpers::{prefix, room, spawn_app, test_settings, wait_until, RedisServer, TestApp};

const DEADLINE: Duration = Duration::from_secs(15);

/// One slot and a 10-minute heartbeat timeout (a heartbeat step of 37.5 s: no status in
/// these tests is due to write one).
fn slow_heartbeat(id: &str) -> RoomConfig {
    RoomConfig {
        heartbeat_timeout_secs: 600,
        ..room(id, 1)
    }
}

async fn app(local_status: bool) -> (TestApp, RedisServer) {
    let r = RedisServer::start();
    let mut s = test_settings(Some(r.url()), &prefix(), vec![slow_heartbeat("r")]);
    s.store.local_status = local_status;
    (spawn_app(s).await, r)
}

fn answers(app: &TestApp, source: &str) -> u64 {
    app.engine
        .metrics()
        .status_answers
        .with_label_values(&[source])
        .get()
}

/// The visitor's status over HTTP, and whether this instance answered it from the line.
async fn status(app: &TestApp, token: &str) -> (Value, bool) {
    let before = answers(app, "line");
    let r = app.status("r", token).await;
    assert_eq!(r.status, 200, "{}", r.body);
    (r.body, answers(app, "line") > before)
}

fn visitor_of(app: &TestApp, token: &str) -> String {
    app.engine
        .visitors()
        .verify(token)
        .expect("a token this app signed")
        .as_str()
        .to_string()
}

/// Waits until the visitor's status is answered from the line at `position`.
async fn answered_from_the_line_at(app: &TestApp, token: &str, position: u64) {
    wait_until(
        DEADLINE,
        "the position counted from the line log",
        || async {
            let (b, local) = status(app, token).await;
            (local && b["position"].as_u64() == Some(position)).then_some(())
        },
    )
    .await;
}

/// Pauses or resumes room `r` straight in the store (as another instance's admin would).
async fn pause(app: &TestApp, paused: bool) {
    let patch = RoomPatch {
        paused: Some(paused),
        ..Default::default()
    };
    app.engine
        .room_store()
        .patch_room("r", &patch)
        .await
        .unwrap();
}

/// What the store itself says of the visitor's place: the position `ZRANK` gives.
async fn store_position(app: &TestApp, token: &str) -> u64 {
    let v = visitor_of(app, token);
    app.engine
        .admission_store()
        .status("r", &v)
        .await
        .unwrap()
        .position
}

#[tokio::test]
async fn a_queued_status_is_answered_from_the_line_and_moves_as_places_ahead_leave() {
    let (app, _r) = app(true).await;
    let first = app.join("r").await; // holds the slot
    assert_eq!(first.state(), "admitted");
    let mut queued = Vec::new();
    for _ in 0..3 {
        queued.push(app.join("r").await.token());
    }
    let last = &queued[2];
    // Once the hub follows the room, the status of the last is answered here.
    let body = wait_until(DEADLINE, "a status answered from the line", || async {
        let (b, local) = status(&app, last).await;
        local.then_some(b)
    })
    .await;
    assert_eq!(
        (body["state"].as_str(), body["position"].as_u64()),
        (Some("queued"), Some(3))
    );
    assert_eq!(body["queue_length"].as_u64(), Some(3));
    let store_calls = answers(&app, "store");
    // The one ahead releases: the line's view moves the last up within a tick.
    app.release("r", &queued[0]).await;
    answered_from_the_line_at(&app, last, 2).await;
    assert_eq!(store_position(&app, last).await, 2, "what ZRANK says");
    // The admitted one leaves: the head is promoted (its place leaves the line), the last
    // moves up again; the promoted visitor's own status is the store's (admitted).
    app.release("r", &first.token()).await;
    answered_from_the_line_at(&app, last, 1).await;
    assert_eq!(store_position(&app, last).await, 1);
    assert_eq!(
        answers(&app, "store"),
        store_calls,
        "none of those asked the store"
    );
    let (b, local) = status(&app, &queued[1]).await;
    assert_eq!(b["state"], "admitted");
    assert!(!local, "an admission is the store's to tell");
}

#[tokio::test]
async fn a_paused_room_and_a_flushed_line_are_the_stores_to_tell() {
    let (app, _r) = app(true).await;
    app.join("r").await;
    let t = app.join("r").await.token();
    wait_until(DEADLINE, "a status answered from the line", || async {
        status(&app, &t).await.1.then_some(())
    })
    .await;
    // Paused behind this instance's back (another instance's admin): within a tick the
    // view says so, and the store answers.
    pause(&app, true).await;
    let b = wait_until(DEADLINE, "the pause seen", || async {
        let (b, local) = status(&app, &t).await;
        (b["state"] == "paused").then_some((b, local))
    })
    .await;
    assert!(!b.1, "a paused room's status comes from the store");
    pause(&app, false).await;
    wait_until(DEADLINE, "answered from the line again", || async {
        status(&app, &t).await.1.then_some(())
    })
    .await;
    // Emptied behind its back: the log's new epoch ends the view's answers.
    app.engine.admin_store().flush("r").await.unwrap();
    let b = wait_until(DEADLINE, "the flush seen", || async {
        let (b, local) = status(&app, &t).await;
        (b["state"] == "not_queued").then_some(local)
    })
    .await;
    assert!(!b);
}

#[tokio::test]
async fn with_local_status_off_every_status_asks_the_store() {
    let (app, _r) = app(false).await;
    app.join("r").await;
    let t = app.join("r").await.token();
    // Past two hub ticks: a room it followed would have a view by now.
    let until = Instant::now() + Duration::from_millis(2_500);
    let mut n = 0;
    while Instant::now() < until || n < 5 {
        let (b, local) = status(&app, &t).await;
        assert_eq!(b["position"].as_u64(), Some(1));
        assert!(!local);
        n += 1;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(answers(&app, "store"), n);
}

/// A small linear congruential generator: the same run every time.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

/// Joins, releases of queued and admitted visitors (each admission from the head is a
/// place leaving the line) in a random order; whenever the hub's view has caught up with
/// the store, every status the view answers is the position `ZRANK` gives.
#[tokio::test]
async fn every_answer_from_the_line_is_the_position_zrank_gives() {
    let (app, _r) = app(true).await;
    let mut rng = Lcg(15);
    let mut tokens: Vec<String> = Vec::new();
    for _ in 0..12 {
        tokens.push(app.join("r").await.token());
    }
    let mut local = 0;
    for round in 0..8 {
        // Every visitor's place as the store gives it now, learned here.
        for t in &tokens {
            let v = visitor_of(&app, t);
            let s = app
                .engine
                .admission_store()
                .status_placed("r", &v)
                .await
                .unwrap();
            app.engine.line_views().learn("r", &v, &s, Instant::now());
        }
        // Then the line changes: newcomers at the back, places and sessions released
        // (each session released admits the head).
        for _ in 0..4 {
            match rng.below(3) {
                0 => tokens.push(app.join("r").await.token()),
                _ if tokens.len() > 3 => {
                    let t = tokens.remove(rng.below(tokens.len()));
                    app.release("r", &t).await;
                }
                _ => {}
            }
        }
        // Once the hub's view is at the store's cursor, every answer it gives is exact.
        let v0 = visitor_of(&app, &tokens[0]);
        wait_until(DEADLINE, "the view at the store's cursor", || async {
            let now = app
                .engine
                .admission_store()
                .status("r", &v0)
                .await
                .unwrap()
                .line;
            (app.engine.line_views().cursor("r") == Some(now)).then_some(())
        })
        .await;
        for t in &tokens {
            let v = visitor_of(&app, t);
            let Some(s) = app.engine.line_views().answer("r", &v, Instant::now()) else {
                continue;
            };
            local += 1;
            let want = app.engine.admission_store().status("r", &v).await.unwrap();
            assert_eq!(
                (s.position, s.state),
                (want.position, want.state),
                "round {round}: {v}"
            );
        }
    }
    assert!(local >= 30, "only {local} answers came from the line");
}

/// The store loses its data while a visitor's statuses are answered from the line: the
/// answers stop once the loss is noted, so the last place receipt the visitor got was
/// issued before it, and a join with that receipt puts the place back (fails when views
/// outlive the loss: a receipt dated after it restores nothing, and the join waits out
/// the restore hold with `503 store_restoring`).
#[tokio::test]
async fn a_data_loss_ends_the_answers_and_the_last_receipt_puts_the_place_back() {
    let (app, r) = app(true).await;
    app.join("r").await; // holds the slot
    let t = app.join("r").await.token();
    wait_until(DEADLINE, "a status answered from the line", || async {
        status(&app, &t).await.1.then_some(())
    })
    .await;
    let _: () = redis::cmd("FLUSHALL").query(&mut r.conn()).unwrap();
    // Poll as the page would (faster), keeping the latest receipt, until the store's own
    // answer says the place is gone.
    let deadline = Instant::now() + DEADLINE;
    let mut receipt = None;
    loop {
        let r = app.status("r", &t).await;
        if let Some(p) = r.body["place_receipt"].as_str() {
            receipt = Some(p.to_string());
        }
        if r.status == 503 || r.body["state"] == "not_queued" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the loss never showed in the status"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let receipt = receipt.expect("a receipt from before the loss");
    // Until the keeper has the room back the join may find no room; once it has, the
    // receipt puts the place back at once, never `store_restoring` (a newcomer's answer).
    let back = wait_until(DEADLINE, "the place put back", || async {
        let j = app.join_with_receipt("r", &t, &receipt).await;
        assert_ne!(
            j.error_code(),
            "store_restoring",
            "the receipt restored nothing"
        );
        (j.status == 200).then_some(j)
    })
    .await;
    assert_eq!(back.state(), "queued", "{}", back.body);
    assert_eq!(back.body["position"].as_u64(), Some(1));
}

/// Waits until the visitor's status is answered from the line; returns its body.
async fn answered_from_the_line(app: &TestApp, room: &str, token: &str) -> Value {
    wait_until(DEADLINE, "a status answered from the line", || async {
        let before = answers(app, "line");
        let r = app.status(room, token).await;
        assert_eq!(r.status, 200, "{}", r.body);
        (answers(app, "line") > before).then_some(r.body)
    })
    .await
}

/// Issue 35: an admitted visitor's status, once the store has answered one (and made its
/// claim), is answered here, and says what the store says (the same session and pass).
#[tokio::test]
async fn an_admitted_status_is_answered_here_after_the_stores_first_answer() {
    let (app, _r) = app(true).await;
    let t = app.join("r").await.token();
    let before = answers(&app, "line");
    let first = app.status("r", &t).await;
    assert_eq!(first.body["state"], "admitted", "{}", first.body);
    assert_eq!(
        answers(&app, "line"),
        before,
        "the first status is the store's (it claims the session)"
    );
    let body = answered_from_the_line(&app, "r", &t).await;
    assert_eq!(body["state"], "admitted");
    for field in ["pass", "expires_at", "admitted_at", "redirect_url"] {
        assert_eq!(body[field], first.body[field], "{field}");
    }
    assert_eq!(body["active"].as_u64(), Some(1));
    // The next ones too, without a store call.
    let store_calls = answers(&app, "store");
    for _ in 0..5 {
        assert!(status(&app, &t).await.1);
    }
    assert_eq!(answers(&app, "store"), store_calls);
    // Released through this instance: the store's to tell at once.
    app.release("r", &t).await;
    let (b, local) = status(&app, &t).await;
    assert_eq!(b["state"], "not_queued", "{b}");
    assert!(!local);
}

/// A session released through another instance (or removed, revoked, taken back as a
/// no-show: each writes the revocation log) stops being answered here within the log's
/// poll, not at the session's end (fails if the instance answers from what it learned
/// until the session runs out: 60 s here).
#[tokio::test]
async fn a_session_ended_through_another_instance_is_not_answered_here_after_the_next_poll() {
    let r = RedisServer::start();
    let p = prefix();
    let a = spawn_app(test_settings(Some(r.url()), &p, vec![slow_heartbeat("r")])).await;
    let b = spawn_app(test_settings(Some(r.url()), &p, vec![slow_heartbeat("r")])).await;
    let t = a.join("r").await.token();
    a.status("r", &t).await;
    answered_from_the_line(&a, "r", &t).await;
    let released = b.release("r", &t).await;
    assert_eq!(released.status, 204, "{}", released.body);
    let ended_at = Instant::now();
    let (body, local) = wait_until(
        DEADLINE,
        "the release seen on the other instance",
        || async {
            let (body, local) = status(&a, &t).await;
            (body["state"] != "admitted").then_some((body, local))
        },
    )
    .await;
    let took = ended_at.elapsed();
    assert_eq!(body["state"], "not_queued", "{body}");
    assert!(!local, "the end is the store's to tell");
    // The poll is every 250 ms; the rest is slack for a loaded machine.
    assert!(took < Duration::from_secs(3), "seen after {took:?}");
}

/// A room that renews sessions on activity: another instance's renewal moves the end and
/// no log says so, so its admitted statuses stay the store's (the plain room beside it
/// shows the instance answering admitted statuses meanwhile).
#[tokio::test]
async fn an_admitted_status_in_a_room_renewing_sessions_is_the_stores() {
    let r = RedisServer::start();
    let renewing = RoomConfig {
        renew_on_activity: true,
        max_session_secs: 600,
        ..slow_heartbeat("renews")
    };
    let app = spawn_app(test_settings(
        Some(r.url()),
        &prefix(),
        vec![slow_heartbeat("r"), renewing],
    ))
    .await;
    let plain = app.join("r").await.token();
    let renews = app.join("renews").await.token();
    for _ in 0..2 {
        app.status("renews", &renews).await;
    }
    app.status("r", &plain).await;
    answered_from_the_line(&app, "r", &plain).await;
    let before = answers(&app, "line");
    for _ in 0..3 {
        let s = app.status("renews", &renews).await;
        assert_eq!(s.body["state"], "admitted", "{}", s.body);
    }
    assert_eq!(answers(&app, "line"), before, "asked the store");
}

/// A release through this instance lets the head of the line in: the promoted visitor's
/// next status, right after the release answered, says admitted, though the admission
/// message the store published never reached this instance (its subscription was cut, as
/// in a failover) and the hub's view of the line is a tick behind.
#[tokio::test]
async fn the_visitor_a_release_here_lets_in_is_told_admitted_at_once() {
    let (app, r) = app(true).await;
    let holder = app.join("r").await;
    assert_eq!(holder.state(), "admitted");
    let head = app.join("r").await.token();
    let next = app.join("r").await.token();
    answered_from_the_line_at(&app, &head, 1).await;
    answered_from_the_line_at(&app, &next, 2).await;
    // Cut the instance's admission subscription (it comes back after a backoff).
    let killed: i64 = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("TYPE")
        .arg("pubsub")
        .query(&mut r.conn())
        .unwrap();
    assert!(killed >= 1, "the instance subscribes to admissions");
    let released = app.release("r", &holder.token()).await;
    assert!(released.status / 100 == 2, "{:?}", released.body);
    let (b, local) = status(&app, &head).await;
    assert_eq!(b["state"], "admitted", "{b}");
    assert!(!local, "an admission is the store's to tell");
    // The rest of the line moves up within a tick.
    answered_from_the_line_at(&app, &next, 1).await;
}
