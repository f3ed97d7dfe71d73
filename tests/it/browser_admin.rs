//! The admin dashboard in real headless Chromium against a real server and Redis: the
//! settings form never writes over a colleague's change, bad stock input never sells a
//! room out, the controls offer only what makes sense, and the figures read in words.
//! Screenshots land in target/screenshots/ (admin-conflict, admin-mobile,
//! admin-mobile-audit).

use crate::helpers::admin::{admin, admin_settings, TOKEN};
use crate::helpers::browser::{
    assert_accessible, screenshot, text, wait_text, wait_text_contains, Driver, DEADLINE,
};
use crate::helpers::{room, spawn_app, wait_until, RedisServer, TestApp};
use anteroom::domain::identity::VisitorId;
use anteroom::room::RoomConfig;
use fantoccini::{Client, Locator};
use reqwest::Method;
use serde_json::json;

/// A signed-in dashboard on a server with `rooms`, in a browser `width` pixels wide.
struct Dashboard {
    app: TestApp,
    c: Client,
    _redis: RedisServer,
    _driver: Driver,
    _profile: tempfile::TempDir,
}

async fn dashboard(rooms: Vec<RoomConfig>, width: u32) -> Dashboard {
    dashboard_with(rooms, width, |_| {}).await
}

/// Another browser, `width` pixels wide, signed in to `app`'s dashboard.
async fn dashboard_on(app: &TestApp, width: u32) -> (Client, Driver, tempfile::TempDir) {
    let driver = Driver::start();
    let size = format!("--window-size={width},900");
    let (c, profile) = driver.browser(&[&size], true).await;
    c.goto(&app.url("/admin")).await.unwrap();
    typed(&c, "#credential", TOKEN).await;
    click(&c, "form button[type=submit]").await;
    wait_text(&c, "#live-status", "Live").await;
    (c, driver, profile)
}

/// [`dashboard`] on a server whose settings `tune` changed.
async fn dashboard_with(
    rooms: Vec<RoomConfig>,
    width: u32,
    tune: impl FnOnce(&mut anteroom::config::Settings),
) -> Dashboard {
    let redis = RedisServer::start();
    let mut settings = admin_settings(&redis, &crate::helpers::prefix(), rooms);
    tune(&mut settings);
    let app = spawn_app(settings).await;
    let driver = Driver::start();
    let size = format!("--window-size={width},1400");
    let (c, profile) = driver.browser(&[&size], true).await;
    c.goto(&app.url("/admin")).await.unwrap();
    typed(&c, "#credential", TOKEN).await;
    click(&c, "form button[type=submit]").await;
    wait_text(&c, "#live-status", "Live").await;
    Dashboard {
        app,
        c,
        _redis: redis,
        _driver: driver,
        _profile: profile,
    }
}

