//! A launch-day drop in real headless Chromium on a real Redis: the pre-queue page's
//! countdown, the move into the live queue at the opening without a reload, the "How
//! was my place decided?" check (its rank computed here independently), and the
//! admission. Screenshots land in target/screenshots/.

use std::time::Duration;

use crate::helpers::browser::{
    assert_accessible, screenshot, text, wait_text, wait_text_contains, Driver, DEADLINE,
};
use crate::helpers::fairness::{digest, hex, unhex};
use crate::helpers::{demo_settings, free_port, room, spawn_app, wait_until, RedisServer};
use anteroom::room::RoomConfig;
use fantoccini::{Client, Locator};
use serde_json::json;
use sha2::{Digest, Sha256};

fn now_ms() -> u64 {
    anteroom::clock::wall_ms()
}

/// The page's script configuration (what the server handed it).
async fn page_config(c: &Client) -> serde_json::Value {
    let raw = c
        .execute(
            "return document.getElementById('anteroom').getAttribute('data-config')",
            vec![],
        )
        .await
        .unwrap();
    serde_json::from_str(raw.as_str().unwrap()).unwrap()
}

async fn js(c: &Client, script: &str) -> serde_json::Value {
    c.execute(script, vec![]).await.unwrap()
}

/// Waits for the page's "How was my place decided?" section to show, then opens it.
async fn open_fairness(c: &Client) {
    wait_until(DEADLINE, "the fairness section", || async {
        (!js(c, "return document.getElementById('fairness').hidden")
            .await
            .as_bool()
            .unwrap())
        .then_some(())
    })
    .await;
    c.find(Locator::Css("#fairness summary"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prequeued_visitor_counts_down_moves_into_the_line_checks_the_draw_and_is_admitted() {
    let redis = RedisServer::start();
    let port = free_port();
    // Opens in 12 s: time to load the page and fill the pre-queue around it.
    let opens_at = (now_ms() / 1000 + 12) * 1000;
    let drop_room = RoomConfig {
        name: "Sneaker drop".into(),
        target_url: format!("http://127.0.0.1:{port}/demo/origin?room=d"),
        prequeue_opens_at: Some(now_ms() - 60_000),
        opens_at: Some(opens_at),
        ..room("d", 1)
    };
    // A room whose pre-queue opens in an hour: the `scheduled` page.
    let later = RoomConfig {
        name: "Next drop".into(),
        prequeue_opens_at: Some(now_ms() + 3_600_000),
        opens_at: Some(now_ms() + 5_400_000),
        ..room("later", 1)
    };
    // A room whose pre-queue is open for another hour: the pre-queue page in Chinese.
    let soon = RoomConfig {
        name: "Next drop".into(),
        prequeue_opens_at: Some(now_ms() - 60_000),
        opens_at: Some(now_ms() + 3_600_000),
        ..room("soon", 1)
    };
    let app = spawn_app(demo_settings(
        &redis,
        port,
        vec![drop_room, later, soon],
        "127.0.0.1",
    ))
    .await;
    // The seed, known here so the test can make sure somebody is drawn ahead of the
    // browser's visitor: set as any instance would (set-if-absent); the app's own drop
    // loop may have drawn one first, so the test goes on with whichever the store kept.
    let seed = app
        .engine
        .fairness_store()
        .event_seed("d", &hex(&[7u8; 32]))
        .await
        .unwrap();
    let (browser_token, others) = prequeue_with_one_ahead(&app, "d", &seed).await;

    let driver = Driver::start();
    let (c, _profile) = driver.browser(&[], true).await;
    // The visitor's clock is ten minutes fast: the countdown must not believe it.
    c.issue_cmd(Cdp(json!({
        "cmd": "Page.addScriptToEvaluateOnNewDocument",
        "params": {"source": "(function () { var real = Date.now; Date.now = function () { return real.call(Date) + 600000; }; })();"}
    })))
    .await
    .unwrap();
    as_visitor(&c, &app, &browser_token).await;
    c.goto(&app.url("/r/d?lang=en")).await.unwrap();
    wait_text(&c, "#title", "You're in the pre-queue").await;
    wait_text_contains(&c, "#lead", "everyone here gets a random place").await;
    wait_text_contains(&c, "#lead", "joining earlier does not help").await;
    wait_text(&c, "#conn", "Live").await;
    let me = page_config(&c).await["visitor_id"]
        .as_str()
        .expect("the page embeds the visitor id")
        .to_string();
    assert_eq!(me, browser_token.split_once('.').unwrap().0);
    // The countdown runs, on the server's clock.
    let first = text(&c, "#countdown").await;
    // Seconds left by the server's clock (opening in at most 12 s), not "opening now".
    let secs: u64 = first
        .strip_suffix(" s")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{first:?}"));
    assert!((1..=12).contains(&secs), "{first:?}");
    wait_until(DEADLINE, "the countdown to move", || async {
        let now = text(&c, "#countdown").await;
        (now != first).then_some(())
    })
    .await;
    assert!(js(&c, "return document.getElementById('numbers').hidden")
        .await
        .as_bool()
        .unwrap());
    screenshot(&c, "prequeue-en").await;
    assert_accessible(&c, "the pre-queue page").await;

    let mine = digest(&seed, &me);
    assert!(now_ms() + 2_000 < opens_at, "the page took too long");

    // No reload from here on: a marker on this window, and a count of page unloads.
    js(
        &c,
        "window.__dropMarker = 'before-opening';
         sessionStorage.setItem('unloads', '0');
         window.addEventListener('pagehide', function () {
           sessionStorage.setItem('unloads', String(Number(sessionStorage.getItem('unloads')) + 1));
         });
         return true;",
    )
    .await;

    // The opening: the socket's status moves the page into the line.
    let until_open = Duration::from_millis(opens_at.saturating_sub(now_ms()));
    let mut all: Vec<String> = others.iter().map(|(_, d)| d.clone()).collect();
    all.push(mine.clone());
    all.sort();
    let rank = all.iter().position(|d| *d == mine).unwrap() + 1;
    assert!(rank >= 2);
    // Rank 1 is let in at the opening (capacity 1): the visitor's place is rank - 1.
    let place = (rank - 1).to_string();
    wait_until(
        until_open + DEADLINE,
        "the page to show the line",
        || async { (text(&c, "#title").await == "You're in line").then_some(()) },
    )
    .await;
    wait_text(&c, "#position", &place).await;
    assert_eq!(
        text(&c, "#in-line").await,
        format!("{} in line", all.len() - 1)
    );
    // The opening is not told as a resumption (there was no pause to resume from).
    let note = text(&c, "#eta-note").await;
    assert!(!note.contains("moving again"), "{note:?}");
    assert!(
        js(&c, "return document.getElementById('countdown-box').hidden")
            .await
            .as_bool()
            .unwrap()
    );
    assert_eq!(
        js(&c, "return window.__dropMarker").await,
        json!("before-opening"),
        "the page was reloaded"
    );

    // "How was my place decided?": the seed is revealed; the browser checks the draw.
    open_fairness(&c).await;
    let want = format!(
        "Your draw: {}…; rank {rank} of {}; commitment matches: yes",
        &mine[..8],
        all.len()
    );
    wait_text(&c, "#fair-result", &want).await;
    // The rank is the draw's, not the place: the page says why they differ.
    assert!(c
        .find(Locator::Css("#fair-rank"))
        .await
        .unwrap()
        .is_displayed()
        .await
        .unwrap());
    // The commitment the page checked is the published one.
    let f = app.get("/api/rooms/d/fairness").await;
    assert_eq!(f.body["seed"], seed);
    assert_eq!(f.body["commitment"], hex(&Sha256::digest(unhex(&seed))));
    screenshot(&c, "fairness-en").await;
    assert_accessible(&c, "the queue page with the fairness check").await;

    // The visitors ahead finish; the page is let in and sent on, its only navigation.
    let mut ahead: Vec<&(String, String)> = others.iter().filter(|(_, d)| *d < mine).collect();
    ahead.sort_by(|a, b| a.1.cmp(&b.1));
    for (token, _) in ahead {
        assert_eq!(
            js(&c, "return window.__dropMarker").await,
            json!("before-opening")
        );
        app.release("d", token).await;
    }
    wait_until(DEADLINE, "the admission's redirect", || async {
        let url = c.current_url().await.unwrap();
        (url.path() == "/demo/origin").then_some(())
    })
    .await;
    wait_text(&c, "h1", "You're in.").await;
    assert_eq!(
        js(&c, "return sessionStorage.getItem('unloads')").await,
        json!("1"),
        "one navigation only: the admission's"
    );

    // A pre-queue in Chinese, and the scheduled room in both languages.
    let (z, _p2) = driver.browser(&[], true).await;
    z.goto(&app.url("/r/soon?lang=zh")).await.unwrap();
    wait_text(&z, "#title", "您已进入预排队").await;
    wait_text_contains(&z, "#lead", "提早加入并不会更靠前").await;
    wait_text_contains(&z, "#countdown", "秒").await;
    screenshot(&z, "prequeue-zh").await;
    assert_accessible(&z, "the pre-queue page in Chinese").await;
    z.goto(&app.url("/r/later?lang=zh")).await.unwrap();
    wait_text(&z, "#title", "队伍尚未开放").await;
    wait_text_contains(&z, "#lead", "排队将于").await;
    screenshot(&z, "scheduled-zh").await;
    assert_accessible(&z, "the scheduled page in Chinese").await;
    z.goto(&app.url("/r/later?lang=en")).await.unwrap();
    wait_text(&z, "#title", "The line has not opened yet").await;
    wait_text_contains(&z, "#countdown", "min").await;
    screenshot(&z, "scheduled-en").await;
    z.close().await.unwrap();
    c.close().await.unwrap();
}

/// Four visitors join the pre-queue; the one drawn second is the browser's (so one is let
/// in ahead of it at the opening and it waits in line first): its token, and the
/// others' tokens and draws.
async fn prequeue_with_one_ahead(
    app: &crate::helpers::TestApp,
    room: &str,
    seed: &str,
) -> (String, Vec<(String, String)>) {
    let mut all: Vec<(String, String)> = Vec::new();
    for _ in 0..4 {
        let j = app.join(room).await;
        assert_eq!(j.body["state"], "prequeue", "{:?}", j.body);
        let token = j.token();
        let id = token.split_once('.').unwrap().0.to_string();
        all.push((token.clone(), digest(seed, &id)));
    }
    all.sort_by(|a, b| a.1.cmp(&b.1));
    let (browser, _) = all.remove(1);
    (browser, all)
}

/// The browser becomes the visitor of `token` (its identity cookie), as if it had joined.
async fn as_visitor(c: &Client, app: &crate::helpers::TestApp, token: &str) {
    // Any page of the origin (an HTML one: the cookie needs a document with its domain).
    c.goto(&app.url("/nothing-here")).await.unwrap();
    let set = format!(
        "document.cookie = '{}={token}; path=/'; return document.cookie;",
        anteroom::domain::identity::VISITOR_COOKIE
    );
    let cookies = js(c, &set).await;
    assert!(cookies.as_str().unwrap().contains(token), "{cookies}");
}

/// A Chrome DevTools command through chromedriver (`goog/cdp/execute`).
#[derive(Debug)]
struct Cdp(serde_json::Value);

impl fantoccini::wd::WebDriverCompatibleCommand for Cdp {
    fn endpoint(
        &self,
        base: &url::Url,
        session: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base.join(&format!(
            "session/{}/goog/cdp/execute",
            session.unwrap_or_default()
        ))
    }
    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        (http::Method::POST, Some(self.0.to_string()))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prequeued_page_without_websockets_polls_into_the_line_at_the_opening() {
    let redis = RedisServer::start();
    let port = free_port();
    let opens_at = (now_ms() / 1000 + 10) * 1000;
    let app = spawn_app(demo_settings(
        &redis,
        port,
        vec![RoomConfig {
            prequeue_opens_at: Some(now_ms() - 60_000),
            opens_at: Some(opens_at),
            ..room("p", 1)
        }],
        "127.0.0.1",
    ))
    .await;
    // Whichever seed the store kept (the app's drop loop may have drawn one first).
    let seed = app
        .engine
        .fairness_store()
        .event_seed("p", &hex(&[9u8; 32]))
        .await
        .unwrap();
    let (browser_token, others) = prequeue_with_one_ahead(&app, "p", &seed).await;
    let driver = Driver::start();
    let (c, _profile) = driver.browser(&[], true).await;
    as_visitor(&c, &app, &browser_token).await;
    // A network where WebSockets never open (a proxy that blocks them): the page polls.
    c.issue_cmd(Cdp(json!({
        "cmd": "Page.addScriptToEvaluateOnNewDocument",
        "params": {"source": "window.WebSocket = function () { throw new Error('blocked'); };"}
    })))
    .await
    .unwrap();
    // In Chinese: the strings of the flip and of the check too.
    c.goto(&app.url("/r/p?lang=zh")).await.unwrap();
    wait_text(&c, "#title", "您已进入预排队").await;
    wait_text_contains(&c, "#conn", "改为每隔几秒检查一次").await;
    js(&c, "window.__dropMarker = 'before-opening'; return true;").await;

    let until_open = Duration::from_millis(opens_at.saturating_sub(now_ms()));
    wait_until(
        until_open + DEADLINE,
        "the polling page to show the line",
        || async { (text(&c, "#title").await == "您正在排队").then_some(()) },
    )
    .await;
    assert_eq!(
        text(&c, "#in-line").await,
        format!("共 {} 人排队", others.len()),
        "every pre-queued visitor but the one let in"
    );
    assert_eq!(
        js(&c, "return window.__dropMarker").await,
        json!("before-opening"),
        "the page was reloaded"
    );
    // The check, in Chinese: drawn second of four.
    open_fairness(&c).await;
    let me = browser_token.split_once('.').unwrap().0;
    let want = format!(
        "您的抽签值：{}…；排名第 2 位，共 4 人；承诺值一致：是",
        &digest(&seed, me)[..8]
    );
    wait_text(&c, "#fair-result", &want).await;
    // The rank is the draw's, not the place: the page says why they differ.
    assert!(c
        .find(Locator::Css("#fair-rank"))
        .await
        .unwrap()
        .is_displayed()
        .await
        .unwrap());
    screenshot(&c, "fairness-zh").await;
    assert_accessible(&c, "the Chinese queue page with the fairness check").await;
    c.close().await.unwrap();
}

/// The embedded widget (`/embed/{room}`, in an iframe on the shop's page) shows a drop as
/// the full page does: the pre-queue's lead and the countdown on the server's clock.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_embedded_widget_counts_down_to_a_drop_too() {
    let redis = RedisServer::start();
    let port = free_port();
    let origin = format!("http://127.0.0.1:{port}");
    let soon = RoomConfig {
        name: "Next drop".into(),
        prequeue_opens_at: Some(now_ms() - 60_000),
        opens_at: Some(now_ms() + 90_000),
        embed_origins: vec![origin.clone()],
        ..room("soon", 1)
    };
    let app = spawn_app(demo_settings(&redis, port, vec![soon], "127.0.0.1")).await;
    let driver = Driver::start();
    let (c, _profile) = driver.browser(&[], true).await;
    c.goto(&app.url(&format!("/embed/soon?parent={origin}&lang=en")))
        .await
        .unwrap();
    wait_text(&c, "#title", "You're in the pre-queue").await;
    wait_until(DEADLINE, "the widget's countdown", || async {
        let shown = !js(&c, "return document.getElementById('countdown-box').hidden")
            .await
            .as_bool()
            .unwrap_or(true);
        let left = text(&c, "#countdown").await;
        (shown && left.contains("min")).then_some(left)
    })
    .await;
    screenshot(&c, "embed-prequeue").await;
    assert_accessible(&c, "the embedded widget in the pre-queue").await;
    c.close().await.unwrap();
}
