//! Priority lanes over HTTP: an enqueue token's `lane` puts its visitor in that lane at
//! the place the shares give, with the reason shown; a lane the room does not have queues
//! in the general line and is counted; the admin view shows the lanes and the admin API
//! switches them, refusing bad ones. (The shares themselves: `conformance`, on every
//! store.)

use crate::helpers::admin::{admin, admin_app};
use crate::helpers::{room, Reply, TestApp};
use anteroom::room::{EntryMode, Lane, RoomConfig, Secret};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use reqwest::Method;
use serde_json::json;

const SECRET: &str = "site-entry-secret-0123456789abcdef";

fn token(sub: &str, lane: Option<&str>) -> String {
    let exp = jsonwebtoken::get_current_timestamp() + 60;
    let mut claims = json!({"sub": sub, "room": "t", "exp": exp});
    if let Some(l) = lane {
        claims["lane"] = json!(l);
    }
    jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &claims,
        &EncodingKey::from_secret(SECRET.as_bytes()),
    )
    .unwrap()
}

async fn join(app: &TestApp, sub: &str, lane: Option<&str>) -> Reply {
    Reply::from(
        reqwest::Client::new()
            .post(app.url("/api/rooms/t/join"))
            .json(&json!({"enqueue_token": token(sub, lane)}))
            .send()
            .await
            .unwrap(),
    )
    .await
}

#[tokio::test]
async fn a_lane_token_queues_at_its_share_and_the_admin_sees_and_switches_the_lanes() {
    let (app, _r) = admin_app(vec![RoomConfig {
        entry: EntryMode::Token,
        entry_secret: Some(Secret::new(SECRET)),
        lanes: vec![Lane {
            name: "members".into(),
            share: 0.3,
        }],
        ..room("t", 1)
    }])
    .await;
    assert_eq!(join(&app, "g0", None).await.body["state"], "admitted");
    for (i, sub) in ["g1", "g2", "g3"].iter().enumerate() {
        let r = join(&app, sub, None).await;
        assert_eq!(r.body["position"], i as u64 + 1, "{:?}", r.body);
    }
    // Tickets: the general line every 1/0.7, members every 1/0.3: the member who came
    // fourth is let in third, and says why places can move.
    let m = join(&app, "m1", Some("members")).await;
    assert_eq!(m.body["position"], 3, "{:?}", m.body);
    assert_eq!(m.body["eta_reason"], "priority_lanes", "{:?}", m.body);
    // The same person again: the same place, whatever lane the new token names.
    assert_eq!(join(&app, "m1", None).await.body["position"], 3);
    // A lane the room does not have: the general line, counted.
    let x = join(&app, "x", Some("vip")).await;
    assert_eq!((x.status, x.body["position"].as_u64()), (200, Some(5)));
    let metrics = app.get("/metrics").await.body;
    assert!(
        metrics
            .as_str()
            .unwrap()
            .contains("anteroom_lane_unknown_total{room=\"t\"} 1"),
        "{metrics}"
    );

    let r = admin(&app, Method::GET, "/api/admin/rooms/t", None).await;
    assert_eq!(
        r.body["config"]["lanes"],
        json!([{"name": "members", "share": 0.3}])
    );
    assert_eq!(
        r.body["live"]["lanes"],
        json!([
            {"lane": "", "share": 0.7, "waiting": 4, "admitted": 0},
            {"lane": "members", "share": 0.3, "waiting": 1, "admitted": 0},
        ])
    );

    // Bad lanes are refused naming the field, and change nothing.
    for bad in [
        json!([{"name": "members", "share": 1.5}]),
        json!([{"name": "a", "share": 0.5}, {"name": "b", "share": 0.5}]),
        json!([{"name": "a", "share": 0.2}, {"name": "a", "share": 0.2}]),
        json!([{"name": "no spaces", "share": 0.2}]),
        json!([{"name": "a", "share": 0.2, "priority": 1}]),
    ] {
        let r = admin(
            &app,
            Method::PUT,
            "/api/admin/rooms/t",
            Some(json!({"lanes": bad})),
        )
        .await;
        assert_eq!(r.status, 400, "{bad} {:?}", r.body);
        assert!(
            r.body["error"]["field"] == "lanes" || r.body["error"]["code"] == "malformed_json",
            "{bad} {:?}",
            r.body
        );
    }
    let r = admin(&app, Method::GET, "/api/admin/rooms/t", None).await;
    assert_eq!(r.body["config"]["lanes"][0]["share"], 0.3);

    // Lanes off: no lane figures, and the next member queues at the back.
    let r = admin(
        &app,
        Method::PUT,
        "/api/admin/rooms/t",
        Some(json!({"lanes": []})),
    )
    .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let r = admin(&app, Method::GET, "/api/admin/rooms/t", None).await;
    assert_eq!(r.body["live"]["lanes"], json!([]));
    assert_eq!(join(&app, "m2", Some("members")).await.body["position"], 6);
}

