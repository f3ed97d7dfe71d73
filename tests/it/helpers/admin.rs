//! The admin fixture: a server with the admin interface on (bearer token), requests with
//! the token, and a dashboard login through the real form with its CSRF pair.

use anteroom::config::Settings;
use anteroom::room::{RoomConfig, Secret};
use reqwest::Method;
use serde_json::Value;

use super::{spawn_app, test_settings, RedisServer, Reply, TestApp};

pub const TOKEN: &str = "admin-token-for-tests-0123456789abcdef";

pub fn admin_settings(redis: &RedisServer, prefix: &str, rooms: Vec<RoomConfig>) -> Settings {
    let mut s = test_settings(Some(redis.url()), prefix, rooms);
    s.admin.enabled = true;
    s.admin.token = Some(Secret::new(TOKEN));
    s
}

pub async fn admin_app(rooms: Vec<RoomConfig>) -> (TestApp, RedisServer) {
    let r = RedisServer::start();
    let app = spawn_app(admin_settings(&r, &crate::helpers::prefix(), rooms)).await;
    (app, r)
}

pub async fn admin(app: &TestApp, method: Method, path: &str, body: Option<Value>) -> Reply {
    let mut r = app.client.request(method, app.url(path)).bearer_auth(TOKEN);
    if let Some(b) = body {
        r = r.json(&b);
    }
    Reply::from(r.send().await.unwrap()).await
}

/// Posts the login form with a fresh login-CSRF pair.
pub async fn login(app: &TestApp, credential: &str) -> reqwest::Response {
    let page = app.client.get(app.url("/admin")).send().await.unwrap();
    let cookie = page
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|c| c.to_str().unwrap().to_string())
        .find(|c| c.starts_with("anteroom_login_csrf="))
        .unwrap();
    let value = cookie.split(';').next().unwrap().to_string();
    let csrf = value.split_once('=').unwrap().1.to_string();
    let html = page.text().await.unwrap();
    assert!(html.contains("name=\"csrf\""));
    app.client
        .post(app.url("/admin/login"))
        .header("cookie", value)
        .form(&[("credential", credential), ("csrf", &csrf)])
        .send()
        .await
        .unwrap()
}

pub fn session_cookie(res: &reqwest::Response) -> Option<String> {
    res.headers()
        .get_all("set-cookie")
        .iter()
        .map(|c| c.to_str().unwrap().to_string())
        .find(|c| c.starts_with("anteroom_admin="))
}

/// An argon2id PHC string of `password` (what `anteroom hash-password` prints).
pub fn hash_password(password: &str) -> String {
    use argon2::password_hash::{rand_core::OsRng, PasswordHasher, SaltString};
    argon2::Argon2::default()
        .hash_password(password.as_bytes(), &SaltString::generate(&mut OsRng))
        .unwrap()
        .to_string()
}

/// A named user with `role`, a dashboard password (`<name>-password`) and an API token
/// ([`user_token`]).
pub fn user(name: &str, role: anteroom::config::Role) -> anteroom::config::AdminUser {
    use sha2::Digest;
    anteroom::config::AdminUser {
        name: name.into(),
        role,
        password_hash: Some(Secret::new(hash_password(&format!("{name}-password")))),
        token_sha256: Some(Secret::new(format!(
            "{:x}",
            sha2::Sha256::digest(user_token(name).as_bytes())
        ))),
    }
}

/// The API token of [`user`] `name` (at least 32 characters).
pub fn user_token(name: &str) -> String {
    format!("{name}-api-token-0123456789abcdefghijklmnop")
}

/// A request with a user's token.
pub async fn as_user(
    app: &TestApp,
    name: &str,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> Reply {
    let mut r = app
        .client
        .request(method, app.url(path))
        .bearer_auth(user_token(name));
    if let Some(b) = body {
        r = r.json(&b);
    }
    Reply::from(r.send().await.unwrap()).await
}

/// Posts the sign-in form with `fields` (beside a fresh login-CSRF pair), from `from`
/// (an `X-Forwarded-For` address, for apps that trust it).
pub async fn login_form(
    app: &TestApp,
    fields: &[(&str, &str)],
    from: Option<&str>,
) -> reqwest::Response {
    let page = app.client.get(app.url("/admin")).send().await.unwrap();
    let value = page
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|c| c.to_str().unwrap().to_string())
        .find(|c| c.starts_with("anteroom_login_csrf="))
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    let csrf = value.split_once('=').unwrap().1.to_string();
    let mut form: Vec<(&str, &str)> = fields.to_vec();
    form.push(("csrf", &csrf));
    let mut r = app
        .client
        .post(app.url("/admin/login"))
        .header("cookie", value.clone())
        .form(&form);
    if let Some(ip) = from {
        r = r.header("x-forwarded-for", ip);
    }
    r.send().await.unwrap()
}

/// The dashboard with a session cookie: its HTML and its CSRF token.
pub async fn dashboard(app: &TestApp, session: &str) -> (String, String) {
    let req = app.client.get(app.url("/admin")).header("cookie", session);
    let html = req.send().await.unwrap().text().await.unwrap();
    let csrf = csrf_of(&html).unwrap_or_default();
    (html, csrf)
}

/// The dashboard through a client that keeps its own cookies (a browser-like client
/// signed in by single sign-on): its HTML and its CSRF token, which must be there.
pub async fn dashboard_in(b: &reqwest::Client, app: &TestApp) -> (String, String) {
    let html = b.get(app.url("/admin")).send().await.unwrap();
    let html = html.text().await.unwrap();
    let csrf = csrf_of(&html).unwrap_or_else(|| panic!("no CSRF token on the dashboard: {html}"));
    (html, csrf)
}

/// The CSRF token a dashboard page carries (`data-csrf`), if it has one.
pub fn csrf_of(html: &str) -> Option<String> {
    let rest = html.split("data-csrf=\"").nth(1)?;
    Some(rest.split('"').next()?.to_string())
}

/// Signs in on the sign-in form with `fields` (`name` and `password`, or `credential`),
/// which must succeed (`303`), and returns the session cookie as `name=value`.
pub async fn sign_in(app: &TestApp, fields: &[(&str, &str)]) -> String {
    let res = login_form(app, fields, None).await;
    assert_eq!(res.status(), 303, "signing in with {fields:?}");
    let cookie = session_cookie(&res).expect("a session cookie");
    cookie.split(';').next().unwrap().to_string()
}
