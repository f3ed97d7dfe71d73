//! TLS where Anteroom faces the internet itself (`tls_cert`/`tls_key`, and the same in
//! `[gateway]`), with certificates generated in the test (rcgen) and real TLS clients
//! that trust only the test's CA: HTTP/2 and HTTP/1.1 by ALPN on both listeners,
//! `Secure` cookies, certificates reloaded (by the hook SIGHUP calls, and by a real
//! SIGHUP to the real binary) without dropping connections, and start-up refusing a bad
//! file naming the field.

use std::time::Duration;

use anteroom::config::{GatewayRoute, Settings};
use anteroom::room::RoomConfig;
use anteroom::startup::Application;
use anteroom::tls::ReloadOutcome;
use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_util::rt::TokioIo;
use serde_json::Value;

use crate::helpers::tls::TestCa;
use crate::helpers::upstream::Upstream;
use crate::helpers::{
    free_port, prefix, room, spawn_app, test_settings, wait_until, RedisServer, ServerProcess,
};

/// Settings whose main listener serves the leaf in `dir` (memory store).
fn tls_settings(dir: &std::path::Path) -> Settings {
    let mut s = test_settings(None, &prefix(), vec![room("r", 1)]);
    s.tls_cert = Some(dir.join("cert.pem"));
    s.tls_key = Some(dir.join("key.pem"));
    s
}

