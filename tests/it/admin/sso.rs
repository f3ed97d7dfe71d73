//! Single sign-on against a real OpenID provider: the certified `oidc-provider` package
//! (panva), run by node with its development login screen (any name, any password) and
//! an RSA signing key made for the run. `.ci/run` installs it into
//! `target/oidc-provider`; outside CI without it the tests are skipped with a note.
//!
//! Accounts at the provider: `alice` (groups `queue-owners`), `sam` (`support`, mapped
//! to viewer), `eve` (`marketing`, mapped to nothing) and `mallory` (`support`, whose ID
//! token the provider's token endpoint tampers with on the way out: its payload says
//! `queue-owners` under the original signature).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use crate::helpers::admin::{admin_settings, dashboard_in};
use crate::helpers::{free_port, prefix, room, spawn_app, RedisServer, TestApp};
use anteroom::config::{OidcSettings, Role};
use anteroom::room::Secret;

/// The `oidc-provider` release these tests run (`.ci/run` installs it).
pub const OIDC_PROVIDER_VERSION: &str = "9.13.3";
const CLIENT_SECRET: &str = "anteroom-client-secret-0123456789abcdef";

const PROVIDER: &str = r#"
import { generateKeyPairSync } from 'node:crypto';
const [modulePath, port, redirect] = process.argv.slice(2);
const { default: Provider } = await import(modulePath);
const groups = { alice: ['queue-owners', 'staff'], sam: ['support'], eve: ['marketing'], mallory: ['support'] };
const key = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: [{
    client_id: 'anteroom',
    client_secret: process.env.CLIENT_SECRET,
    redirect_uris: [redirect],
    response_types: ['code'],
    grant_types: ['authorization_code'],
  }],
  jwks: { keys: [{ ...key, kid: 'test-key', use: 'sig', alg: 'RS256' }] },
  cookies: { keys: ['cookie-key-for-the-test-provider'] },
  claims: { openid: ['sub'], profile: ['preferred_username', 'groups'], email: ['email'] },
  conformIdTokenClaims: false,
  features: { devInteractions: { enabled: true } },
  findAccount: async (ctx, id) => ({
    accountId: id,
    claims: async () => ({ sub: id, preferred_username: id, email: `${id}@example.test`, groups: groups[id] || [] }),
  }),
});
// mallory's ID token leaves the token endpoint with its payload changed (an owner's
// group) and the provider's signature over the original: a forgery to refuse.
provider.use(async (ctx, next) => {
  await next();
  if (ctx.path === '/token' && ctx.body && ctx.body.id_token) {
    const [h, p, s] = ctx.body.id_token.split('.');
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
    if (claims.sub === 'mallory') {
      claims.groups = ['queue-owners'];
      ctx.body = { ...ctx.body, id_token: [h, Buffer.from(JSON.stringify(claims)).toString('base64url'), s].join('.') };
    }
  }
});
provider.listen(Number(port), '127.0.0.1');
"#;

