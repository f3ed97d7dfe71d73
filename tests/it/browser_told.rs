//! What a visitor is told (issue 30, findings 1-9): the server decides the message,
//! figures and notes (`domain::told`), and the page, in real headless Chromium, shows
//! exactly that, in every state and mode, in English and Chinese, on a desktop and a
//! phone. Screenshots land in target/screenshots/told-*.png (the ones looked at are kept
//! under docs/screenshots/told/).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::helpers::browser::{
    assert_accessible, screenshot, text, wait_text, wait_text_contains, Driver, DEADLINE,
};
use crate::helpers::{demo_settings, free_port, room, spawn_app, wait_until, RedisServer, TestApp};
use anteroom::room::{ChallengeMode, Lane, QueueMode, RoomConfig};
use fantoccini::{Client, Locator};
use serde_json::Value;

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// What happens to the room after the visitor opened the page.
#[derive(Clone, Copy)]
enum After {
    Nothing,
    Pause,
    QueueAll,
    SellOut,
    Close,
    Reject,
    /// The visitor's place is released (an admin removed it).
    Remove,
}

struct Case {
    room: RoomConfig,
    /// A holder joins first, so the visitor waits.
    holder: bool,
    after: After,
    message: &'static str,
}

/// The cases, in rooms of their own per language (`fifo_en`, `fifo_zh`, …): a case
/// changes its room for good.
fn cases(lang: &str) -> Vec<Case> {
    let now = now_ms();
    let base = |id: &str| RoomConfig {
        name: format!("Room {id}"),
        ..room(&format!("{id}_{lang}"), 1)
    };
    let case = |room, holder, after, message| Case {
        room,
        holder,
        after,
        message,
    };
    vec![
        case(base("fifo"), true, After::Nothing, "queued"),
        case(
            RoomConfig {
                lanes: vec![Lane {
                    name: "members".into(),
                    share: 0.5,
                }],
                ..base("lanes")
            },
            true,
            After::Nothing,
            "queued_lanes",
        ),
        case(
            RoomConfig {
                mode: QueueMode::Random,
                ..base("random")
            },
            true,
            After::Nothing,
            "queued_random",
        ),
        case(base("paused"), true, After::Pause, "paused"),
        case(base("queueall"), true, After::QueueAll, "paused"),
        case(base("soldkept"), true, After::SellOut, "sold_out_kept"),
        case(
            RoomConfig {
                stock: Some(0),
                ..base("soldout")
            },
            false,
            After::Nothing,
            "sold_out",
        ),
        case(base("closedkept"), true, After::Close, "closed_kept"),
        case(
            RoomConfig {
                closed: true,
                ..base("closed")
            },
            false,
            After::Nothing,
            "closed",
        ),
        case(base("rejkept"), true, After::Reject, "rejected_kept"),
        case(
            RoomConfig {
                mode: QueueMode::Reject,
                ..base("rejected")
            },
            false,
            After::Nothing,
            "rejected",
        ),
        case(
            RoomConfig {
                prequeue_opens_at: Some(now + 3_600_000),
                opens_at: Some(now + 7_200_000),
                ..base("scheduled")
            },
            false,
            After::Nothing,
            "scheduled",
        ),
        case(
            RoomConfig {
                prequeue_opens_at: Some(now - 60_000),
                opens_at: Some(now + 3_600_000),
                ..base("prequeue")
            },
            false,
            After::Nothing,
            "prequeue",
        ),
        case(
            RoomConfig {
                opens_at: Some(now - 7_200_000),
                closes_at: Some(now - 3_600_000),
                ..base("ended")
            },
            false,
            After::Nothing,
            "event_ended",
        ),
        case(base("removed"), true, After::Remove, "not_queued"),
    ]
}

async fn apply(app: &TestApp, room: &str, after: After, token: &str) {
    let store = app.engine.shared_store();
    let mut cfg = store.room(room).await.unwrap().unwrap();
    match after {
        After::Nothing => return,
        After::Remove => {
            app.release(room, token).await;
            return;
        }
        After::Pause => cfg.paused = true,
        After::QueueAll => cfg.queue_all = true,
        After::SellOut => cfg.stock = Some(0),
        After::Close => cfg.closed = true,
        After::Reject => cfg.mode = QueueMode::Reject,
    }
    store.put_room(&cfg, false).await.unwrap();
}

