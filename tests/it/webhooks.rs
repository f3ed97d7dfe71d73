//! Signed webhooks against a real local receiver (`helpers::receiver`: a hyper server on a
//! free port) that checks every signature itself, never through Anteroom's signing code.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::admin::{admin, admin_settings};
use crate::helpers::receiver::{secret, Mode, Received, Receiver, KEY_B64};
use crate::helpers::{
    prefix, redis_store, room, spawn_app, test_settings, wait_until, RedisServer, Reply,
    ServerProcess,
};
use anteroom::config::Settings;
use anteroom::room::{RoomConfig, WebhookSecret};
use anteroom::store::prelude::*;
use anteroom::store::Store;

fn v(i: usize) -> String {
    format!("{i:032x}")
}

fn hooked(id: &str, capacity: u64, url: &str) -> RoomConfig {
    RoomConfig {
        webhook_url: Some(url.into()),
        webhook_secret: Some(WebhookSecret::new(secret())),
        ..room(id, capacity)
    }
}

#[tokio::test]
async fn a_delivery_is_signed_and_a_failed_one_is_retried_with_the_same_id_within_5_s() {
    // The memory store (the single-instance demo) and the default retry base (5 s).
    let rx = Receiver::start(Mode::FailFirstAttempt).await;
    let settings = test_settings(None, &prefix(), vec![hooked("r", 5, &rx.url())]);
    assert_eq!(settings.webhooks.retry_base_ms, 5000, "the default base");
    let app = spawn_app(settings).await;

    let joined = app.join("r").await;
    assert_eq!(joined.state(), "admitted");

    let log = wait_until(
        Duration::from_secs(15),
        "the first attempt and its retry",
        || {
            let log = rx.log();
            async move { (log.len() >= 2).then_some(log) }
        },
    )
    .await;
    let (first, retry) = (&log[0], &log[1]);
    assert_eq!((first.status, retry.status), (500, 200));
    assert_eq!(retry.id, first.id, "a retry carries the same webhook-id");
    assert_eq!(retry.body, first.body, "and the same body");
    assert!(first.valid && retry.valid, "signatures: {log:?}");
    assert!(first.id.starts_with("msg_r_"), "{}", first.id);
    assert_eq!(first.content_type, "application/json");
    assert!(retry.signature.starts_with("v1,"));
    let gap = retry.at - first.at;
    assert!(
        gap <= Duration::from_millis(6500),
        "the first retry came {gap:?} after the failure (base 5 s, full jitter, 0.5 s passes)"
    );

    let body = first.json();
    assert_eq!(body["type"], "admission");
    assert_eq!(body["data"]["room"], "r");
    assert!(body["data"]["serial"].is_u64(), "{body}");
    let visitor = body["data"]["visitor"].as_str().unwrap().to_string();
    assert_eq!(visitor.len(), 32, "the visitor id: {body}");
    assert!(joined.token().starts_with(&visitor));
    let event_id = body["data"]["event_id"].as_str().unwrap();
    assert_eq!(first.id, format!("msg_r_{event_id}"));
    // RFC 3339, UTC.
    let ts = body["timestamp"].as_str().unwrap();
    assert!(
        ts.len() == 24 && ts.ends_with('Z') && &ts[10..11] == "T",
        "{ts}"
    );

    // Delivered once: nothing is pending in the store.
    wait_until(Duration::from_secs(5), "no retry pending", || {
        let s = app.engine.shared_store();
        async move { (s.webhook_counts("r").await.unwrap().pending == 0).then_some(()) }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_admission_of_a_2000_visitor_drop_is_in_the_stream_once_and_at_the_receiver_though_it_was_down_10_s(
) {
    let rx = Receiver::start(Mode::DownUntil(Instant::now() + Duration::from_secs(10))).await;
    let redis = RedisServer::start();
    let mut settings = test_settings(
        Some(redis.url()),
        &prefix(),
        vec![hooked("drop", 2000, &rx.url())],
    );
    settings.webhooks.interval_ms = 200;
    settings.webhooks.retry_base_ms = 1000;
    settings.webhooks.retry_cap_ms = 4000;
    settings.webhooks.max_attempts = 100;
    let app = spawn_app(settings).await;
    let store = app.engine.shared_store();

    let started = Instant::now();
    let visitors: Vec<String> = (0..2000).map(v).collect();
    for part in visitors.chunks(200) {
        let snaps = join_all(part.iter().map(|id| store.join("drop", id))).await;
        for s in snaps {
            assert_eq!(s.unwrap().state, anteroom::store::VisitorState::Admitted);
        }
    }
    let joined: HashSet<String> = visitors.iter().cloned().collect();

    // At the receiver: at least once, exactly the 2000 admissions once deduplicated.
    let delivered = wait_until(
        Duration::from_secs(120),
        "all 2000 admissions delivered",
        || {
            let log = rx.log();
            async move {
                let ok: HashMap<String, Received> = log
                    .into_iter()
                    .filter(|r| r.status == 200)
                    .map(|r| (r.id.clone(), r))
                    .collect();
                let admissions = ok
                    .values()
                    .filter(|r| r.json()["type"] == "admission")
                    .count();
                (admissions >= 2000).then_some(ok)
            }
        },
    )
    .await;
    let took = started.elapsed();
    let log = rx.log();
    assert!(
        log.iter().all(|r| r.valid),
        "every request carries a valid signature"
    );
    let refused = log.iter().filter(|r| r.status == 503).count();
    assert!(refused > 0, "the receiver was down at first");
    let admitted: Vec<String> = delivered
        .values()
        .map(|r| r.json())
        .filter(|b| b["type"] == "admission")
        .map(|b| b["data"]["visitor"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(admitted.len(), 2000);
    assert_eq!(admitted.iter().cloned().collect::<HashSet<_>>(), joined);

    // In the stream: each admission exactly once.
    let events = store.events("drop", "0", 10_000).await.unwrap();
    let in_stream: Vec<&String> = events
        .iter()
        .filter(|e| e.kind == "admission")
        .map(|e| e.visitor.as_ref().unwrap())
        .collect();
    assert_eq!(in_stream.len(), 2000);
    assert_eq!(
        in_stream.into_iter().cloned().collect::<HashSet<_>>(),
        joined
    );
    eprintln!(
        "2000 admissions delivered {took:?} after the drop began (receiver down 10 s); \
         {} requests, {refused} refused",
        log.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pending_retry_is_delivered_by_a_new_process_after_the_first_is_killed() {
    let rx = Receiver::start(Mode::AlwaysFail).await;
    let redis = RedisServer::start();
    let pfx = prefix();
    let extra = format!(
        "redis_url = \"{}\"\nkey_prefix = \"{pfx}\"\n\
         [[rooms]]\nid = \"r\"\ncapacity = 10\ntarget_url = \"https://origin.example/in\"\n\
         webhook_url = \"{}\"\nwebhook_secret = \"{}\"\n\
         [webhooks]\ninterval_ms = 100\ntimeout_ms = 1000\nretry_base_ms = 500\nretry_cap_ms = 1000\n",
        redis.url(),
        rx.url(),
        secret()
    );
    let mut first = ServerProcess::start(&extra);
    let store = redis_store(&redis.url(), &pfx).await;
    assert_eq!(
        store.join("r", &v(1)).await.unwrap().state,
        anteroom::store::VisitorState::Admitted
    );
    let failed_id = wait_until(Duration::from_secs(15), "a failed attempt parked", || {
        let (log, store) = (rx.log(), &store);
        async move {
            let pending = store.webhook_counts("r").await.unwrap().pending;
            (pending == 1 && !log.is_empty()).then(|| log[0].id.clone())
        }
    })
    .await;
    first.kill(); // SIGKILL: no lease given back, nothing flushed
    let killed_at = Instant::now();
    rx.set_mode(Mode::Ok);

    let _second = ServerProcess::start(&extra);
    let delivered = wait_until(
        Duration::from_secs(30),
        "the retry delivered by the new process",
        || {
            let log = rx.log();
            let id = failed_id.clone();
            async move {
                log.into_iter()
                    .find(|r| r.status == 200 && r.id == id && r.at > killed_at)
            }
        },
    )
    .await;
    assert!(delivered.valid);
    assert_eq!(delivered.json()["data"]["visitor"], v(1));
    wait_until(Duration::from_secs(5), "nothing pending", || {
        let store = &store;
        async move { (store.webhook_counts("r").await.unwrap().pending == 0).then_some(()) }
    })
    .await;
    // The cursor lives in the store: the new process did not start the stream over.
    let ok = rx.log().iter().filter(|r| r.status == 200).count();
    assert_eq!(ok, 1, "one event, delivered once");
}

#[tokio::test]
async fn a_receiver_that_always_fails_makes_a_dead_letter_shown_in_the_store_metrics_and_dashboard()
{
    let rx = Receiver::start(Mode::AlwaysFail).await;
    let redis = RedisServer::start();
    let mut settings = admin_settings(&redis, &prefix(), vec![]);
    settings.webhooks.interval_ms = 100;
    settings.webhooks.retry_base_ms = 100;
    settings.webhooks.retry_cap_ms = 200;
    settings.webhooks.max_attempts = 2;
    let app = spawn_app(settings).await;

    // Created through the admin API; the secret is never echoed back.
    let r = admin(
        &app,
        Method::PUT,
        "/api/admin/rooms/r",
        Some(json!({
            "target_url": "https://origin.example/in",
            "webhook_url": rx.url(),
            "webhook_secret": secret(),
        })),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["config"]["webhook_url"], rx.url());
    assert_eq!(r.body["config"]["webhook_secret"], "[set]");
    assert!(!r.body.to_string().contains(KEY_B64));

    assert_eq!(app.join("r").await.state(), "admitted");
    let store = app.engine.shared_store();
    wait_until(Duration::from_secs(15), "one dead letter", || {
        let store = store.clone();
        async move {
            let c = store.webhook_counts("r").await.unwrap();
            (c.dead_letters == 1 && c.pending == 0).then_some(())
        }
    })
    .await;
    // The one event (the admission), tried max_attempts = 2 times under one id.
    assert_eq!(store.events("r", "0", 100).await.unwrap().len(), 1);
    let log = rx.log();
    assert_eq!(log.len(), 2, "{log:?}");
    assert_eq!(log[0].id, log[1].id);

    let metrics = app
        .client
        .get(app.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("anteroom_webhook_dead_letters{room=\"r\"} 1"),
        "{metrics}"
    );
    assert!(metrics.contains("anteroom_webhook_deliveries_total{outcome=\"dead\",room=\"r\"} 1"));
    assert!(metrics.contains("anteroom_webhook_deliveries_total{outcome=\"failed\",room=\"r\"} 1"));

    // The dashboard's figures (the room card is filled from these) and its slot.
    let detail = admin(&app, Method::GET, "/api/admin/rooms/r", None).await;
    assert_eq!(
        detail.body["live"]["webhook"]["dead_letters"], 1,
        "{}",
        detail.body
    );
    assert_eq!(detail.body["config"]["webhook_secret"], "[set]");
    let overview = admin(&app, Method::GET, "/api/admin/rooms", None).await;
    assert_eq!(overview.body["rooms"][0]["webhook"]["dead_letters"], 1);
    let login = crate::helpers::admin::login(&app, crate::helpers::admin::TOKEN).await;
    let cookie = crate::helpers::admin::session_cookie(&login).unwrap();
    let page = app
        .client
        .get(app.url("/admin"))
        .header("cookie", cookie.split(';').next().unwrap())
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("data-f=\"webhook\""), "the room card's slot");

    // A configuration sent back as it was read keeps the secret.
    let back = admin(
        &app,
        Method::PUT,
        "/api/admin/rooms/r",
        Some(json!({"webhook_url": rx.url(), "webhook_secret": "[set]"})),
    )
    .await;
    assert_eq!(back.status, 200, "{}", back.body);
    let kept = store
        .room("r")
        .await
        .unwrap()
        .unwrap()
        .webhook_secret
        .unwrap();
    assert_eq!(kept.expose(), secret());

    // Neither the audit log shows the secret.
    let audit = admin(&app, Method::GET, "/api/admin/audit", None).await;
    assert_eq!(audit.status, 200);
    assert!(!audit.body.to_string().contains(KEY_B64), "{}", audit.body);
}

#[tokio::test]
async fn bad_webhook_urls_and_secrets_are_refused_naming_the_field() {
    let redis = RedisServer::start();
    let app = spawn_app(admin_settings(&redis, &prefix(), vec![room("r", 1)])).await;
    let cases = [
        (
            json!({"webhook_url": "ftp://x", "webhook_secret": secret()}),
            "webhook_url",
        ),
        (
            json!({"webhook_url": "not a url", "webhook_secret": secret()}),
            "webhook_url",
        ),
        (
            json!({"webhook_url": "http://x.example/h"}),
            "webhook_secret",
        ),
        (
            json!({"webhook_url": "http://x.example/h", "webhook_secret": "c2VjcmV0"}),
            "webhook_secret",
        ),
        (
            json!({"webhook_url": "http://x.example/h", "webhook_secret": "whsec_not base64!"}),
            "webhook_secret",
        ),
        (json!({"webhook_secret": "whsec_"}), "webhook_secret"),
    ];
    for (body, field) in cases {
        let r = admin(&app, Method::PUT, "/api/admin/rooms/r", Some(body.clone())).await;
        assert_eq!((r.status, r.error_code()), (400, "invalid_field"), "{body}");
        assert_eq!(r.body["error"]["field"], field, "{body}");
    }
    // A new room is not created either.
    let r = admin(
        &app,
        Method::PUT,
        "/api/admin/rooms/new",
        Some(json!({"target_url": "https://origin.example/", "webhook_url": "ftp://x", "webhook_secret": secret()})),
    )
    .await;
    assert_eq!(r.body["error"]["field"], "webhook_url");
    assert_eq!(
        admin(&app, Method::GET, "/api/admin/rooms/new", None)
            .await
            .status,
        404
    );
    let r = admin(&app, Method::GET, "/api/admin/rooms/r", None).await;
    assert!(
        r.body["config"].get("webhook_url").is_none(),
        "nothing changed"
    );

    // A good pair is taken.
    let r = admin(
        &app,
        Method::PUT,
        "/api/admin/rooms/r",
        Some(json!({"webhook_url": "https://shop.example/hook", "webhook_secret": secret()})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
}

#[test]
fn a_bad_webhook_in_the_config_file_stops_start_up_naming_the_field() {
    let cases = [
        (
            "webhook_url = \"ftp://x\"\nwebhook_secret = \"whsec_c2VjcmV0\"",
            "rooms[0].webhook_url",
        ),
        (
            "webhook_url = \"not a url\"\nwebhook_secret = \"whsec_c2VjcmV0\"",
            "rooms[0].webhook_url",
        ),
        (
            "webhook_url = \"https://x.example/\"\nwebhook_secret = \"c2VjcmV0\"",
            "rooms[0].webhook_secret",
        ),
        (
            "webhook_url = \"https://x.example/\"\nwebhook_secret = \"whsec_%%%\"",
            "rooms[0].webhook_secret",
        ),
        (
            "webhook_url = \"https://x.example/\"",
            "rooms[0].webhook_secret",
        ),
    ];
    for (keys, field) in cases {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("anteroom.toml");
        std::fs::write(
            &path,
            format!("[[rooms]]\nid = \"r\"\ntarget_url = \"https://x.example/\"\n{keys}\n"),
        )
        .unwrap();
        let err = Settings::load(Some(&path)).unwrap_err().to_string();
        assert!(err.contains(&format!("`{field}`")), "{keys}: {err}");
    }
    // And the [webhooks] section's ranges.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("anteroom.toml");
    std::fs::write(&path, "[webhooks]\nmax_attempts = 0\n").unwrap();
    let err = Settings::load(Some(&path)).unwrap_err().to_string();
    assert!(err.contains("webhooks.max_attempts"), "{err}");
}

#[tokio::test]
async fn an_https_receiver_gets_signed_deliveries() {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let ca = crate::helpers::tls::TestCa::new();
    let leaf = ca.leaf("receiver");
    let certs = vec![CertificateDer::from_pem_slice(leaf.cert_pem.as_bytes()).unwrap()];
    let key = PrivateKeyDer::from_pem_slice(leaf.key_pem.as_bytes()).unwrap();
    let server = rustls::ServerConfig::builder_with_provider(anteroom::tls::provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    let rx = Receiver::start_with(
        Mode::Ok,
        Some(tokio_rustls::TlsAcceptor::from(Arc::new(server))),
    )
    .await;
    let url = format!("https://localhost:{}/hooks", rx.port);

    let store: Arc<dyn Store> = Arc::new(anteroom::store::memory::MemoryStore::new());
    store.put_room(&hooked("r", 5, &url), true).await.unwrap();
    store.join("r", &v(7)).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ca_file = dir.path().join("ca.pem");
    std::fs::write(&ca_file, ca.pem()).unwrap();
    let cfg = Settings::default().webhooks;
    let d = anteroom::webhook::Deliverer {
        store: store.clone(),
        client: anteroom::webhook::client::WebhookClient::with_ca_file(
            Duration::from_millis(cfg.timeout_ms),
            &ca_file,
        )
        .unwrap(),
        holder: "test".into(),
        cfg,
        metrics: anteroom::metrics::Metrics::new(),
    };

    let out = anteroom::webhook::deliver_once(&d).await.unwrap();
    assert_eq!((out.delivered, out.failed), (1, 0), "{out:?}");
    let log = rx.log();
    assert_eq!(log.len(), 1);
    assert!(log[0].valid);
    assert_eq!(log[0].json()["data"]["visitor"], v(7));
    // One pass delivered it: the cursor moved past it, nothing is sent twice.
    let out = anteroom::webhook::deliver_once(&d).await.unwrap();
    assert_eq!((out.delivered, out.failed), (0, 0));
}

#[tokio::test]
async fn one_instance_at_a_time_delivers_a_room() {
    let rx = Receiver::start(Mode::Ok).await;
    let redis = RedisServer::start();
    let pfx = prefix();
    let store: Arc<dyn Store> = Arc::new(redis_store(&redis.url(), &pfx).await);
    store
        .put_room(&hooked("r", 5, &rx.url()), true)
        .await
        .unwrap();
    store.join("r", &v(1)).await.unwrap();
    let deliverer = |holder: &str| {
        anteroom::webhook::Deliverer::new(
            store.clone(),
            holder.into(),
            Settings::default().webhooks,
            anteroom::metrics::Metrics::new(),
        )
        .unwrap()
    };
    let (a, b) = (deliverer("a"), deliverer("b"));

    let first = anteroom::webhook::deliver_once(&a).await.unwrap();
    assert_eq!((first.rooms_worked, first.delivered), (1, 1), "{first:?}");
    store.join("r", &v(2)).await.unwrap();
    let other = anteroom::webhook::deliver_once(&b).await.unwrap();
    assert_eq!(
        (other.rooms_worked, other.rooms_skipped, other.delivered),
        (0, 1, 0),
        "the lease is held by a: {other:?}"
    );
    let again = anteroom::webhook::deliver_once(&a).await.unwrap();
    assert_eq!(again.delivered, 1, "the holder goes on from its cursor");
    let ids: HashSet<String> = rx.log().into_iter().map(|r| r.id).collect();
    assert_eq!((rx.log().len(), ids.len()), (2, 2), "each event once");
}

/// Issue 30 finding 13: dead letters were a bare count. Each is now listed with its
/// event, body, attempts and the last attempt's error, and replayed (one, or all) through
/// the admin API: the deliverer sends it again, same `webhook-id` and body, to a real
/// receiver.
#[tokio::test]
async fn dead_letters_are_listed_with_their_reason_and_a_replay_delivers_them() {
    let rx = Receiver::start(Mode::AlwaysFail).await;
    let redis = RedisServer::start();
    let mut settings = admin_settings(&redis, &prefix(), vec![hooked("r", 5, &rx.url())]);
    settings.webhooks.interval_ms = 100;
    settings.webhooks.retry_base_ms = 100;
    settings.webhooks.retry_cap_ms = 200;
    settings.webhooks.max_attempts = 2;
    let app = spawn_app(settings).await;
    let list = "/api/admin/rooms/r/webhook/dead-letters";

    // Two admissions, each tried twice and given up.
    assert_eq!(app.join("r").await.state(), "admitted");
    assert_eq!(app.join("r").await.state(), "admitted");
    let letters = wait_until(Duration::from_secs(15), "two dead letters", || {
        let app = &app;
        async move {
            let r = admin(app, Method::GET, list, None).await;
            assert_eq!(r.status, 200, "{}", r.body);
            (r.body["dead_letters"].as_array().unwrap().len() == 2).then_some(r.body)
        }
    })
    .await;
    assert_eq!(
        letters["counts"],
        json!({"pending": 0, "dead_letters": 2, "dead_letters_kept": 2})
    );
    let sent = rx.log();
    assert_eq!(sent.len(), 4, "two events, two attempts each: {sent:?}");
    for l in letters["dead_letters"].as_array().unwrap() {
        let event_id = l["event_id"].as_str().unwrap();
        assert_eq!(l["type"], "admission");
        assert_eq!(l["attempts"], 2);
        assert_eq!(l["error"], "the receiver answered HTTP 500");
        assert_eq!(l["webhook_id"], format!("msg_r_{event_id}"));
        assert_eq!(l["payload"]["data"]["event_id"], event_id);
        assert_eq!(l["payload"]["data"]["room"], "r");
        let at = l["dead_at"].as_u64().unwrap();
        assert!(at > 1_600_000_000_000, "{at}");
        // The payload is the body the receiver got.
        let got = sent.iter().find(|s| s.id == l["webhook_id"]).unwrap();
        assert_eq!(got.json(), l["payload"]);
    }
    let last_dead = letters["dead_letters"][0]["event_id"]
        .as_str()
        .unwrap()
        .to_string();
    let first_dead = letters["dead_letters"][1]["event_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        letters["dead_letters"][0]["dead_at"].as_u64()
            >= letters["dead_letters"][1]["dead_at"].as_u64(),
        "the last_dead given up first: {letters}"
    );

    // The receiver is back; one letter is replayed and delivered, same id and body.
    rx.set_mode(Mode::Ok);
    let one = format!("{list}/{first_dead}/replay");
    let r = admin(&app, Method::POST, &one, None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body, json!({"replayed": [first_dead]}));
    let id = format!("msg_r_{first_dead}");
    let delivered = wait_until(Duration::from_secs(10), "the replay delivered", || {
        let (rx, id) = (&rx, id.clone());
        async move { rx.log().into_iter().find(|s| s.id == id && s.status == 200) }
    })
    .await;
    assert!(delivered.valid, "signed: {delivered:?}");
    assert_eq!(delivered.json(), letters["dead_letters"][1]["payload"]);
    let after = admin(&app, Method::GET, list, None).await;
    assert_eq!(after.body["dead_letters"].as_array().unwrap().len(), 1);
    assert_eq!(
        after.body["dead_letters"][0]["event_id"],
        last_dead.as_str()
    );
    assert_eq!(
        after.body["counts"]["dead_letters"], 2,
        "the count counts all given up"
    );
    assert_eq!(after.body["counts"]["dead_letters_kept"], 1);

    // A letter replayed already, or that never died, is a clear 404; not an event id, 400.
    let again = admin(&app, Method::POST, &one, None).await;
    assert_eq!((again.status, again.error_code()), (404, "not_found"));
    assert!(
        again.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains(&first_dead),
        "{}",
        again.body
    );
    let never = admin(&app, Method::POST, &format!("{list}/1-0/replay"), None).await;
    assert_eq!((never.status, never.error_code()), (404, "not_found"));
    let bad = admin(&app, Method::POST, &format!("{list}/nope/replay"), None).await;
    assert_eq!((bad.status, bad.error_code()), (400, "invalid_field"));
    assert_eq!(bad.body["error"]["field"], "event_id", "{}", bad.body);
    // An unknown room, listed or replayed.
    for (m, path) in [
        (Method::GET, "/api/admin/rooms/nope/webhook/dead-letters"),
        (
            Method::POST,
            "/api/admin/rooms/nope/webhook/dead-letters/replay",
        ),
        (
            Method::POST,
            "/api/admin/rooms/nope/webhook/dead-letters/1-0/replay",
        ),
    ] {
        let r = admin(&app, m, path, None).await;
        assert_eq!((r.status, r.error_code()), (404, "unknown_room"), "{path}");
    }
    // No credential, a wrong one, or a foreign origin: nothing read or moved.
    let all = format!("{list}/replay");
    let none = app.get(list).await;
    assert_eq!((none.status, none.error_code()), (401, "no_credential"));
    let anon = Reply::from(app.client.post(app.url(&all)).send().await.unwrap()).await;
    assert_eq!((anon.status, anon.error_code()), (401, "no_credential"));
    let wrong = Reply::from(
        app.client
            .post(app.url(&all))
            .bearer_auth("not-the-token")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((wrong.status, wrong.error_code()), (401, "invalid_token"));
    let cross = Reply::from(
        app.client
            .post(app.url(&all))
            .bearer_auth(crate::helpers::admin::TOKEN)
            .header("origin", "https://evil.example")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((cross.status, cross.error_code()), (403, "forbidden"));
    let still = admin(&app, Method::GET, list, None).await;
    assert_eq!(still.body["dead_letters"].as_array().unwrap().len(), 1);

    // Replay all: the rest is delivered; the list is empty; the replays are audited.
    let r = admin(&app, Method::POST, &all, None).await;
    assert_eq!(r.body, json!({"replayed": [last_dead]}), "{}", r.body);
    let id = format!("msg_r_{last_dead}");
    wait_until(
        Duration::from_secs(10),
        "the second replay delivered",
        || {
            let (rx, id) = (&rx, id.clone());
            async move {
                rx.log()
                    .iter()
                    .any(|s| s.id == id && s.status == 200)
                    .then_some(())
            }
        },
    )
    .await;
    let empty = admin(&app, Method::GET, list, None).await;
    assert_eq!(empty.body["dead_letters"], json!([]));
    let r = admin(&app, Method::POST, &all, None).await;
    assert_eq!((r.status, r.body.clone()), (200, json!({"replayed": []})));
    let audit = admin(&app, Method::GET, "/api/admin/rooms/r/audit", None).await;
    let replays: Vec<&Value> = audit.body["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["action"] == "replay webhook dead letters")
        .collect();
    assert_eq!(replays.len(), 2, "{}", audit.body);
    assert_eq!(replays[0]["old"], json!([last_dead]));
    assert_eq!(
        rx.log().iter().filter(|s| s.status == 200).count(),
        2,
        "each once"
    );
}
