//! Real headless Chromium (Debian's `chromium` + `chromedriver`, installed by .ci/run)
//! against real servers on a real Redis. Screenshots land in target/screenshots/.

use crate::helpers::browser::{
    assert_accessible, screenshot, text, wait_text, wait_text_contains, Driver, DEADLINE,
};
use crate::helpers::{
    demo_settings, free_port, room, spawn_app, test_settings, wait_until, RedisServer, TestApp,
};
use anteroom::room::RoomConfig;
use fantoccini::Locator;
use serde_json::json;

/// An app on a known port (rooms' targets point back at its demo origin).
async fn demo_app(
    redis: &RedisServer,
    port: u16,
    rooms: Vec<RoomConfig>,
    public_host: &str,
) -> TestApp {
    spawn_app(demo_settings(redis, port, rooms, public_host)).await
}

fn target(port: u16, room: &str) -> String {
    format!("http://127.0.0.1:{port}/demo/origin?room={room}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_visitor_watches_the_line_move_and_is_sent_in_with_a_valid_pass() {
    let redis = RedisServer::start();
    let port = free_port();
    let app = demo_app(
        &redis,
        port,
        vec![RoomConfig {
            name: "Concert tickets".into(),
            target_url: target(port, "r"),
            ..room("r", 1)
        }],
        "127.0.0.1",
    )
    .await;
    let holder = app.join("r").await.token();
    let q1 = app.join("r").await.token();
    let q2 = app.join("r").await.token();

    let driver = Driver::start();
    let (c, _profile) = driver.browser(&[], true).await;
    c.goto(&app.url("/r/r")).await.unwrap();
    wait_text(&c, "#position", "3").await;
    wait_text(&c, "#conn", "Live").await;
    screenshot(&c, "queue-en").await;
    assert_accessible(&c, "the queue page").await;

    app.release("r", &holder).await;
    wait_text(&c, "#position", "2").await;
    app.release("r", &q1).await;
    wait_text(&c, "#position", "1").await;
    wait_text(&c, "#ahead", "You're next!").await;
    app.release("r", &q2).await;

    wait_until(DEADLINE, "the redirect to the demo origin", || async {
        let url = c.current_url().await.unwrap();
        (url.path() == "/demo/origin").then_some(url)
    })
    .await;
    // The demo origin verified the pass against the store: signature, room, live session.
    wait_text(&c, "h1", "You're in.").await;
    assert_eq!(text(&c, ".badge").await, "Pass verified");
    // A 60 s pass never reads "61 s".
    let left: u64 = text(&c, ".lead strong:nth-of-type(2)")
        .await
        .parse()
        .unwrap();
    assert!((55..=60).contains(&left), "{left}");
    // The pass left the address bar (it is kept in a cookie): a reload still lets in.
    let url = wait_until(DEADLINE, "the pass to leave the address bar", || async {
        let url = c.current_url().await.unwrap();
        (!url.as_str().contains("anteroom_pass")).then_some(url)
    })
    .await;
    assert_eq!(url.query(), Some("room=r"), "{url}");
    screenshot(&c, "origin-admitted").await;
    assert_accessible(&c, "the demo origin").await;
    c.refresh().await.unwrap();
    wait_text(&c, "h1", "You're in.").await;
    // Giving the place back says so, not "no pass yet".
    c.find(Locator::Css("#release button"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_text(&c, "h1", "This page is behind a waiting room.").await;
    wait_text_contains(&c, ".lead", "You gave your place back").await;
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_javascript_off_the_page_shows_server_rendered_numbers() {
    let redis = RedisServer::start();
    let port = free_port();
    let app = demo_app(&redis, port, vec![room("r", 1)], "127.0.0.1").await;
    app.join("r").await;
    app.join("r").await;
    let driver = Driver::start();
    let (c, _profile) = driver.browser(&[], false).await;
    c.goto(&app.url("/r/r")).await.unwrap();
    assert_eq!(text(&c, "#position").await, "2");
    assert_eq!(text(&c, "#ahead").await, "1 person ahead of you");
    assert!(
        text(&c, "#eta").await.contains("min"),
        "{}",
        text(&c, "#eta").await
    );
    assert_eq!(text(&c, "#in-line").await, "2 in line");
    let js_ran: serde_json::Value = c
        .execute("return document.getElementById('conn').textContent", vec![])
        .await
        .unwrap_or(json!(null));
    // Scripts cannot run: the status line keeps its server-rendered text.
    assert!(
        js_ran.is_null() || js_ran == "This page refreshes itself every 20 seconds.",
        "{js_ran}"
    );
    let refresh = c.source().await.unwrap();
    assert!(refresh.contains("http-equiv=\"refresh\""));
    screenshot(&c, "queue-noscript").await;
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_chinese_page_renders_chinese() {
    let redis = RedisServer::start();
    let port = free_port();
    let app = demo_app(
        &redis,
        port,
        vec![RoomConfig {
            name: "演唱会门票".into(),
            ..room("r", 1)
        }],
        "127.0.0.1",
    )
    .await;
    app.join("r").await;
    for _ in 0..3 {
        app.join("r").await;
    }
    let driver = Driver::start();
    let (c, _profile) = driver
        .browser(&["--lang=zh-CN", "--accept-lang=zh-CN"], true)
        .await;
    c.goto(&app.url("/r/r?lang=zh")).await.unwrap();
    wait_text(&c, "h1", "您正在排队").await;
    wait_text(&c, "#ahead", "前面还有 3 人").await;
    wait_text(&c, "#conn", "实时").await;
    let lang: serde_json::Value = c
        .execute("return document.documentElement.lang", vec![])
        .await
        .unwrap();
    assert_eq!(lang, "zh-CN");
    screenshot(&c, "queue-zh").await;
    assert_accessible(&c, "the Chinese queue page").await;
    // The same page at phone width.
    c.set_window_size(390, 844).await.unwrap();
    c.goto(&app.url("/r/r?lang=en")).await.unwrap();
    wait_text(&c, "h1", "You're in line").await;
    wait_text(&c, "#conn", "Live").await;
    screenshot(&c, "queue-mobile").await;
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_embed_works_cross_site_with_third_party_cookies_blocked() {
    let redis = RedisServer::start();
    let port = free_port();
    let shop = format!("http://shop.test:{port}");
    let app = demo_app(
        &redis,
        port,
        vec![RoomConfig {
            name: "Sneaker drop".into(),
            embed_origins: vec![shop.clone()],
            target_url: format!("{shop}/demo/origin?room=r"),
            ..room("r", 1)
        }],
        "queue.test",
    )
    .await;
    let holder = app.join("r").await.token();
    let ahead = app.join("r").await.token();
    let driver = Driver::start();
    let (c, _profile) = driver
        .browser(
            &[
                "--host-resolver-rules=MAP queue.test 127.0.0.1, MAP shop.test 127.0.0.1",
                "--test-third-party-cookie-phaseout",
            ],
            true,
        )
        .await;
    // The shop's page, another site than the queue, embeds the room with embed.js.
    c.goto(&format!("{shop}/demo/host?room=r")).await.unwrap();
    c.execute(
        "window.__admitted = null; document.addEventListener('anteroom:admitted', function (e) { e.preventDefault(); window.__admitted = e.detail; });",
        vec![],
    )
    .await
    .unwrap();
    let frame = c
        .wait()
        .for_element(Locator::Css("iframe[data-anteroom]"))
        .await
        .unwrap();
    frame.enter_frame().await.unwrap();
    wait_text(&c, "#position", "2").await;
    wait_text(&c, "#conn", "Live").await;
    assert_accessible(&c, "the widget").await;
    c.enter_parent_frame().await.unwrap();
    screenshot(&c, "embed").await;
    assert_accessible(&c, "the demo host page").await;

    app.release("r", &holder).await;
    c.enter_frame(0).await.unwrap();
    wait_text(&c, "#position", "1").await;
    c.enter_parent_frame().await.unwrap();
    app.release("r", &ahead).await;

    let detail = wait_until(
        DEADLINE,
        "the host page to get the admitted message",
        || async {
            let v = c.execute("return window.__admitted", vec![]).await.unwrap();
            (!v.is_null()).then_some(v)
        },
    )
    .await;
    let pass = detail["pass"].as_str().unwrap();
    assert!(detail["redirect_url"]
        .as_str()
        .unwrap()
        .starts_with(&format!("{shop}/demo/origin")));
    assert_eq!(app.verify("r", pass).await.status, 200);

    // No cookie reached the queue site: the widget ran on its stored token alone.
    c.goto(&format!("http://queue.test:{port}/healthz"))
        .await
        .unwrap();
    let cookies = c.get_all_cookies().await.unwrap();
    assert!(
        cookies.iter().all(|k| k.name() != "anteroom_vid"),
        "third-party cookies were supposed to be blocked: {cookies:?}"
    );
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn room_state_changes_reach_the_open_page() {
    let redis = RedisServer::start();
    let port = free_port();
    let app = demo_app(
        &redis,
        port,
        vec![RoomConfig {
            name: "Concert tickets".into(),
            ..room("r", 1)
        }],
        "127.0.0.1",
    )
    .await;
    app.join("r").await;
    app.join("r").await;
    let driver = Driver::start();
    let (c, _profile) = driver.browser(&[], true).await;
    c.goto(&app.url("/r/r")).await.unwrap();
    wait_text(&c, "#conn", "Live").await;
    let store = app.engine.shared_store();
    let mut cfg = store.room("r").await.unwrap().unwrap();
    type Step = (fn(&mut RoomConfig), &'static str, &'static str);
    let steps: [Step; 5] = [
        (|c| c.paused = true, "The line is paused", "state-paused"),
        (|c| c.paused = false, "You're in line", "state-queued"),
        (|c| c.stock = Some(0), "Sold out", "state-sold-out"),
        (
            |c| {
                c.stock = None;
                c.mode = anteroom::room::QueueMode::Reject
            },
            "This sale is not admitting anyone",
            "state-rejected",
        ),
        (
            |c| {
                c.mode = anteroom::room::QueueMode::Fifo;
                c.closed = true
            },
            "This waiting room is closed",
            "state-closed",
        ),
    ];
    for (change, title, shot) in steps {
        change(&mut cfg);
        store.put_room(&cfg, false).await.unwrap();
        wait_text(&c, "h1", title).await;
        screenshot(&c, shot).await;
        assert_accessible(&c, shot).await;
    }
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admin_watches_a_crowd_raises_capacity_and_sees_the_audit_entry() {
    let redis = RedisServer::start();
    let port = free_port();
    let mut s = test_settings(
        Some(redis.url()),
        &crate::helpers::prefix(),
        vec![RoomConfig {
            name: "Flash sale".into(),
            target_url: target(port, "sale"),
            ..room("sale", 2)
        }],
    );
    s.listen = format!("127.0.0.1:{port}");
    s.demo = true;
    s.admin.enabled = true;
    s.admin.token = Some(anteroom::room::Secret::new(
        "dashboard-token-0123456789abcdefghijk",
    ));
    let app = spawn_app(s).await;

    let driver = Driver::start();
    let (c, _profile) = driver.browser(&["--window-size=1280,1400"], true).await;
    c.goto(&app.url("/admin")).await.unwrap();
    c.find(Locator::Id("credential"))
        .await
        .unwrap()
        .send_keys("dashboard-token-0123456789abcdefghijk")
        .await
        .unwrap();
    c.find(Locator::Css("form button[type=submit]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_text(&c, "#live-status", "Live").await;
    wait_text(&c, "#room-sale [data-f=queue_length]", "0").await;

    // A scripted crowd arrives while the admin watches.
    let mut tokens = Vec::new();
    for _ in 0..10 {
        tokens.push(app.join("sale").await.token());
    }
    wait_text(&c, "#room-sale [data-f=queue_length]", "8").await;
    wait_text(&c, "#room-sale [data-f=active_capacity]", "2 / 2").await;
    wait_text(&c, "#t-queue", "8").await;

    // Raise capacity from the dashboard; admissions follow at once.
    let cap = c
        .find(Locator::Css(
            "#room-sale form[data-act=settings] input[name=capacity]",
        ))
        .await
        .unwrap();
    cap.clear().await.unwrap();
    cap.send_keys("6").await.unwrap();
    c.find(Locator::Css(
        "#room-sale form[data-act=settings] button[type=submit]",
    ))
    .await
    .unwrap()
    .click()
    .await
    .unwrap();
    wait_text(&c, "#room-sale [data-f=active_capacity]", "6 / 6").await;
    wait_text(&c, "#room-sale [data-f=queue_length]", "4").await;
    assert_eq!(
        app.engine.admin_store().stats("sale").await.unwrap().active,
        6
    );

    let row = wait_until(
        DEADLINE,
        "the audit entry for the capacity change",
        || async {
            let row = text(&c, "#audit tr").await;
            (row.contains("set capacity") && row.contains("2 → 6")).then_some(row)
        },
    )
    .await;
    assert!(row.contains("token"), "{row}");
    screenshot(&c, "admin").await;
    assert_accessible(&c, "the dashboard").await;
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_shows_why_the_estimate_moved_and_holds_it_while_paused() {
    let redis = RedisServer::start();
    let port = free_port();
    let app = demo_app(
        &redis,
        port,
        vec![RoomConfig {
            name: "Concert tickets".into(),
            session_ttl_secs: 120,
            ..room("r", 2)
        }],
        "127.0.0.1",
    )
    .await;
    app.join("r").await;
    app.join("r").await;
    let driver = Driver::start();
    let (c, _profile) = driver.browser(&[], true).await;
    c.goto(&app.url("/r/r")).await.unwrap();
    wait_text(&c, "#conn", "Live").await;
    // No session has ended and none is old: the page says so instead of a number.
    wait_text_contains(&c, "#eta", "not known yet (at most").await;
    let store = app.engine.shared_store();
    store
        .patch_room(
            "r",
            &anteroom::store::RoomPatch {
                capacity: Some(1),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    wait_text_contains(&c, "#eta-note", "letting fewer people in at a time").await;
    screenshot(&c, "queue-eta-reason").await;
    store
        .patch_room(
            "r",
            &anteroom::store::RoomPatch {
                paused: Some(true),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    wait_text(&c, "#eta", "on hold while the line is paused").await;
    wait_text(&c, "#ahead", "No one is ahead of you").await;
    c.close().await.unwrap();
}

/// The queue page, going to the background (a hidden tab, a locked phone), tells the
/// server with `navigator.sendBeacon`, which then holds the place longer; the page says
/// for how long.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_going_to_the_background_asks_to_keep_its_place_longer() {
    let redis = RedisServer::start();
    let port = free_port();
    let app = demo_app(&redis, port, vec![room("r", 1)], "127.0.0.1").await;
    app.join("r").await; // the one slot is taken: the browser's visitor queues
    let driver = Driver::start();
    let (c, _profile) = driver.browser(&[], true).await;
    c.goto(&app.url("/r/r")).await.unwrap();
    wait_text(&c, "#position", "1").await;
    wait_text_contains(&c, "#keep-open", "we hold it for 10 minutes").await;
    // What a browser does when the tab is hidden (headless Chromium never hides one).
    c.execute(
        "Object.defineProperty(document, 'hidden', { get: () => true }); \
         document.dispatchEvent(new Event('visibilitychange'));",
        vec![],
    )
    .await
    .unwrap();
    wait_until(DEADLINE, "the beacon to hold the place", || async {
        let m = app.get("/metrics").await.body;
        m.as_str()?
            .contains(r#"anteroom_hidden_holds_total{room="r"} 1"#)
            .then_some(())
    })
    .await;
    c.close().await.unwrap();
}