#[tokio::test]
async fn the_main_listener_speaks_http2_by_alpn_and_http11_too() {
    let ca = TestCa::new();
    let dir = tempfile::tempdir().unwrap();
    ca.leaf("main").write(dir.path());
    let app = spawn_app(tls_settings(dir.path())).await;
    let url = format!("https://127.0.0.1:{}/healthz", app.port);

    let r = ca.client().get(&url).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.version(), reqwest::Version::HTTP_2, "h2 agreed by ALPN");
    let r = ca.http1_client().get(&url).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.version(), reqwest::Version::HTTP_11);

    // TLS on the listener implies Secure cookies and an https:// public base.
    let r = ca
        .client()
        .post(format!("https://127.0.0.1:{}/api/rooms/r/join", app.port))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let vid = r
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|c| c.to_str().unwrap())
        .find(|c| c.starts_with("anteroom_vid="))
        .unwrap()
        .to_string();
    assert!(vid.contains("Secure"), "{vid}");
    assert_eq!(
        *app.engine.public_base(),
        format!("https://127.0.0.1:{}", app.port)
    );
    // Plain HTTP on the TLS port gets no answer.
    assert!(
        reqwest::get(format!("http://127.0.0.1:{}/healthz", app.port))
            .await
            .is_err()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_over_tls_proxies_by_h2_and_sets_the_pass_cookie_secure() {
    let ca = TestCa::new();
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = ca.leaf("gateway").write(dir.path());
    let redis = RedisServer::start();
    let up = Upstream::start().await;
    let gw_port = free_port();
    let gw = format!("https://127.0.0.1:{gw_port}");
    let mut s = test_settings(
        Some(redis.url()),
        &prefix(),
        vec![RoomConfig {
            target_url: format!("{gw}/"),
            ..room("sale", 1)
        }],
    );
    s.gateway.listen = Some(format!("127.0.0.1:{gw_port}"));
    s.gateway.upstream = Some(up.url());
    s.gateway.tls_cert = Some(cert);
    s.gateway.tls_key = Some(key);
    s.gateway.routes = vec![GatewayRoute {
        host: None,
        path_prefix: "/checkout".into(),
        room: "sale".into(),
    }];
    let app = spawn_app(s).await;
    assert!(
        !app.engine.secure_cookies(),
        "the main listener is plain HTTP"
    );
    let client = ca.client();

    // Unguarded: proxied, the site told the client came over https.
    let r = client.get(format!("{gw}/about?x=1")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.version(), reqwest::Version::HTTP_2);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["path"], "/about");
    assert_eq!(v["headers"]["x-forwarded-proto"], "https");
    assert_eq!(v["headers"]["host"], format!("127.0.0.1:{gw_port}"));

    // Guarded, without a pass: to the queue, with an https return URL.
    let r = client.get(format!("{gw}/checkout/")).send().await.unwrap();
    assert_eq!(r.status(), 302);
    let want: String =
        url::form_urlencoded::byte_serialize(format!("{gw}/checkout/").as_bytes()).collect();
    assert!(
        r.headers()["location"].to_str().unwrap().ends_with(&want),
        "{:?}",
        r.headers()["location"]
    );

    // The pass handed over: the cookie is Secure.
    let joined = app.join("sale").await;
    let pass = joined.body["pass"].as_str().unwrap().to_string();
    let r = client
        .get(format!("{gw}/checkout/?anteroom_pass={pass}"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 302);
    let set = r.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(
        set.contains("; Secure") && set.contains("HttpOnly"),
        "{set}"
    );
    let cookie = set.split(';').next().unwrap().to_string();
    for c in [&client, &ca.http1_client()] {
        let r = c
            .get(format!("{gw}/checkout/"))
            .header("cookie", &cookie)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{:?}", r.version());
        let v: Value = r.json().await.unwrap();
        assert_eq!(
            v["headers"]["x-anteroom-visitor"].as_str().unwrap().len(),
            32
        );
    }
}

/// `GET /healthz` on an open HTTP/1.1 connection.
async fn healthz(send: &mut hyper::client::conn::http1::SendRequest<Empty<Bytes>>) -> u16 {
    let req = hyper::Request::get("/healthz")
        .header("host", "127.0.0.1")
        .body(Empty::new())
        .unwrap();
    let res = send.send_request(req).await.expect("the connection works");
    let status = res.status().as_u16();
    res.into_body().collect().await.unwrap();
    status
}

#[tokio::test]
async fn a_reload_serves_the_new_certificate_to_new_connections_and_keeps_open_ones() {
    let ca = TestCa::new();
    let dir = tempfile::tempdir().unwrap();
    let old = ca.leaf("old");
    old.write(dir.path());
    let app = spawn_app(tls_settings(dir.path())).await;
    assert_eq!(ca.presented(app.port).await, old.der);

    // A connection opened before the reload.
    let before = ca.connect(app.port).await;
    let (mut send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(before))
        .await
        .unwrap();
    tokio::spawn(conn);
    assert_eq!(healthz(&mut send).await, 200);

    let new = ca.leaf("new");
    new.write(dir.path());
    assert_eq!(
        app.certificates.reload(),
        ReloadOutcome {
            reloaded: 1,
            kept: 0
        }
    );
    assert_eq!(ca.presented(app.port).await, new.der, "a new connection");
    assert_eq!(healthz(&mut send).await, 200, "the old connection");

    // A bad file on reload: logged, the current certificate kept.
    std::fs::write(dir.path().join("cert.pem"), "not a certificate").unwrap();
    assert_eq!(
        app.certificates.reload(),
        ReloadOutcome {
            reloaded: 0,
            kept: 1
        }
    );
    assert_eq!(ca.presented(app.port).await, new.der);
    // A key that does not match the certificate is refused too.
    std::fs::write(dir.path().join("cert.pem"), &new.cert_pem).unwrap();
    std::fs::write(dir.path().join("key.pem"), ca.leaf("other").key_pem).unwrap();
    assert_eq!(app.certificates.reload().kept, 1);
    assert_eq!(ca.presented(app.port).await, new.der);
}

#[tokio::test]
async fn sighup_makes_the_real_binary_serve_the_new_certificate_without_dropping_connections() {
    let ca = TestCa::new();
    let dir = tempfile::tempdir().unwrap();
    let old = ca.leaf("old");
    let (cert, key) = old.write(dir.path());
    let server = ServerProcess::start(&format!(
        "tls_cert = {:?}\ntls_key = {:?}\n[[rooms]]\nid = \"r\"\ntarget_url = \"https://origin.example/\"\n",
        cert.to_str().unwrap(),
        key.to_str().unwrap()
    ));
    assert_eq!(ca.presented(server.port).await, old.der);
    let before = ca.connect(server.port).await;
    let (mut send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(before))
        .await
        .unwrap();
    tokio::spawn(conn);
    assert_eq!(healthz(&mut send).await, 200);

    let new = ca.leaf("new");
    new.write(dir.path());
    server.signal("HUP");
    wait_until(
        Duration::from_secs(5),
        "a new connection to see the new certificate",
        || async { (ca.presented(server.port).await == new.der).then_some(()) },
    )
    .await;
    assert_eq!(healthz(&mut send).await, 200, "the old connection");
}

#[tokio::test]
async fn a_bad_certificate_setting_stops_start_up_naming_the_field() {
    let ca = TestCa::new();
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = ca.leaf("main").write(dir.path());
    let other_key = dir.path().join("other-key.pem");
    std::fs::write(&other_key, ca.leaf("other").key_pem).unwrap();
    let garbage = dir.path().join("garbage.pem");
    std::fs::write(&garbage, "-----BEGIN CERTIFICATE-----\nnot base64\n").unwrap();

    type Tweak<'a> = Box<dyn Fn(&mut Settings) + 'a>;
    let cases: Vec<(&str, Tweak, &str)> = vec![
        (
            "a missing certificate file",
            Box::new(|s| s.tls_cert = Some(dir.path().join("nowhere.pem"))),
            "`tls_cert` cannot read",
        ),
        (
            "a certificate that is not PEM",
            Box::new(|s| s.tls_cert = Some(garbage.clone())),
            "`tls_cert`",
        ),
        (
            "a key file that holds a certificate",
            Box::new(|s| s.tls_key = Some(cert.clone())),
            "`tls_key`",
        ),
        (
            "a key of another certificate",
            Box::new(|s| s.tls_key = Some(other_key.clone())),
            "`tls_key` does not match",
        ),
        (
            "a certificate without its key",
            Box::new(|s| s.tls_key = None),
            "`tls_key` is required when tls_cert is set",
        ),
        (
            "the gateway's key without its certificate",
            Box::new(|s| {
                s.tls_cert = None;
                s.tls_key = None;
                s.gateway.listen = Some("127.0.0.1:0".into());
                s.gateway.upstream = Some("http://127.0.0.1:9".into());
                s.gateway.tls_key = Some(key.clone());
            }),
            "`gateway.tls_cert` is required when gateway.tls_key is set",
        ),
        (
            "the gateway's missing certificate file",
            Box::new(|s| {
                s.gateway.listen = Some("127.0.0.1:0".into());
                s.gateway.upstream = Some("http://127.0.0.1:9".into());
                s.gateway.tls_cert = Some(dir.path().join("nowhere.pem"));
                s.gateway.tls_key = Some(key.clone());
            }),
            "`gateway.tls_cert` cannot read",
        ),
    ];
    for (what, tweak, want) in cases {
        let mut s = tls_settings(dir.path());
        tweak(&mut s);
        // Start-up (Application::build) and Settings::load's check say the same.
        let built = Application::build(s.clone()).await.err();
        let e = built.map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains(want), "{what}: start-up said {e:?}");
        let e = s.validate().unwrap_err().to_string();
        assert!(e.contains(want), "{what}: validate said {e:?}");
    }
}

