//! Named admin accounts with roles (`[[admin.users]]`): what each role may do through
//! the API and the dashboard, who the audit log names, the shared token still an owner
//! named `token`, bad accounts stopping start-up, and sign-in throttling per user that
//! never locks the right password out.

use crate::helpers::admin::{
    admin_settings, as_user, dashboard, login_form, session_cookie, sign_in, user, TOKEN,
};
use crate::helpers::{prefix, room, spawn_app, RedisServer, Reply, TestApp};
use anteroom::config::Role;
use reqwest::Method;
use serde_json::json;

async fn team_app() -> (TestApp, RedisServer) {
    let r = RedisServer::start();
    let mut s = admin_settings(&r, &prefix(), vec![room("r", 1)]);
    s.admin.users = vec![
        user("vera", Role::Viewer),
        user("olga", Role::Operator),
        user("owen", Role::Owner),
    ];
    let app = spawn_app(s).await;
    (app, r)
}

fn refused(r: &Reply) -> bool {
    r.status == 403 && r.error_code() == "forbidden_role"
}

/// One representative route a class: a read, an operator's change (pause, a setting,
/// stock, a visitor), an owner's (a secret, a webhook, flushing, deleting).
#[tokio::test]
async fn each_role_may_do_its_class_of_change_and_no_more() {
    let (app, _r) = team_app().await;
    let put = |body| Some(body);
    for who in ["vera", "olga", "owen"] {
        let r = as_user(&app, who, Method::GET, "/api/admin/rooms", None).await;
        assert_eq!(r.status, 200, "{who} reads the rooms");
        let r = as_user(&app, who, Method::GET, "/api/admin/audit", None).await;
        assert_eq!(r.status, 200, "{who} reads the audit log");
    }
    // The viewer changes nothing; the message names the role.
    let r = as_user(&app, "vera", Method::POST, "/api/admin/rooms/r/pause", None).await;
    assert!(refused(&r), "{} {}", r.status, r.body);
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("viewer"),
        "{} {}",
        r.status,
        r.body
    );
    for (m, path, body) in [
        (
            Method::PUT,
            "/api/admin/rooms/r",
            put(json!({"capacity": 5})),
        ),
        (
            Method::POST,
            "/api/admin/rooms/r/stock",
            put(json!({"set": 3})),
        ),
        (Method::DELETE, "/api/admin/rooms/r/visitors/nobody", None),
        (
            Method::PUT,
            "/api/admin/rooms/new",
            put(json!({"target_url": "https://x.example/"})),
        ),
        (Method::DELETE, "/api/admin/rooms/r", None),
    ] {
        let r = as_user(&app, "vera", m.clone(), path, body).await;
        assert!(refused(&r), "viewer {m} {path}: {} {}", r.status, r.body);
    }
    // The operator runs rooms...
    let r = as_user(&app, "olga", Method::POST, "/api/admin/rooms/r/pause", None).await;
    assert_eq!(r.status, 200, "{} {}", r.status, r.body);
    let r = as_user(
        &app,
        "olga",
        Method::PUT,
        "/api/admin/rooms/r",
        put(json!({"capacity": 5, "mode": "random"})),
    )
    .await;
    assert_eq!(r.status, 200, "{} {}", r.status, r.body);
    let r = as_user(
        &app,
        "olga",
        Method::POST,
        "/api/admin/rooms/r/stock",
        put(json!({"set": 3})),
    )
    .await;
    assert_eq!(r.status, 200, "{} {}", r.status, r.body);
    let r = as_user(
        &app,
        "olga",
        Method::PUT,
        "/api/admin/rooms/side",
        put(json!({"target_url": "https://x.example/"})),
    )
    .await;
    assert_eq!(r.status, 201, "{} {}", r.status, r.body);
    // ...but sets no secret or webhook, flushes and deletes nothing.
    for (m, path, body) in [
        (
            Method::PUT,
            "/api/admin/rooms/r",
            put(json!({"webhook_url": "https://hooks.example/a"})),
        ),
        (
            Method::PUT,
            "/api/admin/rooms/r",
            put(json!({"entry_secret": "s3cret-s3cret-s3cret-s3cret-0123"})),
        ),
        (
            Method::PUT,
            "/api/admin/rooms/r",
            put(json!({"entry": "token"})),
        ),
        (Method::POST, "/api/admin/rooms/r/flush", None),
        (Method::DELETE, "/api/admin/rooms/side", None),
    ] {
        let r = as_user(&app, "olga", m.clone(), path, body).await;
        assert!(refused(&r), "operator {m} {path}: {} {}", r.status, r.body);
        assert!(
            r.body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("owner"),
            "{} {}",
            r.status,
            r.body
        );
    }
    // A configuration sent back as it was read names no secret: the operator may.
    let cfg = as_user(
        &app,
        "owen",
        Method::PUT,
        "/api/admin/rooms/r",
        put(json!({"webhook_secret": "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ="})),
    )
    .await;
    assert_eq!(cfg.status, 200, "{} {}", cfg.status, cfg.body);
    let back = as_user(
        &app,
        "olga",
        Method::PUT,
        "/api/admin/rooms/r",
        put(json!({"webhook_secret": "[set]", "capacity": 6})),
    )
    .await;
    assert_eq!(back.status, 200, "{} {}", back.status, back.body);
    // The owner does all of it.
    let r = as_user(
        &app,
        "owen",
        Method::PUT,
        "/api/admin/rooms/r",
        put(json!({"webhook_url": "https://hooks.example/a"})),
    )
    .await;
    assert_eq!(r.status, 200, "{} {}", r.status, r.body);
    let r = as_user(&app, "owen", Method::POST, "/api/admin/rooms/r/flush", None).await;
    assert_eq!(r.status, 200, "{} {}", r.status, r.body);
    let r = as_user(&app, "owen", Method::DELETE, "/api/admin/rooms/side", None).await;
    assert_eq!(r.status, 204, "{} {}", r.status, r.body);
    // Nothing the refusals asked for happened: the room is where the operator left it.
    let r = as_user(&app, "vera", Method::GET, "/api/admin/rooms/r", None).await;
    assert_eq!(r.body["config"]["capacity"], 6, "{} {}", r.status, r.body);
}

