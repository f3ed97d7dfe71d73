//! The admin fixture: a server with the admin interface on (bearer token), requests with
//! the token, and a dashboard login through the real form with its CSRF pair.

use anteroom::config::{RoomConfig, Secret, Settings};
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