/// Issue 29: the certificate is read once, by start-up's check, and the listener serves
/// what the check loaded. Removed from disk between the check and start-up, it is still
/// served (start-up from the settings alone, which reads the files, fails the same way).
#[tokio::test]
async fn start_up_serves_the_certificate_the_check_loaded_without_reading_it_again() {
    let ca = TestCa::new();
    let dir = tempfile::tempdir().unwrap();
    let leaf = ca.leaf("main");
    leaf.write(dir.path());
    let s = tls_settings(dir.path());
    let prepared = s.check().unwrap();
    std::fs::remove_file(dir.path().join("cert.pem")).unwrap();
    std::fs::remove_file(dir.path().join("key.pem")).unwrap();

    let unchecked = Application::build(s.clone()).await.err();
    let e = unchecked.map(|e| e.to_string()).unwrap_or_default();
    assert!(e.contains("`tls_cert` cannot read"), "{e}");

    let app = Application::build_prepared(s, prepared).await.unwrap();
    let port = app.port();
    let shutdown = tokio_util::sync::CancellationToken::new();
    let _stop = shutdown.clone().drop_guard();
    tokio::spawn(app.run_until_stopped(shutdown));
    assert_eq!(ca.presented(port).await, leaf.der);
    let r = ca
        .client()
        .get(format!("https://127.0.0.1:{port}/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
}