struct RunningProvider {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for RunningProvider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The provider on a free port, sending browsers back to `redirect`; `None` (and a
/// note) outside CI when the package is not installed.
async fn provider(redirect: &str) -> Option<RunningProvider> {
    let module = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("target/oidc-provider/node_modules/oidc-provider/lib/index.js");
    if !module.exists() {
        let install = format!(
            "npm install --prefix target/oidc-provider oidc-provider@{OIDC_PROVIDER_VERSION}"
        );
        let in_ci = std::env::var("CI").is_ok_and(|v| v == "true");
        assert!(
            !in_ci,
            "oidc-provider is missing in CI: .ci/run installs it ({install})"
        );
        eprintln!("SKIPPED single sign-on tests: not in CI and oidc-provider is not installed; run `{install}` (or .ci/run)");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("provider.mjs");
    std::fs::write(&script, PROVIDER).unwrap();
    let port = free_port();
    let log = dir.path().join("node.log");
    let child = Command::new("node")
        .arg(&script)
        .arg(format!("file://{}", module.display()))
        .arg(port.to_string())
        .arg(redirect)
        .env("CLIENT_SECRET", CLIENT_SECRET)
        .env("NODE_ENV", "test")
        .stdout(Stdio::from(std::fs::File::create(&log).unwrap()))
        .stderr(Stdio::from(
            std::fs::File::create(dir.path().join("node.err")).unwrap(),
        ))
        .spawn()
        .expect("node runs (apt-get install nodejs)");
    let p = RunningProvider {
        child,
        port,
        _dir: dir,
    };
    let discovery = format!("http://127.0.0.1:{port}/.well-known/openid-configuration");
    crate::helpers::wait_until(
        std::time::Duration::from_secs(20),
        "the OpenID provider to serve its discovery document",
        || {
            let url = discovery.clone();
            async move {
                let r = reqwest::get(url).await.ok()?;
                r.status().is_success().then_some(())
            }
        },
    )
    .await;
    Some(p)
}

/// Anteroom with single sign-on against a provider started for the test.
async fn sso_app() -> Option<(TestApp, RedisServer, RunningProvider)> {
    // The callback address must be known before the provider starts (it registers it):
    // the app listens on a port chosen here.
    let app_port = free_port();
    let redirect = format!("http://127.0.0.1:{app_port}/admin/oidc/callback");
    let idp = provider(&redirect).await?;
    let r = RedisServer::start();
    let mut s = admin_settings(&r, &prefix(), vec![room("r", 1)]);
    s.listen = format!("127.0.0.1:{app_port}");
    s.admin.oidc = Some(OidcSettings {
        issuer: format!("http://127.0.0.1:{}", idp.port),
        client_id: "anteroom".into(),
        client_secret: Some(Secret::new(CLIENT_SECRET)),
        redirect_url: redirect,
        roles_claim: "groups".into(),
        roles: [
            ("queue-owners".to_string(), Role::Owner),
            ("support".to_string(), Role::Viewer),
        ]
        .into(),
    });
    let app = spawn_app(s).await;
    Some((app, r, idp))
}

/// A browser-like client: a cookie jar, redirects followed by hand.
fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .cookie_store(true)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

fn location(r: &reqwest::Response, base: &str) -> String {
    let l = r
        .headers()
        .get("location")
        .unwrap_or_else(|| panic!("a redirect from {base}: {}", r.status()))
        .to_str()
        .unwrap();
    url::Url::parse(base).unwrap().join(l).unwrap().to_string()
}

/// Signs in at the provider as `who` through the whole flow; the last answer is
/// Anteroom's callback's.
async fn sign_in(app: &TestApp, b: &reqwest::Client, who: &str) -> reqwest::Response {
    let start = app.url("/admin/oidc/login");
    let r = b.get(&start).send().await.unwrap();
    assert_eq!(
        r.status(),
        303,
        "the sign-in starts with a redirect to the provider"
    );
    let mut url = location(&r, &start);
    assert!(
        url.contains("code_challenge_method=S256") && url.contains("nonce="),
        "PKCE and a nonce: {url}"
    );
    // Walk the provider's pages: the login form, then the consent form, then back.
    for _ in 0..12 {
        if url.starts_with(&app.url("/admin/oidc/callback")) {
            return b.get(&url).send().await.unwrap();
        }
        let r = b.get(&url).send().await.unwrap();
        if r.status().is_redirection() {
            url = location(&r, &url);
            continue;
        }
        let page = r.text().await.unwrap();
        let prompt = if page.contains("name=\"prompt\" value=\"login\"") {
            vec![
                ("prompt", "login"),
                ("login", who),
                ("password", "anything"),
            ]
        } else if page.contains("name=\"prompt\" value=\"consent\"") {
            vec![("prompt", "consent")]
        } else {
            panic!("an unexpected provider page at {url}: {page}");
        };
        let r = b.post(&url).form(&prompt).send().await.unwrap();
        url = location(&r, &url);
    }
    panic!("the flow did not come back to Anteroom");
}

async fn signed_in_as(app: &TestApp, b: &reqwest::Client) -> String {
    let html = b
        .get(app.url("/admin"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    html.split("id=\"signed-in\">")
        .nth(1)
        .map(|s| s.split("</span>").next().unwrap().to_string())
        .unwrap_or_default()
}

#[tokio::test]
async fn single_sign_on_signs_in_with_the_mapped_role_and_signs_out() {
    let Some((app, _r, _idp)) = sso_app().await else {
        return;
    };
    let login = browser()
        .get(app.url("/admin"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        login.contains("href=\"/admin/oidc/login\""),
        "the sign-in page offers SSO"
    );

    // alice is in queue-owners (owner) and staff (unmapped): the highest mapped wins.
    let b = browser();
    let back = sign_in(&app, &b, "alice").await;
    assert_eq!(back.status(), 303, "{}", back.text().await.unwrap());
    assert_eq!(location(&back, &app.url("/")), app.url("/admin"));
    assert_eq!(
        signed_in_as(&app, &b).await,
        "signed in as <strong>alice</strong> (owner)"
    );
    let (_, csrf) = dashboard_in(&b, &app).await;
    let r = b
        .post(app.url("/api/admin/rooms/r/pause"))
        .header("x-csrf-token", &csrf)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let audit = b.get(app.url("/api/admin/audit")).send().await.unwrap();
    let audit: serde_json::Value = audit.json().await.unwrap();
    assert_eq!(audit["entries"][0]["who"], "alice");

    // Signing out ends the session: the dashboard asks to sign in again.
    let out = b
        .post(app.url("/admin/logout"))
        .form(&[("csrf", &csrf)])
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), 303);
    assert_eq!(
        b.get(app.url("/api/admin/rooms"))
            .send()
            .await
            .unwrap()
            .status(),
        401
    );
    assert_eq!(signed_in_as(&app, &b).await, "");

    // sam is in support: a viewer, refused a change.
    let b = browser();
    assert_eq!(sign_in(&app, &b, "sam").await.status(), 303);
    assert_eq!(
        signed_in_as(&app, &b).await,
        "signed in as <strong>sam</strong> (viewer)"
    );
    let (_, csrf) = dashboard_in(&b, &app).await;
    let r = b
        .post(app.url("/api/admin/rooms/r/resume"))
        .header("x-csrf-token", &csrf)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "forbidden_role");
}

#[tokio::test]
async fn a_user_with_no_mapped_role_or_a_tampered_id_token_is_refused() {
    let Some((app, _r, _idp)) = sso_app().await else {
        return;
    };
    // eve is in marketing, which maps to no role.
    let b = browser();
    let r = sign_in(&app, &b, "eve").await;
    assert_eq!(r.status(), 403);
    assert!(r
        .headers()
        .get_all("set-cookie")
        .iter()
        .all(|c| !c.to_str().unwrap().starts_with("anteroom_admin=")));
    let page = r.text().await.unwrap();
    assert!(page.contains("eve") && page.contains("no role"), "{page}");
    assert_eq!(
        b.get(app.url("/api/admin/rooms"))
            .send()
            .await
            .unwrap()
            .status(),
        401
    );

    // mallory's ID token was changed after signing: refused, not an owner.
    let b = browser();
    let r = sign_in(&app, &b, "mallory").await;
    assert_eq!(r.status(), 403);
    let page = r.text().await.unwrap();
    assert!(page.contains("ID token is not valid"), "{page}");
    assert_eq!(
        b.get(app.url("/api/admin/rooms"))
            .send()
            .await
            .unwrap()
            .status(),
        401
    );

    // A callback with no flow of ours (a forged or replayed link) is refused.
    let r = browser()
        .get(app.url("/admin/oidc/callback?code=x&state=y"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
}
