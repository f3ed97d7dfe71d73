//! Pages that never mislead (issue 11): every visitor state says what is true and moves
//! on by itself; error and unknown pages are pages; static files are cached and
//! compressed. Browser tests drive real headless Chromium against a real Redis, and run
//! axe-core on every page they reach.

use crate::helpers::browser::{
    assert_accessible, screenshot, text, wait_text, wait_text_contains, Driver, DEADLINE,
};
use crate::helpers::{
    client, demo_settings, free_port, room, spawn_app, test_settings, wait_until, RedisServer,
};
use anteroom::config::Settings;
use anteroom::domain::identity::VisitorId;
use anteroom::room::RoomConfig;
use anteroom::store::{RoomPatch, StockChange};
use fantoccini::{Client, Locator};
use serde_json::json;

fn settings(redis: &RedisServer, port: u16, rooms: Vec<RoomConfig>) -> Settings {
    demo_settings(redis, port, rooms, "127.0.0.1")
}

fn patch(f: impl FnOnce(&mut RoomPatch)) -> RoomPatch {
    let mut p = RoomPatch::default();
    f(&mut p);
    p
}

async fn js(c: &Client, script: &str) -> serde_json::Value {
    c.execute(script, vec![]).await.unwrap()
}

/// The visitor id behind the page's cookie.
async fn visitor_of(c: &Client) -> VisitorId {
    let cookie = c.get_named_cookie("anteroom_vid").await.unwrap();
    VisitorId::parse(cookie.value().split('.').next().unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_newcomer_on_a_closed_room_joins_by_itself_when_it_opens() {
    let redis = RedisServer::start();
    let port = free_port();
    let app = spawn_app(settings(&redis, port, vec![room("r", 1)])).await;
    app.join("r").await; // holds the only slot, so the newcomer will wait
    let store = app.engine.shared_store();
    store
        .patch_room("r", &patch(|p| p.closed = Some(true)))
        .await
        .unwrap();

    let driver = Driver::start();
    let (c, _profile) = driver.browser(&[], true).await;
    c.goto(&app.url("/r/r")).await.unwrap();
    wait_text(&c, "h1", "This waiting room is closed").await;
    wait_text_contains(&c, "#lead", "joins the line for you by itself").await;
    // The page listens (it did not before: no socket, no polling, a reload needed).
    wait_text(&c, "#conn", "Live").await;
    assert_eq!(store.stats("r").await.unwrap().queue_length, 0);
    screenshot(&c, "state-closed-newcomer").await;
    assert_accessible(&c, "the closed page").await;

    store
        .patch_room("r", &patch(|p| p.closed = Some(false)))
        .await
        .unwrap();
    wait_text(&c, "h1", "You're in line").await;
    wait_text(&c, "#position", "1").await;
    assert_eq!(store.stats("r").await.unwrap().queue_length, 1);
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closed_and_sold_out_tell_a_queued_visitor_the_place_is_kept_and_move_on() {
    let redis = RedisServer::start();
    let port = free_port();
    let app = spawn_app(settings(
        &redis,
        port,
        vec![RoomConfig {
            stock: Some(5),
            ..room("r", 1)
        }],
    ))
    .await;
    app.join("r").await;
    app.join("r").await;
    let driver = Driver::start();
    let (c, _profile) = driver.browser(&[], true).await;
    c.goto(&app.url("/r/r")).await.unwrap();
    wait_text(&c, "#position", "2").await;
    wait_text(&c, "#conn", "Live").await;
    let store = app.engine.shared_store();

    store
        .patch_room("r", &patch(|p| p.closed = Some(true)))
        .await
        .unwrap();
    wait_text(&c, "h1", "This waiting room is closed").await;
    wait_text_contains(&c, "#lead", "You keep your place in line").await;
    assert!(!text(&c, "#lead").await.contains("check back later"));
    screenshot(&c, "state-closed-kept").await;
    assert_accessible(&c, "the closed page (place kept)").await;
    store
        .patch_room("r", &patch(|p| p.closed = Some(false)))
        .await
        .unwrap();
    wait_text(&c, "h1", "You're in line").await;
    wait_text(&c, "#position", "2").await;

    store.change_stock("r", StockChange::Set(0)).await.unwrap();
    wait_text(&c, "h1", "Sold out").await;
    wait_text_contains(
        &c,
        "#lead",
        "You keep your place in case more become available",
    )
    .await;
    assert!(!text(&c, "#lead").await.contains("nothing left to wait for"));
    screenshot(&c, "state-sold-out-kept").await;
    assert_accessible(&c, "the sold-out page (place kept)").await;
    store.change_stock("r", StockChange::Add(3)).await.unwrap();
    wait_text(&c, "h1", "You're in line").await;
    wait_text(&c, "#position", "2").await;
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flushed_visitor_is_told_the_organiser_emptied_the_line_and_can_rejoin_as_they_came() {
    let redis = RedisServer::start();
    let port = free_port();
    let app = spawn_app(settings(
        &redis,
        port,
        vec![RoomConfig {
            target_url: "https://origin.example/in".into(),
            ..room("r", 1)
        }],
    ))
    .await;
    app.join("r").await;
    let driver = Driver::start();
    let (c, _profile) = driver.browser(&[], true).await;
    c.goto(&app.url("/r/r?lang=en&return=%2Fshoes%3Fsize%3D42"))
        .await
        .unwrap();
    wait_text(&c, "#position", "1").await;
    wait_text(&c, "#conn", "Live").await;
    assert_eq!(app.engine.admin_store().flush("r").await.unwrap(), 1);

    wait_text(&c, "h1", "You're no longer in line").await;
    let lead = text(&c, "#lead").await;
    assert!(lead.contains("organiser emptied the line"), "{lead}");
    assert!(!lead.contains("long time away"), "{lead}");
    // Told, not silently re-queued: the line stays empty until the visitor chooses.
    assert_eq!(
        app.engine
            .admin_store()
            .stats("r")
            .await
            .unwrap()
            .queue_length,
        0
    );
    screenshot(&c, "state-flushed").await;
    assert_accessible(&c, "the flushed page").await;
    let href = js(
        &c,
        "return document.querySelector('#rejoin a').getAttribute('href')",
    )
    .await;
    let href = href.as_str().unwrap();
    assert!(href.starts_with("/r/r?"), "{href}");
    assert!(href.contains("lang=en"), "{href}");
    assert!(href.contains("return=%2Fshoes%3Fsize%3D42"), "{href}");
    c.find(Locator::Css("#rejoin a"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_text(&c, "h1", "You're in line").await;
    wait_text(&c, "#position", "1").await;
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn screen_readers_hear_the_place_and_the_state_not_every_figure() {
    let redis = RedisServer::start();
    let port = free_port();
    let app = spawn_app(settings(&redis, port, vec![room("r", 1)])).await;
    let holder = app.join("r").await.token();
    app.join("r").await;
    let driver = Driver::start();
    let (c, _profile) = driver.browser(&[], true).await;
    c.goto(&app.url("/r/r")).await.unwrap();
    wait_text(&c, "#position", "2").await;
    wait_text(&c, "#conn", "Live").await;
    // The hidden label is words, not the raw template "{n} in line".
    let label = js(
        &c,
        "return document.querySelector('#numbers dt.sr-only').textContent",
    )
    .await;
    assert_eq!(label, "People in line");
    // The figures are not one big live region; the only polite regions are the
    // announcer and the connection status.
    let live = js(
        &c,
        "return Array.from(document.querySelectorAll('[aria-live],[role=status],[role=alert]')).map(function (e) { return e.id; })",
    )
    .await;
    assert_eq!(live, json!(["announce", "conn"]));

    // The line grows behind the visitor: nothing is announced.
    js(
        &c,
        "document.getElementById('announce').textContent = 'sentinel'; return 0",
    )
    .await;
    app.join("r").await;
    wait_text(&c, "#in-line", "3 in line").await;
    assert_eq!(text(&c, "#announce").await, "sentinel");
    // The place moves: it is announced.
    app.release("r", &holder).await;
    wait_text(&c, "#position", "1").await;
    wait_text(&c, "#announce", "You are now number 1 in line.").await;
    // A state change is announced too.
    app.engine
        .room_store()
        .patch_room("r", &patch(|p| p.paused = Some(true)))
        .await
        .unwrap();
    wait_text_contains(&c, "#announce", "The line is paused").await;
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rate_limit_page_counts_the_real_wait_down_and_retries_by_itself() {
    let redis = RedisServer::start();
    let port = free_port();
    let mut s = settings(&redis, port, vec![room("r", 1)]);
    s.rate_limit.visitor_requests = 2;
    s.rate_limit.visitor_window_secs = 6;
    let app = spawn_app(s).await;
    app.join("r").await;
    let driver = Driver::start();
    let (c, _profile) = driver.browser(&[], true).await;
    c.goto(&app.url("/r/r")).await.unwrap();
    wait_text(&c, "#conn", "Live").await;
    // A page load and the socket it opens count once: two loads fit in a limit of two.
    c.refresh().await.unwrap();
    wait_text(&c, "#conn", "Live").await;
    c.refresh().await.unwrap();
    wait_text(&c, "h1", "Too many requests").await;
    let lead = text(&c, ".lead").await;
    let secs: u64 = lead
        .split("in ")
        .last()
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no wait in {lead:?}"));
    assert!((1..=6).contains(&secs), "{lead}");
    let countdown = text(&c, "#retry-in").await;
    assert!(countdown.starts_with("Trying again in "), "{countdown}");
    screenshot(&c, "rate-limited").await;
    assert_accessible(&c, "the rate-limit page").await;
    // No reload needed: when the window ends, the page comes back by itself.
    wait_text(&c, "h1", "You're in line").await;
    wait_text(&c, "#conn", "Live").await;
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_shows_when_it_last_heard_and_a_support_code_the_admin_can_use() {
    let redis = RedisServer::start();
    let port = free_port();
    let app = spawn_app(settings(&redis, port, vec![room("r", 1)])).await;
    app.join("r").await;
    let driver = Driver::start();
    let (c, _profile) = driver.browser(&[], true).await;
    c.goto(&app.url("/r/r")).await.unwrap();
    wait_text(&c, "#conn", "Live").await;
    // Place 1 from the start: the bar is not empty.
    let bar = js(&c, "return document.getElementById('progress').value").await;
    assert_eq!(bar, json!(50));
    let updated = wait_until(DEADLINE, "the last-updated time", || async {
        let t = text(&c, "#updated").await;
        t.starts_with("updated ").then_some(t)
    })
    .await;
    let clock = updated.trim_start_matches("updated ");
    assert_eq!(clock.split(':').count(), 3, "{updated}");
    let id = visitor_of(&c).await;
    assert_eq!(text(&c, "#support-code").await, id.support_code());
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn narrow_phones_get_no_sideways_scrolling() {
    let redis = RedisServer::start();
    let port = free_port();
    let app = spawn_app(settings(
        &redis,
        port,
        vec![RoomConfig {
            name: "Anteroom demo".into(),
            embed_origins: vec![format!("http://127.0.0.1:{port}")],
            ..room("r", 1)
        }],
    ))
    .await;
    app.join("r").await;
    let driver = Driver::start();
    let (c, _profile) = driver.browser(&[], true).await;
    let width = |c: &Client| {
        let c = c.clone();
        async move {
            js(&c, "return document.documentElement.scrollWidth")
                .await
                .as_u64()
                .unwrap()
        }
    };
    c.set_window_size(320, 700).await.unwrap();
    let inner = js(&c, "return window.innerWidth").await.as_u64().unwrap();
    c.goto(&app.url("/r/r")).await.unwrap();
    wait_text(&c, "#conn", "Live").await;
    assert!(width(&c).await <= inner, "queue page at {inner} px");
    let lang = js(
        &c,
        "return document.querySelector('a.lang').getAttribute('lang')",
    )
    .await;
    assert_eq!(lang, "zh-CN");
    // The header's parts do not run into each other.
    let gap = js(
        &c,
        "var b = document.querySelector('.brand').getBoundingClientRect(), l = document.querySelector('a.lang').getBoundingClientRect(); return (l.top >= b.bottom - 1) || (l.left >= b.right);",
    )
    .await;
    assert_eq!(gap, json!(true));
    screenshot(&c, "queue-320").await;

    c.set_window_size(390, 844).await.unwrap();
    let inner = js(&c, "return window.innerWidth").await.as_u64().unwrap();
    c.goto(&app.url("/demo/host?room=r")).await.unwrap();
    c.wait()
        .for_element(Locator::Css("iframe[data-anteroom]"))
        .await
        .unwrap();
    assert!(width(&c).await <= inner, "demo host page at {inner} px");
    screenshot(&c, "embed-mobile").await;
    c.close().await.unwrap();
}

// ---- Without a browser: what the server answers. ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_paths_get_a_page_and_api_paths_get_json() {
    let redis = RedisServer::start();
    let mut s = test_settings(
        Some(redis.url()),
        &crate::helpers::prefix(),
        vec![room("r", 1)],
    );
    s.demo = false;
    let app = spawn_app(s).await;
    for (path, lang, title) in [
        ("/", "en", "Nothing here"),
        ("/no/such/page", "en", "Nothing here"),
        ("/no/such/page?lang=zh", "zh", "这里什么都没有"),
    ] {
        let r = client().get(app.url(path)).send().await.unwrap();
        assert_eq!(r.status(), 404, "{path}");
        assert!(r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html"));
        let body = r.text().await.unwrap();
        assert!(body.contains(title), "{path}: {body}");
        assert!(body.contains(&format!(
            "lang=\"{}\"",
            if lang == "zh" { "zh-CN" } else { "en" }
        )));
        assert!(!body.contains("Try again"), "{path}");
    }
    let r = app.get("/api/no/such").await;
    assert_eq!((r.status, r.error_code()), (404, "not_found"));
    // An unknown room: no "Try again" that leads back to the same 404.
    let r = client().get(app.url("/r/nosuch")).send().await.unwrap();
    assert_eq!(r.status(), 404);
    let body = r.text().await.unwrap();
    assert!(body.contains("No such waiting room"), "{body}");
    assert!(!body.contains("Try again"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_home_leads_to_the_demo_room_and_a_bad_start_is_ignored() {
    let redis = RedisServer::start();
    let port = free_port();
    let app = spawn_app(settings(&redis, port, vec![room("r", 1)])).await;
    app.join("r").await; // holds the slot: the page shows the line
    let r = client().get(app.url("/")).send().await.unwrap();
    assert_eq!(r.status(), 303);
    assert_eq!(r.headers()["location"], "/r/demo");
    for q in [
        "start=abc",
        "start=-1",
        "start=99999999999999999999999",
        "lang=%ff&start=",
    ] {
        let r = client()
            .get(app.url(&format!("/r/r?{q}")))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{q}");
        let body = r.text().await.unwrap();
        assert!(body.contains("<h1 id=\"title\">"), "{q}: {body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rate_limit_page_says_the_wait_the_header_gives_and_refreshes_itself() {
    let redis = RedisServer::start();
    let mut s = test_settings(
        Some(redis.url()),
        &crate::helpers::prefix(),
        vec![room("r", 1)],
    );
    s.rate_limit.visitor_requests = 1;
    s.rate_limit.visitor_window_secs = 60;
    let app = spawn_app(s).await;
    let token = app.join("r").await.token();
    let r = client()
        .get(app.url("/r/r"))
        .header("cookie", format!("anteroom_vid={token}"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 429);
    let wait: u64 = r.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((50..=60).contains(&wait), "{wait}");
    let body = r.text().await.unwrap();
    assert!(
        body.contains(&format!("tries again by itself in {wait} seconds")),
        "{body}"
    );
    assert!(
        body.contains(&format!("content=\"{wait};url=/r/r\"")),
        "{body}"
    );
    assert!(body.contains("/static/retry.js"), "{body}");
    assert!(!body.contains("wait a few seconds"), "{body}");
    // No "Try again" button that would only spend another request before the wait ends.
    assert!(!body.contains("Try again"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn static_files_carry_an_etag_and_are_compressed() {
    let redis = RedisServer::start();
    let app = spawn_app(test_settings(
        Some(redis.url()),
        &crate::helpers::prefix(),
        vec![room("r", 1)],
    ))
    .await;
    let c = reqwest::Client::new(); // no gzip feature: it never asks for compression itself
    let plain = c.get(app.url("/static/queue.js")).send().await.unwrap();
    assert_eq!(plain.status(), 200);
    let etag = plain.headers()["etag"].to_str().unwrap().to_string();
    assert!(etag.starts_with('"') && etag.len() > 10, "{etag}");
    assert!(plain.headers().get("content-encoding").is_none());
    let plain_len = plain.bytes().await.unwrap().len();

    let gz = c
        .get(app.url("/static/queue.js"))
        .header("accept-encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(gz.headers()["content-encoding"], "gzip");
    let gz_len = gz.bytes().await.unwrap().len();
    assert!(gz_len * 2 < plain_len, "gzip {gz_len} of {plain_len}");

    let again = c
        .get(app.url("/static/queue.js"))
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);
    assert!(again.bytes().await.unwrap().is_empty());
    let stale = c
        .get(app.url("/static/queue.js"))
        .header("if-none-match", "\"0000\"")
        .send()
        .await
        .unwrap();
    assert_eq!(stale.status(), 200);

    let icon = c.get(app.url("/favicon.ico")).send().await.unwrap();
    assert_eq!(icon.status(), 200);
    assert_eq!(icon.headers()["content-type"], "image/svg+xml");
    let missing = c.get(app.url("/static/nope.js")).send().await.unwrap();
    assert_eq!(missing.status(), 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_join_answer_carries_the_support_code() {
    let redis = RedisServer::start();
    let app = spawn_app(test_settings(
        Some(redis.url()),
        &crate::helpers::prefix(),
        vec![room("r", 1)],
    ))
    .await;
    let r = app.join("r").await;
    let id = VisitorId::parse(r.token().split('.').next().unwrap()).unwrap();
    assert_eq!(r.body["support_code"], id.support_code());
}