async fn click(c: &Client, css: &str) {
    c.find(Locator::Css(css))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

/// Replaces an input's text, as a person would (focus, select all, type).
async fn typed(c: &Client, css: &str, value: &str) {
    let input = c.find(Locator::Css(css)).await.unwrap();
    input.clear().await.unwrap();
    input.send_keys(value).await.unwrap();
}

async fn value(c: &Client, css: &str) -> String {
    let input = c.find(Locator::Css(css)).await.unwrap();
    input.prop("value").await.unwrap().unwrap_or_default()
}

async fn wait_value(c: &Client, css: &str, want: &str) {
    wait_until(DEADLINE, &format!("{css} to hold {want:?}"), || async {
        (value(c, css).await == want).then_some(())
    })
    .await;
}

async fn enabled(c: &Client, css: &str) -> bool {
    let b = c.find(Locator::Css(css)).await.unwrap();
    b.is_enabled().await.unwrap()
}

/// Waits for a confirm() and answers it; returns its text.
async fn answer_confirm(c: &Client, accept: bool) -> String {
    let text = wait_until(DEADLINE, "a confirm dialog", || async {
        c.get_alert_text().await.ok()
    })
    .await;
    if accept {
        c.accept_alert().await.unwrap();
    } else {
        c.dismiss_alert().await.unwrap();
    }
    text
}

async fn put(app: &TestApp, room: &str, body: serde_json::Value) {
    let r = admin(
        app,
        Method::PUT,
        &format!("/api/admin/rooms/{room}"),
        Some(body),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
}

const SETTINGS: &str = "#room-sale form[data-act=settings]";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saving_one_setting_keeps_a_colleagues_change_and_untouched_inputs_follow_it() {
    let d = dashboard(vec![room("sale", 4)], 1280).await;
    let c = &d.c;
    wait_value(c, &format!("{SETTINGS} input[name=capacity]"), "4").await;

    // A colleague raises the capacity through the API while the dashboard is open.
    put(&d.app, "sale", json!({"capacity": 10})).await;
    wait_text(c, "#room-sale [data-f=active_capacity]", "0 / 10").await;

    // The admin changes only the heartbeat and saves.
    typed(
        c,
        &format!("{SETTINGS} input[name=heartbeat_timeout_secs]"),
        "45",
    )
    .await;
    click(c, &format!("{SETTINGS} button[type=submit]")).await;
    let cfg = wait_until(DEADLINE, "the heartbeat change to land", || async {
        let cfg = d
            .app
            .engine
            .room_store()
            .room("sale")
            .await
            .unwrap()
            .unwrap();
        (cfg.heartbeat_timeout_secs == 45).then_some(cfg)
    })
    .await;
    assert_eq!(cfg.capacity, 10, "the colleague's capacity stands");
    wait_text_contains(
        c,
        "#room-sale [data-f=feedback]",
        "Saved Heartbeat timeout (s) for sale",
    )
    .await;
    // The untouched input followed the feed.
    assert_eq!(
        value(c, &format!("{SETTINGS} input[name=capacity]")).await,
        "10"
    );
    let audit = admin(&d.app, Method::GET, "/api/admin/rooms/sale/audit", None).await;
    let actions: Vec<&str> = audit.body["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["set heartbeat_timeout_secs", "set capacity"]);
    d.c.clone().close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_colleagues_change_to_a_field_being_edited_is_shown_as_a_conflict() {
    let d = dashboard(vec![room("sale", 4)], 1280).await;
    let c = &d.c;
    let capacity = format!("{SETTINGS} input[name=capacity]");
    let ttl = format!("{SETTINGS} input[name=session_ttl_secs]");
    wait_value(c, &capacity, "4").await;
    typed(c, &capacity, "7").await;

    put(
        &d.app,
        "sale",
        json!({"capacity": 10, "session_ttl_secs": 120}),
    )
    .await;
    // The field nobody is editing follows; the one being typed in is left alone.
    wait_value(c, &ttl, "120").await;
    assert_eq!(value(c, &capacity).await, "7", "never overwrite typing");

    click(c, &format!("{SETTINGS} button[type=submit]")).await;
    wait_text_contains(
        c,
        "#room-sale [data-f=conflict_fields]",
        "Capacity: now 10 (was 4 when you started; you entered 7)",
    )
    .await;
    wait_text_contains(c, "#room-sale [data-f=feedback]", "Not saved").await;
    assert_eq!(
        d.app
            .engine
            .room_store()
            .room("sale")
            .await
            .unwrap()
            .unwrap()
            .capacity,
        10,
        "nothing overwritten"
    );
    screenshot(c, "admin-conflict").await;
    assert_accessible(c, "the dashboard showing a conflict").await;

    // Load the current values, then save a new decision.
    click(c, "#room-sale [data-do=load-current]").await;
    assert_eq!(value(c, &capacity).await, "10");
    assert!(!c
        .find(Locator::Css("#room-sale [data-f=conflict]"))
        .await
        .unwrap()
        .is_displayed()
        .await
        .unwrap());
    typed(c, &capacity, "12").await;
    click(c, &format!("{SETTINGS} button[type=submit]")).await;
    wait_text_contains(c, "#room-sale [data-f=feedback]", "Saved Capacity for sale").await;
    let cfg = d
        .app
        .engine
        .room_store()
        .room("sale")
        .await
        .unwrap()
        .unwrap();
    assert_eq!((cfg.capacity, cfg.session_ttl_secs), (12, 120));
    d.c.clone().close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_stock_box_is_an_error_and_zero_while_people_wait_asks_first() {
    let d = dashboard(
        vec![RoomConfig {
            stock: Some(50),
            ..room("sale", 1)
        }],
        1280,
    )
    .await;
    let c = &d.c;
    d.app.join("sale").await;
    d.app.join("sale").await;
    wait_text(c, "#room-sale [data-f=queue_length]", "1").await;
    let stock = || async {
        d.app
            .engine
            .room_store()
            .room("sale")
            .await
            .unwrap()
            .unwrap()
            .stock
    };
    let set = "#room-sale form[data-act=stock] button[value=set]";

    click(c, set).await;
    wait_text(
        c,
        "#room-sale [data-f=stock_error]",
        "Enter a whole number of units first.",
    )
    .await;
    let input = c
        .find(Locator::Css(
            "#room-sale form[data-act=stock] input[name=n]",
        ))
        .await
        .unwrap();
    assert_eq!(
        input.attr("aria-invalid").await.unwrap().as_deref(),
        Some("true")
    );
    click(c, "#room-sale form[data-act=stock] button[value=add]").await;
    assert_eq!(stock().await, Some(49), "nothing sent");

    typed(c, "#room-sale form[data-act=stock] input[name=n]", "0").await;
    // Count the page's requests: the handler calls fetch synchronously once the dialog is
    // answered, so the count right after it says whether anything was sent.
    c.execute(
        "window.__fetches = 0; var f = window.fetch; window.fetch = function () { window.__fetches++; return f.apply(this, arguments); }; return 0",
        vec![],
    )
    .await
    .unwrap();
    click(c, set).await;
    let asked = answer_confirm(c, false).await;
    assert!(
        asked.contains("stock of sale to 0") && asked.contains("1 person waiting"),
        "{asked}"
    );
    let sent = c.execute("return window.__fetches", vec![]).await.unwrap();
    assert_eq!(sent, serde_json::json!(0), "cancelling sends nothing");
    assert_eq!(stock().await, Some(49));

    click(c, set).await;
    answer_confirm(c, true).await;
    wait_text_contains(c, "#room-sale [data-f=feedback]", "Stock of sale is now 0.").await;
    assert_eq!(stock().await, Some(0));
    d.c.clone().close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_switches_that_change_something_are_enabled_and_they_follow_the_feed() {
    let d = dashboard(vec![room("sale", 4)], 1280).await;
    let c = &d.c;
    let b = |act: &str| format!("#room-sale button[data-act={act}]");
    let states = || async {
        let mut on = Vec::new();
        for act in ["pause", "resume", "close", "open"] {
            if enabled(c, &b(act)).await {
                on.push(act);
            }
        }
        on
    };
    let wait_states = |want: &'static [&'static str]| async move {
        wait_until(DEADLINE, &format!("only {want:?} enabled"), || async {
            (states().await == want).then_some(())
        })
        .await
    };
    wait_states(&["pause", "close"]).await;
    click(c, &b("pause")).await;
    wait_states(&["resume", "close"]).await;
    // A change made elsewhere reaches the buttons through the feed.
    admin(&d.app, Method::POST, "/api/admin/rooms/sale/close", None).await;
    wait_states(&["resume", "open"]).await;
    admin(&d.app, Method::POST, "/api/admin/rooms/sale/resume", None).await;
    wait_states(&["open"]).await;
    click(c, &b("open")).await;
    wait_states(&["pause", "close"]).await;
    d.c.clone().close().await.unwrap();
}

/// The room's `mode` and `queue_all` as the admin API reads them.
async fn queueing_of(app: &TestApp, room: &str) -> (String, bool) {
    let r = admin(app, Method::GET, &format!("/api/admin/rooms/{room}"), None).await;
    let cfg = &r.body["config"];
    (
        cfg["mode"].as_str().unwrap_or_default().to_string(),
        cfg["queue_all"].as_bool().unwrap_or_default(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_switches_the_queueing_mode_and_queues_everyone_on_launch_day() {
    let d = dashboard(vec![room("sale", 4)], 1280).await;
    let (c, app) = (&d.c, &d.app);
    const FORM: &str = "#room-sale form[data-act=queueing]";
    let all = format!("{FORM} [data-do=queue-all]");
    wait_value(c, &format!("{FORM} select"), "fifo").await;
    // Reject asks first; declined, nothing changes.
    c.find(Locator::Css(&format!("{FORM} option[value=reject]")))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    click(c, &format!("{FORM} button[type=submit]")).await;
    assert!(answer_confirm(c, false).await.contains("Stop admitting"));
    assert_eq!(queueing_of(app, "sale").await, ("fifo".into(), false));
    click(c, &format!("{FORM} button[type=submit]")).await;
    answer_confirm(c, true).await;
    wait_until(DEADLINE, "the room in reject mode", || async {
        (queueing_of(app, "sale").await == ("reject".into(), false)).then_some(())
    })
    .await;
    // The emergency switch, on and off, its label saying which.
    click(c, &all).await;
    answer_confirm(c, true).await;
    wait_text(c, &all, "Stop queueing everyone").await;
    assert_eq!(queueing_of(app, "sale").await, ("reject".into(), true));
    click(c, &all).await;
    wait_text(c, &all, "Queue everyone").await;
    assert_eq!(queueing_of(app, "sale").await, ("reject".into(), false));
    // A change made elsewhere reaches the select through the feed.
    put(app, "sale", json!({"mode": "passthrough"})).await;
    wait_value(c, &format!("{FORM} select"), "passthrough").await;
    wait_text(c, "#room-sale [data-f=state]", "OPEN · PASSTHROUGH").await;
    // Every change is in the audit log.
    let audit = admin(app, Method::GET, "/api/admin/rooms/sale/audit", None).await;
    let actions: Vec<String> = audit.body["entries"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|e| e["action"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        actions.iter().filter(|a| *a == "set mode").count(),
        2,
        "{actions:?}"
    );
    assert_eq!(
        actions.iter().filter(|a| *a == "set queue_all").count(),
        2,
        "{actions:?}"
    );
    screenshot(c, "admin-queueing").await;
    assert_accessible(c, "the dashboard with the queueing controls").await;
    d.c.clone().close().await.unwrap();
}

/// Words in the audit table that the browser broke across lines (a word whose
/// characters do not all sit on one line box).
const BROKEN_WORDS: &str = "
    var broken = [];
    document.querySelectorAll('#audit td').forEach(function (td) {
      var node = td.firstChild, text = node ? node.textContent : '', re = /\\S+/g, m;
      while ((m = re.exec(text))) {
        var r = document.createRange();
        r.setStart(node, m.index);
        r.setEnd(node, m.index + m[0].length);
        var tops = {};
        Array.prototype.forEach.call(r.getClientRects(), function (b) { tops[Math.round(b.top)] = 1; });
        if (Object.keys(tops).length > 1) broken.push(m[0]);
      }
    });
    return broken;";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_chart_has_axes_and_values_and_the_audit_reads_in_words_even_on_a_phone() {
    let d = dashboard(vec![room("sale", 2)], 1280).await;
    let (c, app) = (&d.c, &d.app);
    let mut tokens = Vec::new();
    for _ in 0..6 {
        tokens.push(app.join("sale").await.token());
    }
    wait_text(c, "#room-sale [data-f=queue_length]", "4").await;
    for (path, body) in [
        ("/api/admin/rooms/sale/stock", json!({"set": 5})),
        ("/api/admin/rooms/sale/stock", json!({"unlimited": true})),
    ] {
        admin(app, Method::POST, path, Some(body)).await;
    }
    put(app, "sale", json!({"max_admissions_per_minute": 10})).await;
    put(app, "sale", json!({"max_admissions_per_minute": 0})).await;
    let last = VisitorId::parse(tokens[5].split('.').next().unwrap()).unwrap();
    admin(
        app,
        Method::DELETE,
        &format!("/api/admin/rooms/sale/visitors/{}", last.as_str()),
        None,
    )
    .await;

    // The chart: a y axis up to a round number, a time axis, the values now.
    wait_text_contains(c, "#room-sale [data-f=chart_now]", "Now: 3 waiting").await;
    let y_max: u64 = text(c, "#room-sale [data-f=y_max]").await.parse().unwrap();
    assert!(y_max >= 3, "{y_max}");
    let x_axis = text(c, "#room-sale .x-axis").await;
    assert!(
        x_axis.contains("−30 min") && x_axis.ends_with("now"),
        "{x_axis}"
    );
    let svg = c
        .find(Locator::Css("#room-sale svg[data-f=chart]"))
        .await
        .unwrap();
    assert_eq!(svg.attr("role").await.unwrap().as_deref(), Some("img"));
    let label = svg.attr("aria-label").await.unwrap().unwrap();
    assert!(
        label.contains(&format!("scale 0 to {y_max}")) && label.contains("Waiting: 3 now"),
        "{label}"
    );

    // The audit log: unlimited and off in words, the removed visitor by support code.
    let audit = wait_until(DEADLINE, "the audit entries", || async {
        let t = text(c, "#audit").await;
        t.contains("set max_admissions_per_minute").then_some(t)
    })
    .await;
    assert!(!audit.contains("null"), "{audit}");
    assert!(audit.contains("5 → unlimited"), "{audit}");
    assert!(audit.contains("10 / min → off"), "{audit}");
    assert!(
        audit.contains(&format!("{} → removed", last.support_code())),
        "{audit}"
    );

    // At 390 px: no word broken mid-word, nothing wider than the screen.
    c.set_window_size(390, 844).await.unwrap();
    let width = c
        .execute("return window.innerWidth;", vec![])
        .await
        .unwrap();
    assert!(width.as_u64().unwrap() <= 400, "{width}");
    let broken = c.execute(BROKEN_WORDS, vec![]).await.unwrap();
    assert_eq!(broken, json!([]), "words broken mid-word in the audit log");
    let overflow = c
        .execute(
            "return document.documentElement.scrollWidth - window.innerWidth;",
            vec![],
        )
        .await
        .unwrap();
    assert!(
        overflow.as_i64().unwrap() <= 0,
        "page overflows by {overflow}"
    );
    c.execute("window.scrollTo(0, 0);", vec![]).await.unwrap();
    screenshot(c, "admin-mobile").await;
    c.execute(
        "document.querySelector('table.audit').scrollIntoView();",
        vec![],
    )
    .await
    .unwrap();
    screenshot(c, "admin-mobile-audit").await;
    assert_accessible(c, "the dashboard at 390 px").await;
    d.c.clone().close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admin_finds_a_visitor_by_support_code_and_removes_them() {
    let d = dashboard(vec![room("sale", 1)], 1280).await;
    let (c, app) = (&d.c, &d.app);
    let ids: Vec<VisitorId> = {
        let mut v = Vec::new();
        for _ in 0..3 {
            let t = app.join("sale").await.token();
            v.push(VisitorId::parse(t.split('.').next().unwrap()).unwrap());
        }
        v
    };
    wait_text(c, "#room-sale [data-f=queue_length]", "2").await;

    // Found by the code the visitor reads out, typed loosely.
    let code = ids[2].support_code();
    typed(
        c,
        "#room-sale form[data-act=find] input[name=q]",
        &code.to_lowercase(),
    )
    .await;
    click(c, "#room-sale form[data-act=find] button").await;
    wait_text_contains(c, "#room-sale [data-f=found_list]", "queued, position 2").await;
    let found = text(c, "#room-sale [data-f=found_list]").await;
    assert!(
        found.contains(&code) && found.contains(ids[2].as_str()),
        "{found}"
    );
    assert_accessible(c, "the dashboard with a visitor found").await;
    // Removing asks first: the button becomes a confirmation, and nothing is removed yet.
    click(c, "#room-sale [data-f=found_list] button").await;
    wait_text_contains(
        c,
        "#room-sale [data-f=found_list] button",
        &format!("Confirm: remove {code}"),
    )
    .await;
    assert_eq!(
        app.engine
            .admin_store()
            .stats("sale")
            .await
            .unwrap()
            .queue_length,
        2
    );
    click(c, "#room-sale [data-f=found_list] button").await;
    wait_text_contains(
        c,
        "#room-sale [data-f=feedback]",
        &format!("Removed {code} from sale."),
    )
    .await;
    assert_eq!(
        app.engine
            .admin_store()
            .stats("sale")
            .await
            .unwrap()
            .queue_length,
        1
    );

    // The remove box takes a code too.
    let holder = ids[0].support_code();
    typed(
        c,
        "#room-sale form[data-act=remove] input[name=visitor]",
        &holder,
    )
    .await;
    click(c, "#room-sale form[data-act=remove] button").await;
    click(c, "#room-sale form[data-act=remove] button").await;
    wait_text_contains(
        c,
        "#room-sale [data-f=feedback]",
        &format!("Removed {holder} from sale."),
    )
    .await;
    wait_until(DEADLINE, "the next in line to be admitted", || async {
        let st = app.engine.admin_store().stats("sale").await.unwrap();
        (st.queue_length == 0 && st.active == 1).then_some(())
    })
    .await;

    // A code two visitors share removes nobody; both are offered by full id.
    let (a, b) = (
        "abcdef0123000000000000000000000a",
        "abcdef0123ffffffffffffffffffffff",
    );
    app.engine.admission_store().join("sale", a).await.unwrap();
    app.engine.admission_store().join("sale", b).await.unwrap();
    let shared = VisitorId::parse(a).unwrap().support_code();
    typed(
        c,
        "#room-sale form[data-act=remove] input[name=visitor]",
        &shared,
    )
    .await;
    click(c, "#room-sale form[data-act=remove] button").await;
    click(c, "#room-sale form[data-act=remove] button").await;
    wait_text_contains(
        c,
        "#room-sale [data-f=found_text]",
        "matches 2 visitors; nobody was removed",
    )
    .await;
    let offered = text(c, "#room-sale [data-f=found_list]").await;
    assert!(offered.contains(a) && offered.contains(b), "{offered}");
    assert_eq!(
        app.engine
            .admin_store()
            .stats("sale")
            .await
            .unwrap()
            .queue_length,
        2
    );
    d.c.clone().close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_admin_login_page_is_accessible_with_and_without_an_error() {
    let redis = RedisServer::start();
    let app = spawn_app(admin_settings(&redis, &crate::helpers::prefix(), vec![])).await;
    let driver = Driver::start();
    let (c, _profile) = driver.browser(&[], true).await;
    c.goto(&app.url("/admin")).await.unwrap();
    assert_accessible(&c, "the admin login page").await;
    typed(&c, "#credential", "not-the-token").await;
    click(&c, "form button[type=submit]").await;
    wait_text_contains(&c, ".alert", "not right").await;
    assert_accessible(&c, "the admin login page with an error").await;
    c.close().await.unwrap();
}

/// A drop's card shows the commitment before the opening, the seed after it, and the
/// FIFO audit (0 discordant pairs: the shuffle hands out tickets in the drawn order).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drops_card_shows_the_commitment_then_the_seed_and_the_fifo_audit() {
    let now = anteroom::clock::wall_ms();
    let d = dashboard(
        vec![RoomConfig {
            name: "Sneaker drop".into(),
            prequeue_opens_at: Some(now - 60_000),
            // Time for the joins and the card's first look before the opening, on a CI
            // machine running the whole suite (4 s was too short once there).
            opens_at: Some(now + 10_000),
            ..room("d", 1)
        }],
        1200,
    )
    .await;
    let (app, c) = (&d.app, &d.c);
    let mut tokens = Vec::new();
    for _ in 0..3 {
        tokens.push(app.join("d").await.token());
    }
    let commitment = app.get("/api/rooms/d/fairness").await.body["commitment"]
        .as_str()
        .unwrap()
        .to_string();
    // The card reads its details when it is drawn (then every 30 s): draw it again.
    c.refresh().await.unwrap();
    wait_text(c, "#room-d [data-f=commitment]", &commitment).await;
    wait_text_contains(c, "#room-d [data-f=seed]", "not revealed yet").await;

    let seed = wait_until(DEADLINE, "the shuffle", || async {
        let f = app.get("/api/rooms/d/fairness").await;
        f.body["seed"].as_str().map(str::to_string)
    })
    .await;
    // The one drawn first is in; it leaves and the next comes in from the line.
    tokens.sort_by_key(|t| anteroom::store::fairness_digest(&seed, t.split_once('.').unwrap().0));
    assert_eq!(app.release("d", &tokens[0]).await.status, 204);
    c.refresh().await.unwrap();
    wait_text(c, "#room-d [data-f=seed]", &seed).await;
    wait_text(c, "#room-d [data-f=prequeue]", "3 in the pre-queue").await;
    wait_text(
        c,
        "#room-d [data-f=fifo_audit]",
        "0 discordant pairs in 2 admissions (Kendall tau 0.000)",
    )
    .await;
    screenshot(c, "admin-drop").await;
    assert_accessible(c, "the dashboard with a drop").await;
}

/// Issue 30 finding 10: with 100 rooms the dashboard was 98,835 px tall (every room a full
/// card), with no index, search or filter. Now it is a compact list of rooms, searchable
/// and filtered by state, with one room's card below it (the one named in the address).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_rooms_are_a_list_to_search_with_one_room_open() {
    let rooms: Vec<RoomConfig> = (0..100).map(|i| room(&format!("r{i:03}"), 2)).collect();
    let d = dashboard(rooms, 1280).await;
    let (c, app) = (&d.c, &d.app);
    app.join("r042").await;
    app.join("r042").await;
    app.join("r042").await;
    admin(app, Method::POST, "/api/admin/rooms/r077/pause", None).await;
    wait_text(c, "#room-count", "100 rooms").await;
    wait_text(c, "#row-r042 td:nth-child(3)", "1").await;
    // One card open: the first room's.
    let open: i64 = c
        .execute(
            "return [...document.querySelectorAll('#rooms article.room')].filter(a => !a.hidden).length",
            vec![],
        )
        .await
        .unwrap()
        .as_i64()
        .unwrap();
    assert_eq!(open, 1);
    let height = c
        .execute("return document.documentElement.scrollHeight", vec![])
        .await
        .unwrap()
        .as_i64()
        .unwrap();
    println!("dashboard with 100 rooms: {height} px tall");
    assert!(height < 10_000, "{height} px");
    screenshot(c, "admin-100-rooms").await;
    // Search narrows the list; the state filter too.
    typed(c, "#room-search", "r04").await;
    wait_text(c, "#room-count", "10 of 100 rooms").await;
    typed(c, "#room-search", "").await;
    c.find(Locator::Css("#room-filter"))
        .await
        .unwrap()
        .select_by_value("paused")
        .await
        .unwrap();
    wait_text(c, "#room-count", "1 of 100 rooms").await;
    // A row opens its room's card.
    click(c, "#row-r077 a").await;
    // (The state is shown in capitals: WebDriver reads the rendered text.)
    wait_text_contains(c, "#room-r077 [data-f=state]", "PAUSED").await;
    let shown: String = c
        .execute(
            "return [...document.querySelectorAll('#rooms article.room')].filter(a => !a.hidden).map(a => a.id).join()",
            vec![],
        )
        .await
        .unwrap()
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(shown, "room-r077");
    assert_accessible(c, "the dashboard with 100 rooms").await;
    d.c.clone().close().await.unwrap();
}

/// Issue 30 finding 13: a room's card lists its webhook dead letters, each with its event
/// and the reason it was given up, and a Replay button whose outcome is said next to it;
/// the replayed delivery reaches the (real) receiver.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_letter_is_listed_with_its_reason_and_replayed_from_the_card() {
    use crate::helpers::receiver::{secret, Mode, Receiver};
    let rx = Receiver::start(Mode::AlwaysFail).await;
    let hooked = RoomConfig {
        webhook_url: Some(rx.url()),
        webhook_secret: Some(anteroom::room::WebhookSecret::new(secret())),
        ..room("hook", 5)
    };
    let d = dashboard_with(vec![hooked], 1280, |s| {
        s.webhooks.interval_ms = 100;
        s.webhooks.max_attempts = 1;
    })
    .await;
    let (c, app) = (&d.c, &d.app);
    app.join("hook").await;
    app.join("hook").await;
    let items = "#room-hook [data-f=dead_list] li";
    let count = || async { c.find_all(Locator::Css(items)).await.unwrap().len() };
    wait_until(DEADLINE, "two dead letters on the card", || async {
        (count().await == 2).then_some(())
    })
    .await;
    let first = text(c, &format!("{items}:first-child")).await;
    assert!(first.contains("admission"), "{first}");
    assert!(
        first.contains("after 1 attempt: the receiver answered HTTP 500"),
        "{first}"
    );
    wait_text_contains(c, "#room-hook [data-f=dead_text]", "2 deliveries given up").await;
    assert_accessible(c, "a card with dead letters").await;
    c.execute(
        "document.querySelector('#room-hook .dead-letters').scrollIntoView({block: 'center'})",
        vec![],
    )
    .await
    .unwrap();
    screenshot(c, "admin-dead-letters").await;

    // The receiver is back: Replay on the first letter sends it again.
    rx.set_mode(Mode::Ok);
    let event_id = text(c, &format!("{items}:first-child code")).await;
    click(c, &format!("{items}:first-child button")).await;
    wait_text_contains(
        c,
        "#room-hook [data-f=dead_feedback]",
        &format!("Replayed event {event_id}"),
    )
    .await;
    let id = format!("msg_hook_{event_id}");
    wait_until(DEADLINE, "the replay at the receiver", || async {
        rx.log()
            .iter()
            .any(|r| r.id == id && r.status == 200 && r.valid)
            .then_some(())
    })
    .await;
    wait_until(DEADLINE, "one dead letter left", || async {
        (count().await == 1).then_some(())
    })
    .await;
    // Replaying the last one needs no Replay all (hidden with one letter).
    let all = c
        .find(Locator::Css("#room-hook [data-do=replay-all]"))
        .await
        .unwrap();
    assert!(!all.is_displayed().await.unwrap());
    d.c.clone().close().await.unwrap();
}

/// The layout shifts of the page load so far, as Chromium reports them
/// (`PerformanceObserver` `layout-shift`, buffered from the navigation): their sum
/// without those right after an input (what CLS adds up), the largest contentful paint
/// (ms) and, for a failure's message, what moved.
async fn load_shifts(c: &Client) -> (f64, f64, String) {
    let out = c
        .execute_async(
            "var done = arguments[arguments.length - 1], sum = 0, what = [], lcp = 0;
             new PerformanceObserver(function (l) {
               l.getEntries().forEach(function (e) { lcp = Math.max(lcp, e.startTime); });
             }).observe({ type: 'largest-contentful-paint', buffered: true });
             new PerformanceObserver(function (l) {
               l.getEntries().forEach(function (e) {
                 if (e.hadRecentInput) return;
                 sum += e.value;
                 what.push(e.value.toFixed(4) + ' at ' + Math.round(e.startTime) + ' ms: ' +
                   (e.sources || []).map(function (s) {
                     var n = s.node;
                     return n ? (n.id || n.className || n.nodeName) + ' ' + JSON.stringify(s.previousRect) + ' -> ' + JSON.stringify(s.currentRect) : '?';
                   }).join(', '));
               });
             }).observe({ type: 'layout-shift', buffered: true });
             var nav = performance.getEntriesByType('navigation')[0];
             setTimeout(function () {
               done([sum, lcp, 'page received at ' + Math.round(nav.responseEnd) + ' ms\\n' + what.join('\\n')]);
             }, 300);",
            vec![],
        )
        .await
        .unwrap();
    (
        out[0].as_f64().unwrap(),
        out[1].as_f64().unwrap(),
        out[2].as_str().unwrap().to_string(),
    )
}

/// Issue 30 finding 10: with 100 rooms the dashboard's cumulative layout shift was 0.858
/// (Lighthouse). Loading it now shifts the layout by less than 0.1 (the sum of every
/// shift, which bounds CLS from above), at a desktop and at a phone width. Measured in
/// Chromium, not timed: a shift is a shift however fast the machine.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_with_a_hundred_rooms_loads_without_shifting_its_layout() {
    let rooms: Vec<RoomConfig> = (0..100).map(|i| room(&format!("r{i:03}"), 2)).collect();
    let d = dashboard(rooms, 1280).await;
    // Each width in a new browser: the first load after signing in, the script not yet in
    // the cache, is when a page painted before its script runs would shift (Lighthouse
    // found 0.29 on a phone that way while a reload showed none).
    let phone = dashboard_on(&d.app, 412).await;
    for (c, width) in [(&d.c, 1280), (&phone.0, 412)] {
        wait_text(c, "#room-count", "100 rooms").await;
        // The card's details (read once it is shown) are in: nothing is left to arrive.
        wait_until(DEADLINE, "the open card's FIFO audit", || async {
            (text(c, "#room-r000 [data-f=fifo_audit]").await != "–").then_some(())
        })
        .await;
        let (cls, lcp, what) = load_shifts(c).await;
        println!(
            "dashboard, 100 rooms, {width} px: layout shift {cls:.4}, LCP {lcp:.0} ms; {what}"
        );
        assert!(cls < 0.1, "layout shift {cls} at {width} px:\n{what}");
    }
    let c = &d.c;
    // The measure sees a shift when there is one: a block put above the list moves it.
    c.execute(
        "var p = document.createElement('p'); p.style.height = '300px'; \
         document.getElementById('admin').prepend(p);",
        vec![],
    )
    .await
    .unwrap();
    let (moved, _, _) = load_shifts(c).await;
    assert!(moved > 0.1, "a 300 px block moved the page by {moved}");
    phone.0.close().await.unwrap();
    d.c.clone().close().await.unwrap();
}

/// Lighthouse 12.8.2 (installed like axe-core: `npm install --prefix target/lighthouse
/// lighthouse@12.8.2`) on the dashboard with 100 rooms, signed in (the session cookie
/// sent with every request), mobile (Lighthouse's default: a slow phone, simulated
/// throttling) and desktop. Ignored by default: scores depend on the machine's speed and
/// this server is a debug build; run it with `cargo test --test it
/// browser_admin::lighthouse -- --ignored --nocapture`. The layout-shift part is checked
/// on every run by the test above.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement (Lighthouse): run with --ignored"]
async fn lighthouse_scores_the_dashboard_with_a_hundred_rooms() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/lighthouse");
    let cli = dir.join("node_modules/lighthouse/cli/index.js");
    if !cli.exists() {
        let ok = std::process::Command::new("npm")
            .args(["install", "--silent", "--no-audit", "--no-fund", "--prefix"])
            .arg(&dir)
            .arg("lighthouse@12.8.2")
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        assert!(
            ok && cli.exists(),
            "npm install --prefix target/lighthouse lighthouse@12.8.2"
        );
    }
    let redis = RedisServer::start();
    let rooms: Vec<RoomConfig> = (0..100).map(|i| room(&format!("r{i:03}"), 2)).collect();
    let app = spawn_app(admin_settings(&redis, &crate::helpers::prefix(), rooms)).await;
    for i in (0..100).step_by(7) {
        app.join(&format!("r{i:03}")).await;
    }
    let login = crate::helpers::admin::login(&app, TOKEN).await;
    let cookie = crate::helpers::admin::session_cookie(&login).unwrap();
    let cookie = cookie.split(';').next().unwrap().to_string();
    let headers = json!({ "Cookie": cookie }).to_string();
    let url = app.url("/admin");
    let mut failed = Vec::new();
    for preset in ["mobile", "desktop"] {
        let report = dir.join(format!("admin-100-{preset}.json"));
        let cli = cli.clone();
        let (headers, url, report2) = (headers.clone(), url.clone(), report.clone());
        let status = tokio::task::spawn_blocking(move || {
            let mut cmd = std::process::Command::new("node");
            cmd.arg(cli)
                .arg(&url)
                .arg("--quiet")
                .arg("--only-categories=performance")
                .arg("--output=json")
                .arg(format!("--output-path={}", report2.display()))
                .arg(format!("--extra-headers={headers}"))
                .arg("--chrome-flags=--headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage")
                .env(
                    "CHROME_PATH",
                    std::env::var("CHROMIUM").unwrap_or("/usr/bin/chromium".into()),
                );
            if preset == "desktop" {
                cmd.arg("--preset=desktop");
            }
            cmd.status().unwrap()
        })
        .await
        .unwrap();
        assert!(status.success(), "lighthouse {preset}: {status}");
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        let score = r["categories"]["performance"]["score"].as_f64().unwrap() * 100.0;
        let audit = |k: &str| r["audits"][k]["numericValue"].as_f64().unwrap_or(f64::NAN);
        let cls = audit("cumulative-layout-shift");
        println!(
            "lighthouse {preset}: performance {score:.0}, CLS {cls:.3}, LCP {:.0} ms, TBT {:.0} ms, FCP {:.0} ms, speed index {:.0} ms, server response {:.0} ms",
            audit("largest-contentful-paint"),
            audit("total-blocking-time"),
            audit("first-contentful-paint"),
            audit("speed-index"),
            audit("server-response-time"),
        );
        if score < 90.0 || cls >= 0.1 {
            failed.push(format!("{preset}: performance {score:.0}, CLS {cls}"));
        }
    }
    assert!(failed.is_empty(), "{failed:?}");
}