/// A member's browser, in a room that asks newcomers for an enqueue token and a proof of
/// work: the embedded widget (`data-enqueue-token`) and the queue page
/// (`?enqueue_token=`) each solve the challenge in a worker, join with the token, and
/// show the place the members' lane gives; a widget with a refused token says the line
/// needs an invitation instead of retrying.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_widget_and_the_page_join_with_the_token_in_its_lane() {
    use crate::helpers::browser::{screenshot, wait_text, wait_text_contains, Driver};
    use crate::helpers::{demo_settings, free_port, spawn_app, RedisServer};
    use anteroom::domain::pow;
    use anteroom::room::ChallengeMode;
    use fantoccini::Locator;

    let redis = RedisServer::start();
    let port = free_port();
    // Web Crypto (the proof of work) needs a secure context all the way up: localhost
    // for the shop, 127.0.0.1 for the queue (two sites).
    let shop = format!("http://localhost:{port}");
    let app = spawn_app(demo_settings(
        &redis,
        port,
        vec![RoomConfig {
            name: "Members' sale".into(),
            entry: EntryMode::Token,
            entry_secret: Some(Secret::new(SECRET)),
            challenge: ChallengeMode::Pow,
            pow_max_number: 5_000,
            embed_origins: vec![shop.clone()],
            lanes: vec![Lane {
                name: "members".into(),
                share: 0.3,
            }],
            ..room("t", 1)
        }],
        "127.0.0.1",
    ))
    .await;
    // One holder and three in the general line, joined as an app would (token + proof).
    for sub in ["g0", "g1", "g2", "g3"] {
        let c = app
            .engine
            .pow()
            .challenge("t", 5_000, anteroom::clock::wall_ms() / 1000);
        let r = Reply::from(
            reqwest::Client::new()
                .post(app.url("/api/rooms/t/join"))
                .header("X-Anteroom-Challenge", pow::solve(&c).unwrap())
                .json(&json!({"enqueue_token": token(sub, None)}))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(r.status, 200, "{:?}", r.body);
    }
    let driver = Driver::start();
    let (c, _profile) = driver.browser(&[], true).await;
    // The shop's page (the demo host, its own widget for a room that does not exist)
    // embeds the members' room with the member's token.
    c.goto(&format!("{shop}/demo/host?room=none"))
        .await
        .unwrap();
    let embed = |room: &str, tok: &str| {
        format!(
            "var s = document.createElement('script'); s.src = 'http://127.0.0.1:{port}/static/embed.js'; \
             s.setAttribute('data-room', '{room}'); s.setAttribute('data-enqueue-token', '{tok}'); \
             s.setAttribute('data-lang', 'en'); document.body.appendChild(s);"
        )
    };
    c.execute(&embed("t", &token("m1", Some("members"))), vec![])
        .await
        .unwrap();
    let frame = c
        .wait()
        .for_element(Locator::Css("iframe[data-anteroom='t']"))
        .await
        .unwrap();
    frame.enter_frame().await.unwrap();
    // Fourth to come, third in line: the members' lane.
    wait_text(&c, "#position", "3").await;
    c.enter_parent_frame().await.unwrap();
    c.execute(
        "document.querySelector(\"iframe[data-anteroom='t']\").scrollIntoView()",
        vec![],
    )
    .await
    .unwrap();
    screenshot(&c, "lanes-widget").await;
    let lanes = app.engine.admin_store().report("t", 1).await.unwrap().lanes;
    assert_eq!(lanes[1].lane, "members");
    assert_eq!(lanes[1].waiting, 1, "{lanes:?}");

    // A widget whose token is for another line says so.
    c.execute(
        &embed("t", &token("m9", Some("members")).replace('.', ".x")),
        vec![],
    )
    .await
    .unwrap();
    // embed.js loads and runs on its own time: wait for the second frame.
    let frames = crate::helpers::wait_until(
        std::time::Duration::from_secs(10),
        "the second widget's frame",
        || async {
            let f = c
                .find_all(Locator::Css("iframe[data-anteroom='t']"))
                .await
                .unwrap();
            (f.len() == 2).then_some(f)
        },
    )
    .await;
    frames[1].clone().enter_frame().await.unwrap();
    wait_text(&c, "#title", "This line needs an invitation from the site").await;
    c.enter_parent_frame().await.unwrap();

    // The queue page, opened from the site's link with a second member's token.
    c.goto(&format!(
        "http://127.0.0.1:{port}/r/t?lang=en&enqueue_token={}",
        token("m2", Some("members"))
    ))
    .await
    .unwrap();
    // Tickets: g1 1429, g2 2858, m1 3333, g3 4287, m2 6666.
    wait_text(&c, "#position", "5").await;
    // The page never says "strictly in the order they arrived" here.
    wait_text_contains(&c, "#lead", "a set share of places for priority lanes").await;
    wait_text_contains(&c, "footer", "within each lane").await;
    screenshot(&c, "lanes-page").await;
    let lanes = app.engine.admin_store().report("t", 1).await.unwrap().lanes;
    assert_eq!(lanes[1].waiting, 2, "{lanes:?}");
    c.close().await.unwrap();
}

