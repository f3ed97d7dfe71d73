//! The browser fixture: a chromedriver on a free port driving headless Chromium
//! (Debian's `chromium` + `chromium-driver`, installed by .ci/run) with the flags this
//! machine needs, plus text waits and screenshots (to target/screenshots/).

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

use super::{free_port, wait_until};

pub const DEADLINE: Duration = Duration::from_secs(15);

/// A chromedriver on a free port; killed on drop.
pub struct Driver {
    port: u16,
    child: Child,
    /// Browser profiles started through this driver (their browsers are stopped on drop:
    /// killing chromedriver alone would leave them running).
    profiles: std::sync::Mutex<Vec<String>>,
}

impl Driver {
    pub fn start() -> Self {
        let port = free_port();
        let child = Command::new(std::env::var("CHROMEDRIVER").unwrap_or("chromedriver".into()))
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect(
                "chromedriver must be installed (apt-get install chromium-driver; see .ci/run)",
            );
        super::wait_for_port(port, "chromedriver to start");
        Self {
            port,
            child,
            profiles: Default::default(),
        }
    }

    /// A headless browser. `extra` args are added to the machine's required flags.
    pub async fn browser(&self, extra: &[&str], javascript: bool) -> (Client, tempfile::TempDir) {
        let profile = tempfile::tempdir().unwrap();
        let mut args: Vec<String> = [
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--window-size=1000,900",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.push(format!("--user-data-dir={}", profile.path().display()));
        self.profiles
            .lock()
            .unwrap()
            .push(profile.path().display().to_string());
        args.extend(extra.iter().map(|s| s.to_string()));
        let mut opts = json!({
            "binary": std::env::var("CHROMIUM").unwrap_or("/usr/bin/chromium".into()),
            "args": args,
        });
        if !javascript {
            opts["prefs"] = json!({"profile.managed_default_content_settings.javascript": 2});
        }
        let mut caps = serde_json::Map::new();
        caps.insert("goog:chromeOptions".into(), opts);
        let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{}", self.port))
            .await
            .expect("a browser session");
        (client, profile)
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        for p in self.profiles.lock().unwrap().iter() {
            let _ = Command::new("pkill")
                .args(["-f", &format!("user-data-dir={p}")])
                .status();
        }
    }
}

pub async fn text(c: &Client, css: &str) -> String {
    match c.find(Locator::Css(css)).await {
        Ok(e) => e.text().await.unwrap_or_default(),
        Err(_) => String::new(),
    }
}

pub async fn wait_text(c: &Client, css: &str, want: &str) {
    let start = std::time::Instant::now();
    loop {
        let seen = text(c, css).await;
        if seen == want {
            return;
        }
        // The last text seen, so a failure says what the page showed instead.
        if start.elapsed() > DEADLINE {
            panic!(
                "timed out after {DEADLINE:?} waiting for {css} to read {want:?}; it read {seen:?}"
            );
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// Waits until the element's text contains `part`.
pub async fn wait_text_contains(c: &Client, css: &str, part: &str) {
    let what = format!("{css} to contain {part:?}");
    wait_until(DEADLINE, &what, || async {
        text(c, css).await.contains(part).then_some(())
    })
    .await;
}

pub async fn screenshot(c: &Client, name: &str) {
    let png = c.screenshot().await.unwrap();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
}

/// Where the axe-core accessibility engine is installed (`npm install`, by .ci/run or,
/// failing that, by the first test that needs it).
fn axe_source() -> &'static str {
    static SRC: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SRC.get_or_init(|| {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/axe");
        let file = dir.join("node_modules/axe-core/axe.min.js");
        if !file.exists() {
            let ok = Command::new("npm")
                .args(["install", "--silent", "--no-audit", "--no-fund", "--prefix"])
                .arg(&dir)
                .arg(format!("axe-core@{AXE_VERSION}"))
                .status()
                .map(|s| s.success())
                .unwrap_or(false);
            assert!(
                ok && file.exists(),
                "axe-core is needed for the accessibility checks: npm install --prefix target/axe axe-core@{AXE_VERSION}"
            );
        }
        std::fs::read_to_string(file).unwrap()
    })
}

/// The axe-core release the checks were written against.
pub const AXE_VERSION: &str = "4.10.2";

/// Runs axe-core (WCAG 2.0/2.1 A and AA rules and best practices) on the page as it is
/// now and fails with every violation found, each with the elements it names.
pub async fn assert_accessible(c: &Client, what: &str) {
    // The source runs as the script itself, not through eval: the pages' CSP forbids eval.
    c.execute(&format!("{}\nreturn true;", axe_source()), vec![])
        .await
        .expect("axe-core loads");
    let out = c
        .execute_async(
            "var done = arguments[arguments.length - 1];
             axe.run(document, { resultTypes: ['violations'] })
               .then(function (r) { done(r.violations.map(function (v) {
                 return v.id + ' (' + v.impact + '): ' + v.help + ' at ' +
                   v.nodes.map(function (n) { return n.target.join(' ') + ' [' + n.failureSummary.replace(/\\n/g, ' ') + ']'; }).join('; ');
               })); }, function (e) { done(['axe failed: ' + e]); });",
            vec![],
        )
        .await
        .expect("axe-core runs");
    let violations: Vec<String> = serde_json::from_value(out).unwrap();
    assert!(
        violations.is_empty(),
        "accessibility violations on {what}:\n{}",
        violations.join("\n")
    );
}