async fn js(c: &Client, script: &str) -> Value {
    c.execute(script, vec![]).await.unwrap()
}

/// The words a `{x}`-templated sentence must show: its literal fragments.
fn fragments(template: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(i) = rest.find('{') {
        out.push(rest[..i].to_string());
        rest = rest[i..].find('}').map_or("", |j| &rest[i + j + 1..]);
    }
    out.push(rest.to_string());
    out.into_iter().filter(|s| s.trim().len() > 1).collect()
}

async fn visible(c: &Client, css: &str) -> bool {
    match c.find(Locator::Css(css)).await {
        Ok(e) => e.is_displayed().await.unwrap_or(false),
        Err(_) => false,
    }
}

/// Walks every case in `lang`: the page (rendered, then kept up to date by its script)
/// shows the view's message, figures and notes, worded by the table the server handed it.
async fn walk(app: &TestApp, c: &Client, lang: &str) {
    for case in cases(lang) {
        let id = case.room.id.clone();
        if case.holder {
            app.join(&id).await;
        }
        c.goto(&app.url(&format!("/r/{id}?lang={lang}")))
            .await
            .unwrap();
        let token = c
            .get_named_cookie("anteroom_vid")
            .await
            .unwrap()
            .value()
            .to_string();
        apply(app, &id, case.after, &token).await;
        // The view (the JSON answer) and the page agree on the message.
        let view = wait_until(
            DEADLINE,
            &format!("{id} ({lang}): the page to show the view's message"),
            || async {
                let view = app.status(&id, &token).await.body;
                let shown = js(
                    c,
                    "return document.getElementById('anteroom').getAttribute('data-message')",
                )
                .await;
                (view["message"] == case.message && shown == case.message).then_some(view)
            },
        )
        .await;
        let said = js(
            c,
            &format!(
                "return JSON.parse(document.getElementById('anteroom').getAttribute('data-config')).messages['{}']",
                case.message
            ),
        )
        .await;
        let title = said["title"].as_str().unwrap();
        wait_text(c, "#title", title).await;
        let lead = text(c, "#lead").await;
        for part in fragments(said["lead"].as_str().unwrap()) {
            assert!(
                lead.contains(part.trim()),
                "{id} ({lang}): lead {lead:?} lacks {part:?}"
            );
        }
        let figures: Vec<&str> = view["figures"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap())
            .collect();
        for (figure, css) in [
            ("place", "#place-box"),
            ("eta", "#eta-box"),
            ("chances", "#chances-box"),
            ("progress", ".progress"),
            ("countdown", "#countdown-box"),
        ] {
            assert_eq!(
                visible(c, css).await,
                figures.contains(&figure),
                "{id} ({lang}): {css} shown against figures {figures:?}"
            );
        }
        let notes = text(c, "#eta-note").await;
        for code in view["notes"].as_array().unwrap() {
            let sentence = js(
                c,
                &format!(
                    "return JSON.parse(document.getElementById('anteroom').getAttribute('data-config')).notes['{}']",
                    code.as_str().unwrap()
                ),
            )
            .await;
            for part in fragments(sentence.as_str().unwrap()) {
                assert!(
                    notes.contains(part.trim()),
                    "{id} ({lang}): notes {notes:?} lack {part:?}"
                );
            }
        }
        if view["notes"].as_array().unwrap().is_empty() {
            assert_eq!(notes, "", "{id} ({lang}): a note the view does not send");
        }
        let name = format!("told-{}-{lang}", case.message);
        screenshot(c, &format!("{name}-desktop")).await;
        c.set_window_size(390, 844).await.unwrap();
        screenshot(c, &format!("{name}-phone")).await;
        c.set_window_size(1000, 900).await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_state_and_mode_shows_on_the_page_what_the_view_says() {
    let redis = RedisServer::start();
    let port = free_port();
    let rooms: Vec<RoomConfig> = ["en", "zh"]
        .into_iter()
        .flat_map(|l| cases(l).into_iter().map(|c| c.room))
        .collect();
    let app = spawn_app(demo_settings(&redis, port, rooms, "127.0.0.1")).await;
    let driver = Driver::start();
    for lang in ["en", "zh"] {
        let (c, _profile) = driver.browser(&[], true).await;
        walk(&app, &c, lang).await;
        c.close().await.unwrap();
    }
    // A passthrough room lets everyone in at once, and says so in the view.
    let mut s = demo_settings(
        &redis,
        free_port(),
        vec![RoomConfig {
            mode: QueueMode::Passthrough,
            ..room("open", 1)
        }],
        "127.0.0.1",
    );
    s.key_prefix = crate::helpers::prefix();
    let other = spawn_app(s).await;
    other.join("open").await;
    assert_eq!(other.join("open").await.body["message"], "admitted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_mode_is_a_draw_whose_figures_never_grow_into_a_place() {
    let redis = RedisServer::start();
    let port = free_port();
    let app = spawn_app(demo_settings(
        &redis,
        port,
        vec![RoomConfig {
            mode: QueueMode::Random,
            ..room("r", 1)
        }],
        "127.0.0.1",
    ))
    .await;
    app.join("r").await;
    let driver = Driver::start();
    let (c, _profile) = driver.browser(&[], true).await;
    c.goto(&app.url("/r/r")).await.unwrap();
    wait_text(&c, "#title", "You're in the draw").await;
    wait_text(&c, "#conn", "Live").await;
    for _ in 0..4 {
        app.join("r").await;
    }
    wait_text(&c, "#in-line", "5 in line").await;
    // Chances for the line as it is (or "not known yet" before the room has a basis).
    wait_until(DEADLINE, "the chances of the five waiting", || async {
        let t = text(&c, "#chances").await;
        (t.contains("About half of the 5 people waiting now") || t.starts_with("Not known yet"))
            .then_some(())
    })
    .await;
    assert!(!visible(&c, "#place-box").await, "a place is shown");
    assert!(!visible(&c, ".progress").await, "a progress bar is shown");
    let body = text(&c, "body").await;
    for false_story in [
        "in the order they arrived",
        "first come",
        "ahead of you",
        "taking longer than usual",
    ] {
        assert!(!body.contains(false_story), "{false_story:?} in {body}");
    }
    screenshot(&c, "told-random-five-waiting").await;
    assert_accessible(&c, "a random-mode page").await;
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_news_is_invented_and_a_reason_note_goes_with_its_reason() {
    let redis = RedisServer::start();
    let port = free_port();
    let app = spawn_app(demo_settings(
        &redis,
        port,
        vec![RoomConfig {
            stock: Some(10),
            ..room("r", 1)
        }],
        "127.0.0.1",
    ))
    .await;
    app.join("r").await;
    app.join("r").await;
    let driver = Driver::start();
    let (c, _profile) = driver.browser(&[], true).await;
    c.goto(&app.url("/r/r")).await.unwrap();
    wait_text(&c, "#position", "2").await;
    wait_text(&c, "#conn", "Live").await;
    // Nothing changes: for 6 s (more than a socket refresh), no news appears.
    let start = std::time::Instant::now();
    while start.elapsed() < Duration::from_secs(6) {
        let note = text(&c, "#eta-note").await;
        for invented in ["Good news", "went up", "faster than expected"] {
            assert!(!note.contains(invented), "invented news: {note:?}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Fewer items than places ahead: the server says it may sell out...
    let store = app.engine.shared_store();
    let mut cfg = store.room("r").await.unwrap().unwrap();
    cfg.stock = Some(1);
    store.put_room(&cfg, false).await.unwrap();
    wait_text_contains(&c, "#eta-note", "it may sell out before your turn").await;
    // ... and once topped up it stops saying so; so does the page.
    cfg.stock = Some(100);
    store.put_room(&cfg, false).await.unwrap();
    wait_until(DEADLINE, "the stock note to go with its reason", || async {
        (!text(&c, "#eta-note").await.contains("may sell out")).then_some(())
    })
    .await;
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn you_were_away_stays_until_the_visitor_has_read_it() {
    let redis = RedisServer::start();
    let port = free_port();
    let app = spawn_app(demo_settings(
        &redis,
        port,
        vec![RoomConfig {
            heartbeat_timeout_secs: 1,
            ..room("r", 1)
        }],
        "127.0.0.1",
    ))
    .await;
    app.join("r").await;
    let away = app.join("r").await.token();
    let stayer = app.join("r").await.token();
    wait_until(
        Duration::from_secs(10),
        "the away visitor to be dropped",
        || async {
            app.status("r", &stayer).await;
            (app.engine
                .admin_store()
                .stats("r")
                .await
                .unwrap()
                .queue_length
                == 1)
                .then_some(())
        },
    )
    .await;
    let driver = Driver::start();
    let (c, _profile) = driver.browser(&[], true).await;
    c.goto(&app.url("/healthz")).await.unwrap();
    js(
        &c,
        &format!("document.cookie = 'anteroom_vid={away}; path=/'; return true"),
    )
    .await;
    c.goto(&app.url("/r/r")).await.unwrap();
    wait_text_contains(&c, "#eta-note", "you lost your place").await;
    wait_text(&c, "#conn", "Live").await;
    // Socket statuses come and go (one at once, then every few seconds): it stays.
    let seen = std::time::Instant::now();
    while seen.elapsed() < Duration::from_secs(6) {
        assert!(
            text(&c, "#eta-note").await.contains("you lost your place"),
            "the away note was wiped"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    screenshot(&c, "told-you-were-away").await;
    c.find(Locator::Css("#dismiss"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_until(DEADLINE, "the note to go once read", || async {
        (!text(&c, "#eta-note").await.contains("lost your place")).then_some(())
    })
    .await;
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_reloads_in_a_minute_stay_within_the_default_limit() {
    let redis = RedisServer::start();
    let port = free_port();
    let mut s = demo_settings(&redis, port, vec![room("r", 1)], "127.0.0.1");
    let defaults = anteroom::config::Settings::default();
    s.rate_limit.visitor_requests = defaults.rate_limit.visitor_requests;
    s.rate_limit.visitor_window_secs = defaults.rate_limit.visitor_window_secs;
    assert_eq!(s.rate_limit.visitor_requests, 30);
    let app = spawn_app(s).await;
    app.join("r").await;
    let driver = Driver::start();
    let (c, _profile) = driver.browser(&[], true).await;
    c.goto(&app.url("/r/r")).await.unwrap();
    wait_text(&c, "#conn", "Live").await;
    // Each reload: the page, its socket (granted), and the old page's away beacon.
    for i in 0..20 {
        c.refresh().await.unwrap();
        let title = text(&c, "h1").await;
        assert_eq!(title, "You're in line", "reload {i}: {title}");
        wait_text(&c, "#conn", "Live").await;
    }
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_an_outage_the_page_stops_saying_live_and_a_newcomer_is_promised_nothing() {
    let mut redis = RedisServer::start();
    let port = free_port();
    let app = spawn_app(demo_settings(&redis, port, vec![room("r", 1)], "127.0.0.1")).await;
    app.join("r").await;
    let driver = Driver::start();
    let (c, _profile) = driver.browser(&[], true).await;
    c.goto(&app.url("/r/r")).await.unwrap();
    wait_text(&c, "#conn", "Live").await;
    redis.kill();
    // Statuses come at least every 5 s; a page 10 s into the outage is not live.
    let said = wait_until(
        Duration::from_secs(20),
        "the page to stop saying Live",
        || async {
            let t = text(&c, "#conn").await;
            (t != "Live").then_some(t)
        },
    )
    .await;
    assert!(said.starts_with("Not live: no update since"), "{said}");
    screenshot(&c, "told-not-live").await;
    // A first-time visitor (no cookie) is not told they keep a place they never had,
    // and the page tries again by itself, with a countdown.
    let (newcomer, _p2) = driver.browser(&[], true).await;
    newcomer.goto(&app.url("/r/r")).await.unwrap();
    wait_text(&newcomer, "h1", "We'll be right back").await;
    let lead = text(&newcomer, ".lead").await;
    assert!(!lead.contains("keep"), "{lead}");
    assert!(lead.contains("could not join the line yet"), "{lead}");
    wait_text_contains(&newcomer, "#retry-in", "Trying again in").await;
    screenshot(&newcomer, "told-outage-newcomer").await;
    redis.restart();
    wait_until(
        Duration::from_secs(30),
        "the outage page to retry by itself",
        || async { (text(&newcomer, "h1").await == "You're in line").then_some(()) },
    )
    .await;
    newcomer.close().await.unwrap();
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proof_of_work_room_with_javascript_off_says_javascript_is_needed() {
    let redis = RedisServer::start();
    let port = free_port();
    let app = spawn_app(demo_settings(
        &redis,
        port,
        vec![RoomConfig {
            challenge: ChallengeMode::Pow,
            ..room("r", 1)
        }],
        "127.0.0.1",
    ))
    .await;
    let driver = Driver::start();
    let (c, _profile) = driver.browser(&[], false).await;
    c.goto(&app.url("/r/r")).await.unwrap();
    wait_text(&c, "h1", "Checking your browser").await;
    let source = c.source().await.unwrap();
    assert!(
        !source.contains("http-equiv=\"refresh\""),
        "a proof-of-work page reloads forever without JavaScript"
    );
    wait_text_contains(&c, "#noscript-note", "needs JavaScript").await;
    screenshot(&c, "told-pow-noscript").await;
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_widget_on_a_site_the_room_does_not_allow_says_why_on_that_site() {
    let redis = RedisServer::start();
    let port = free_port();
    let app = spawn_app(demo_settings(
        &redis,
        port,
        vec![RoomConfig {
            name: "Sneaker drop".into(),
            embed_origins: vec![format!("http://allowed.test:{port}")],
            ..room("r", 1)
        }],
        "queue.test",
    ))
    .await;
    let driver = Driver::start();
    let (c, _profile) = driver
        .browser(
            &["--host-resolver-rules=MAP queue.test 127.0.0.1, MAP shop.test 127.0.0.1"],
            true,
        )
        .await;
    c.goto(&format!("http://shop.test:{port}/demo/host?room=r"))
        .await
        .unwrap();
    let shop = format!("http://shop.test:{port}");
    wait_text_contains(
        &c,
        "[data-anteroom-refused]",
        "does not allow being embedded on",
    )
    .await;
    let said = text(&c, "[data-anteroom-refused]").await;
    assert!(
        said.contains(&shop) && said.contains("embed_origins"),
        "{said}"
    );
    assert!(
        c.find(Locator::Css("iframe[data-anteroom]")).await.is_err(),
        "the refused frame is still there"
    );
    screenshot(&c, "told-embed-refused").await;
    let _ = app;
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_state_change_is_announced_whole_even_when_the_place_moves_in_the_same_tick() {
    let redis = RedisServer::start();
    let port = free_port();
    let app = spawn_app(demo_settings(&redis, port, vec![room("r", 1)], "127.0.0.1")).await;
    let holder = app.join("r").await.token();
    app.join("r").await;
    let driver = Driver::start();
    let (c, _profile) = driver.browser(&[], true).await;
    c.goto(&app.url("/r/r")).await.unwrap();
    wait_text(&c, "#position", "2").await;
    let store = app.engine.shared_store();
    let mut cfg = store.room("r").await.unwrap().unwrap();
    cfg.paused = true;
    store.put_room(&cfg, false).await.unwrap();
    wait_text(&c, "h1", "The line is paused").await;
    // Resuming and a place freeing up, together: one status with both.
    cfg.paused = false;
    app.release("r", &holder).await;
    store.put_room(&cfg, false).await.unwrap();
    wait_text(&c, "#position", "1").await;
    wait_text(&c, "h1", "You're in line").await;
    let said = js(&c, "return document.getElementById('announce').textContent").await;
    let said = said.as_str().unwrap_or_default().to_string();
    assert!(
        said.contains("You're in line"),
        "the state change was not what the screen reader was left with: {said:?}"
    );
    c.close().await.unwrap();
}

#[tokio::test]
async fn the_too_many_places_page_says_when_and_tries_again_by_itself() {
    let redis = RedisServer::start();
    let mut s = demo_settings(
        &redis,
        free_port(),
        vec![RoomConfig {
            max_places_per_ip: 1,
            ..room("r", 1)
        }],
        "127.0.0.1",
    );
    s.key_prefix = crate::helpers::prefix();
    let app = spawn_app(s).await;
    app.join("r").await;
    app.join("r").await;
    let res = crate::helpers::client()
        .get(app.url("/r/r"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 429);
    assert_eq!(res.headers()["retry-after"], "30");
    let page = res.text().await.unwrap();
    assert!(page.contains(r#"data-message="too_many_places""#), "{page}");
    assert!(page.contains(r#"id="retry-in""#), "no countdown: {page}");
    assert!(page.contains("this page tries again by itself"), "{page}");
    assert!(
        !page.contains(r#"class="button""#),
        "a Try again button: {page}"
    );
}

#[tokio::test]
async fn html_pages_are_gzipped_and_json_is_not() {
    let redis = RedisServer::start();
    let app = spawn_app(demo_settings(
        &redis,
        free_port(),
        vec![room("r", 1)],
        "127.0.0.1",
    ))
    .await;
    app.join("r").await;
    // A client that does not decompress, to see the bytes on the wire.
    let raw = reqwest::Client::builder().no_gzip().build().unwrap();
    let page = |gzip: bool| {
        let mut r = raw.get(app.url("/r/r"));
        if gzip {
            r = r.header("accept-encoding", "gzip");
        }
        r.send()
    };
    let plain = page(false).await.unwrap();
    assert!(plain.headers().get("content-encoding").is_none());
    let plain = plain.bytes().await.unwrap().len();
    let gz = page(true).await.unwrap();
    assert_eq!(gz.headers()["content-encoding"], "gzip");
    assert!(gz.headers()["vary"]
        .to_str()
        .unwrap()
        .contains("accept-encoding"));
    let gz = gz.bytes().await.unwrap().len();
    eprintln!("queue page: {plain} bytes, {gz} gzipped");
    assert!(gz * 2 < plain, "{gz} of {plain}");
    let json = raw
        .post(app.url("/api/rooms/r/join"))
        .header("accept-encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert!(json.headers().get("content-encoding").is_none());
}

#[tokio::test]
async fn a_schedule_set_a_moment_ago_is_in_the_very_next_answer() {
    let redis = RedisServer::start();
    let app = spawn_app(demo_settings(
        &redis,
        free_port(),
        vec![room("r", 1)],
        "127.0.0.1",
    ))
    .await;
    // The room's configuration is cached (as the joins read it)...
    app.join("r").await;
    let waiting = app.join("r").await.token();
    // ... when the schedule is set (through the store, as another instance would).
    let store = app.engine.shared_store();
    let mut cfg = store.room("r").await.unwrap().unwrap();
    let now = now_ms();
    cfg.prequeue_opens_at = Some(now - 1_000);
    cfg.opens_at = Some(now + 3_600_000);
    store.put_room(&cfg, false).await.unwrap();
    let r = app.join("r").await;
    assert_eq!(r.state(), "prequeue", "{}", r.body);
    assert_eq!(r.body["opens_at"], (now + 3_600_000) / 1000, "{}", r.body);
    assert_eq!(r.body["message"], "prequeue");
    let _ = waiting;
}

#[tokio::test]
async fn away_beacons_do_not_spend_the_visitors_requests() {
    let redis = RedisServer::start();
    let mut s = demo_settings(&redis, free_port(), vec![room("r", 1)], "127.0.0.1");
    s.rate_limit.visitor_requests = 5;
    s.rate_limit.visitor_window_secs = 60;
    let app = spawn_app(s).await;
    app.join("r").await;
    let token = app.join("r").await.token();
    for _ in 0..4 {
        let r = app
            .client
            .post(app.url("/api/rooms/r/away"))
            .body(token.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 204);
    }
    // One join and four beacons: the visitor has spent one request of five.
    for _ in 0..3 {
        assert_eq!(app.status("r", &token).await.status, 200);
    }
}