/// The socket's handshake joins as the join route does: with an enqueue token it is the
/// token's person who joins, in the token's lane (before, the socket ignored the token and
/// joined whoever its visitor token named, in the general line).
#[tokio::test]
async fn a_socket_brought_a_lane_token_joins_the_tokens_person_in_that_lane() {
    use crate::helpers::ws::next_json;
    let (app, _r) = admin_app(vec![RoomConfig {
        entry: EntryMode::Token,
        entry_secret: Some(Secret::new(SECRET)),
        lanes: vec![Lane {
            name: "members".into(),
            share: 0.3,
        }],
        ..room("t", 1)
    }])
    .await;
    assert_eq!(join(&app, "g0", None).await.body["state"], "admitted");
    let mut general = Vec::new();
    for sub in ["g1", "g2", "g3"] {
        general.push(join(&app, sub, None).await);
    }
    let g1 = general[0].body["visitor_token"]
        .as_str()
        .unwrap()
        .to_string();
    let url = format!(
        "ws://127.0.0.1:{}/r/t/ws?token={g1}&enqueue_token={}",
        app.port,
        token("m1", Some("members"))
    );
    let (mut ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    let first = next_json(&mut ws, std::time::Duration::from_secs(5)).await;
    // As at the join route: the member who came fourth is let in third.
    assert_eq!(first["position"], 3, "{first}");
    assert_eq!(first["eta_reason"], "priority_lanes", "{first}");
    let r = admin(&app, Method::GET, "/api/admin/rooms/t", None).await;
    assert_eq!(r.body["live"]["lanes"][1]["waiting"], 1, "{:?}", r.body);
}