#[tokio::test]
async fn the_audit_log_names_the_user_and_the_shared_token_is_an_owner_named_token() {
    let (app, _r) = team_app().await;
    as_user(&app, "olga", Method::POST, "/api/admin/rooms/r/pause", None).await;
    // The shared admin.token still works, as an owner: it may delete.
    let shared = |m: Method, path: &str| {
        app.client
            .request(m, app.url(path))
            .bearer_auth(TOKEN)
            .send()
    };
    let r = app
        .client
        .put(app.url("/api/admin/rooms/gone"))
        .bearer_auth(TOKEN)
        .json(&json!({"target_url": "https://x.example/"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    assert_eq!(
        shared(Method::DELETE, "/api/admin/rooms/gone")
            .await
            .unwrap()
            .status(),
        204
    );
    let audit = as_user(&app, "vera", Method::GET, "/api/admin/audit", None).await;
    let whos: Vec<(String, String)> = audit.body["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["who"].as_str().unwrap().into(),
                e["action"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert!(
        whos.contains(&("olga".into(), "set paused".into())),
        "{whos:?}"
    );
    assert!(
        whos.iter()
            .any(|(w, a)| w == "token" && a.contains("delete")),
        "{whos:?}"
    );
}

#[tokio::test]
async fn a_viewer_signs_in_by_name_sees_who_they_are_and_changes_nothing() {
    let (app, _r) = team_app().await;
    let wrong = login_form(
        &app,
        &[("name", "vera"), ("password", "olga-password")],
        None,
    )
    .await;
    assert_eq!(wrong.status(), 401);
    assert!(session_cookie(&wrong).is_none());
    let unknown = login_form(&app, &[("name", "nobody"), ("password", "x")], None).await;
    assert_eq!(unknown.status(), 401);

    let session = sign_in(&app, &[("name", "vera"), ("password", "vera-password")]).await;
    let (html, csrf) = dashboard(&app, &session).await;
    assert!(
        html.contains("signed in as <strong>vera</strong> (viewer)"),
        "{html}"
    );
    assert!(html.contains("data-role=\"viewer\""));
    let change = |path: &'static str| {
        app.client
            .post(app.url(path))
            .header("cookie", &session)
            .header("x-csrf-token", &csrf)
            .send()
    };
    let r = Reply::from(change("/api/admin/rooms/r/pause").await.unwrap()).await;
    assert!(refused(&r), "{} {}", r.status, r.body);
    let read = app
        .client
        .get(app.url("/api/admin/rooms"))
        .header("cookie", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(read.status(), 200);

    // An operator's session may pause, and the audit names them.
    let session = sign_in(&app, &[("name", "olga"), ("password", "olga-password")]).await;
    let (_, csrf) = dashboard(&app, &session).await;
    let r = app
        .client
        .post(app.url("/api/admin/rooms/r/pause"))
        .header("cookie", &session)
        .header("x-csrf-token", &csrf)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let audit = as_user(&app, "vera", Method::GET, "/api/admin/audit", None).await;
    assert_eq!(audit.body["entries"][0]["who"], "olga");

    // The `credential` field still takes a token: a user's, as that user.
    let session = sign_in(
        &app,
        &[("credential", &crate::helpers::admin::user_token("owen"))],
    )
    .await;
    let (html, _) = dashboard(&app, &session).await;
    assert!(
        html.contains("signed in as <strong>owen</strong> (owner)"),
        "{html}"
    );
}

#[tokio::test]
async fn a_session_of_a_user_removed_from_the_configuration_no_longer_works() {
    let r = RedisServer::start();
    let p = prefix();
    let mut s = admin_settings(&r, &p, vec![room("r", 1)]);
    s.admin.users = vec![user("olga", Role::Operator)];
    let app = spawn_app(s.clone()).await;
    let session = sign_in(&app, &[("name", "olga"), ("password", "olga-password")]).await;
    // Another instance, same keys, without olga (her account was removed).
    s.admin.users = vec![user("owen", Role::Owner)];
    let other = spawn_app(s).await;
    let read = |a: &TestApp| {
        a.client
            .get(a.url("/api/admin/rooms"))
            .header("cookie", &session)
            .send()
    };
    assert_eq!(read(&app).await.unwrap().status(), 200);
    assert_eq!(read(&other).await.unwrap().status(), 401);
}

#[tokio::test]
async fn guessing_a_users_password_never_locks_out_the_user() {
    let r = RedisServer::start();
    let mut s = admin_settings(&r, &prefix(), vec![room("r", 1)]);
    s.trust_forwarded_for = true;
    s.admin.users = vec![user("olga", Role::Operator)];
    s.admin.login_attempts_per_minute = 1000;
    s.admin.failed_auth_per_minute = 3;
    s.admin.failed_auth_per_user_per_minute = 5;
    let app = spawn_app(s).await;
    let try_as = |from: String, password: &'static str| {
        let app = &app;
        async move {
            login_form(
                app,
                &[("name", "olga"), ("password", password)],
                Some(&from),
            )
            .await
            .status()
            .as_u16()
        }
    };
    // One address guessing is stopped by its own limit (3), even with the right password.
    for _ in 0..3 {
        assert_eq!(try_as("198.51.100.1".into(), "guess").await, 401);
    }
    assert_eq!(try_as("198.51.100.1".into(), "guess").await, 429);
    assert_eq!(try_as("198.51.100.1".into(), "olga-password").await, 429);
    // Guesses from many addresses push olga past her limit (5): each guessing address
    // is then refused for her...
    for a in 2..6 {
        assert_eq!(try_as(format!("198.51.100.{a}"), "guess").await, 401);
    }
    assert_eq!(try_as("198.51.100.2".into(), "guess").await, 429);
    assert_eq!(try_as("198.51.100.3".into(), "olga-password").await, 429);
    // ...a fresh address still gets its one check...
    assert_eq!(try_as("198.51.100.77".into(), "guess").await, 401);
    // ...and olga, from an address that has not failed, signs in.
    assert_eq!(try_as("192.0.2.10".into(), "olga-password").await, 303);
}

fn load(toml: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.toml");
    std::fs::write(&path, toml).unwrap();
    anteroom::config::Settings::load(Some(&path))
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default()
}

#[test]
fn bad_admin_users_stop_start_up_naming_the_field() {
    let phc = crate::helpers::admin::hash_password("pw");
    let sha = "ab".repeat(32);
    let user = |name: &str, role: &str, rest: &str| {
        format!("[[admin.users]]\nname = \"{name}\"\nrole = \"{role}\"\n{rest}\n")
    };
    let pw = format!("password_hash = \"{phc}\"");
    for (toml, field, says) in [
        (user("a b", "owner", &pw), "admin.users[0].name", "A-Z"),
        (
            user("ann", "owner", &pw) + &user("ann", "viewer", &pw),
            "admin.users[1].name",
            "duplicate",
        ),
        (
            user("ann", "owner", ""),
            "admin.users[0].password_hash",
            "token_sha256",
        ),
        (
            user("ann", "owner", "password_hash = \"$argon2id$nonsense\""),
            "admin.users[0].password_hash",
            "argon2id",
        ),
        (
            user(
                "ann",
                "owner",
                "password_hash = \"$2b$12$abcdefghijklmnopqrstuv\"",
            ),
            "admin.users[0].password_hash",
            "hash-password",
        ),
        (
            user("ann", "owner", "token_sha256 = \"abc123\""),
            "admin.users[0].token_sha256",
            "64 hex",
        ),
        (
            user("ann", "owner", &format!("token_sha256 = \"{sha}\""))
                + &user("bob", "viewer", &format!("token_sha256 = \"{sha}\"")),
            "admin.users[1].token_sha256",
            "another user",
        ),
        (
            format!("[admin]\ntoken = \"{TOKEN}\"\n") + &user("token", "viewer", &pw),
            "admin.users[0].name",
            "admin.token",
        ),
    ] {
        let err = load(&toml);
        assert!(
            err.contains(field) && err.contains(says),
            "{field}: {err}\n{toml}"
        );
    }
    // An unknown role is refused by name, with the roles there are.
    let err = load(&user("ann", "admin", &pw));
    assert!(
        err.contains("role")
            && err.contains("viewer")
            && err.contains("operator")
            && err.contains("owner"),
        "{err}"
    );
    // A good one loads.
    assert_eq!(
        load(&user(
            "ann",
            "operator",
            &format!("{pw}\ntoken_sha256 = \"{sha}\"")
        )),
        ""
    );
}

/// The dashboard in Chromium, signed in by name as a viewer: who is signed in is shown,
/// every change control is disabled (finding a visitor is not a change), and the page
/// stays accessible. Screenshot: target/screenshots/admin-viewer.png
/// (docs/screenshots/admin-viewer.png).
#[tokio::test]
async fn a_viewers_dashboard_has_every_change_control_disabled() {
    use crate::helpers::browser::{assert_accessible, screenshot, text, wait_text, Driver};
    use fantoccini::Locator;
    let (app, _r) = team_app().await;
    as_user(
        &app,
        "owen",
        Method::PUT,
        "/api/admin/rooms/r",
        Some(json!({"name": "Flash sale", "capacity": 6})),
    )
    .await;
    let driver = Driver::start();
    let (c, _profile) = driver.browser(&["--window-size=1280,1400"], true).await;
    c.goto(&app.url("/admin")).await.unwrap();
    assert_accessible(&c, "the sign-in page with a name and password form").await;
    let type_in = |css: &'static str, v: &'static str| {
        let c = c.clone();
        async move {
            let e = c.find(Locator::Css(css)).await.unwrap();
            e.send_keys(v).await.unwrap();
        }
    };
    type_in("#name", "vera").await;
    type_in("#password", "vera-password").await;
    c.find(Locator::Css("#by-name button[type=submit]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_text(&c, "#live-status", "Live").await;
    assert_eq!(text(&c, "#signed-in").await, "signed in as vera (viewer)");
    let card = "#room-r";
    crate::helpers::wait_until(
        crate::helpers::browser::DEADLINE,
        "the room's card",
        || async { c.find(Locator::Css(card)).await.ok().map(|_| ()) },
    )
    .await;
    for css in [
        "#create button[type=submit]",
        "#create input[name=id]",
        "#room-r form[data-act=settings] button[type=submit]",
        "#room-r form[data-act=settings] input[name=capacity]",
        "#room-r button[data-act=pause]",
        "#room-r button[data-act=resume]",
        "#room-r button[data-act=close]",
        "#room-r button[data-act=open]",
        "#room-r button[data-act=flush]",
        "#room-r button[data-act=delete]",
        "#room-r form[data-act=queueing] select",
        "#room-r form[data-act=stock] button[value=set]",
        "#room-r form[data-act=remove] button",
    ] {
        let e = c.find(Locator::Css(css)).await.unwrap();
        assert!(
            !e.is_enabled().await.unwrap(),
            "{css} is enabled for a viewer"
        );
    }
    let find = c
        .find(Locator::Css("#room-r form[data-act=find] button"))
        .await
        .unwrap();
    assert!(
        find.is_enabled().await.unwrap(),
        "finding a visitor is a read"
    );
    screenshot(&c, "admin-viewer").await;
    assert_accessible(&c, "the viewer's dashboard").await;
    c.close().await.unwrap();
}

/// `anteroom hash-password` reads the password on standard input and prints an argon2id
/// PHC string that a user's `password_hash` accepts and that signs them in; no password
/// on stdin is an error, not an empty hash.
#[tokio::test]
async fn hash_password_prints_a_hash_a_user_signs_in_with() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let hash = |input: &str| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_anteroom"))
            .arg("hash-password")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    let out = hash("correct horse battery staple\n");
    assert!(out.status.success());
    let phc = String::from_utf8(out.stdout).unwrap().trim().to_string();
    assert!(phc.starts_with("$argon2id$v=19$"), "{phc}");
    let empty = hash("");
    assert!(!empty.status.success() && empty.stdout.is_empty());

    let r = RedisServer::start();
    let mut s = admin_settings(&r, &prefix(), vec![room("r", 1)]);
    let mut sam = user("sam", Role::Viewer);
    sam.password_hash = Some(anteroom::room::Secret::new(phc));
    s.admin.users = vec![sam];
    s.validate().unwrap();
    let app = spawn_app(s).await;
    let ok = login_form(
        &app,
        &[
            ("name", "sam"),
            ("password", "correct horse battery staple"),
        ],
        None,
    )
    .await;
    assert_eq!(ok.status(), 303);
}
