//! The path and host reader (`anteroom::domain::request_target`) against the programs
//! that receive the same request: real nginx (`$uri`, `$host`, the `location` it picks)
//! and a real Express app (`req.path`, `req.hostname`, the handler its router picks).
//! Every hostile form is sent byte for byte (HTTP clients normalise); for each, the
//! reader must refuse it, or read nginx's `$uri` and `$host` exactly, and guard
//! everything either program serves from a guarded handler, and let a `path` bypass
//! through only what both serve from the bypassed handler. The table is written to
//! `target/request-target-table.md` (docs/gateway.md#paths-and-hosts has it).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anteroom::config::{BypassRule, GatewayRoute};
use anteroom::domain::bypass::{Bypass, RequestFacts};
use anteroom::domain::request_target::{read_host, read_path};
use anteroom::gateway::routes::Routes;

use crate::helpers::{free_port, raw, wait_for_port};

/// The Express release the table was measured with (`.ci/run` installs it).
pub const EXPRESS_VERSION: &str = "4.21.2";

/// A site with a guarded `/checkout/` (its `assets/` passed by a `path` rule) and the
/// guarded hosts `tickets.example` and `bücher.example` (`xn--bcher-kva.example`), as each program is configured in this test.
fn guard() -> (Routes, Bypass) {
    let routes = Routes::new(&[
        GatewayRoute {
            host: None,
            path_prefix: "/checkout/".into(),
            room: "sale".into(),
        },
        GatewayRoute {
            host: Some("tickets.example".into()),
            path_prefix: "/".into(),
            room: "tickets".into(),
        },
        GatewayRoute {
            host: Some("bücher.example".into()),
            path_prefix: "/".into(),
            room: "books".into(),
        },
    ]);
    let bypass = Bypass::from_rules(&[BypassRule {
        name: "assets".into(),
        path: Some("/checkout/assets/*".into()),
        ..Default::default()
    }])
    .unwrap();
    (routes, bypass)
}

/// What Anteroom does with a request: `400 bad_path`, `pass`, a room, or `open`.
fn anteroom(path: &str, host: &str) -> (String, Option<String>, Option<String>) {
    let (routes, bypass) = guard();
    let path = match read_path(path) {
        Ok(p) => p,
        Err(e) => return (format!("400 {}", e.code()), None, None),
    };
    let host = match read_host(host) {
        Ok(h) => h,
        Err(e) => return (format!("400 {}", e.code()), Some(path), None),
    };
    let nothing: Option<&str> = None;
    let header = move |_: &str| nothing;
    let bypassed = bypass
        .matching(&RequestFacts {
            ip: "192.0.2.1".parse().unwrap(),
            user_agent: None,
            path: Some(&path),
            header: &header,
        })
        .is_some();
    let decision = match routes.room_for(Some(&host), &path) {
        None => "open".to_string(),
        Some(_) if bypassed => "bypass".to_string(),
        Some(room) => format!("guard {room}"),
    };
    (decision, Some(path), Some(host.name))
}

/// A program's answer: its status, and with `200` the handler and what it read.
struct Served {
    status: u16,
    handler: String,
    path: String,
    host: String,
}

impl Served {
    fn cell(&self) -> String {
        if self.status != 200 {
            return format!("{}", self.status);
        }
        format!("{} `{}` `{}`", self.handler, self.path, self.host)
    }
}

fn served(r: raw::RawReply) -> Served {
    let mut parts = r.body.trim_end().splitn(3, '|').map(str::to_string);
    let mut next = || parts.next().unwrap_or_default();
    Served {
        status: r.status,
        handler: next(),
        path: next(),
        host: next(),
    }
}

/// A process stopped (TERM, then KILL after 5 s) when dropped.
struct Running {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// nginx with the site's `location`s, each answering `handler|$uri|$host`.
fn nginx() -> Running {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    let port = free_port();
    let echo = |handler: &str| format!("return 200 \"{handler}|$uri|$host\\n\";");
    let conf = format!(
        r#"
user root;
worker_processes 1;
error_log stderr warn;
pid {d}/nginx.pid;
events {{ worker_connections 64; }}
http {{
    access_log off;
    client_body_temp_path {d}/body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    server {{
        listen 127.0.0.1:{port} default_server;
        location /checkout/assets/ {{ {assets} }}
        location /checkout/ {{ {checkout} }}
        location / {{ {other} }}
    }}
    server {{
        listen 127.0.0.1:{port};
        server_name tickets.example;
        location / {{ {tickets} }}
    }}
    server {{
        listen 127.0.0.1:{port};
        server_name xn--bcher-kva.example;
        location / {{ {books} }}
    }}
}}
"#,
        assets = echo("assets"),
        checkout = echo("checkout"),
        other = echo("other"),
        tickets = echo("tickets"),
        books = echo("books"),
    );
    let path = dir.path().join("nginx.conf");
    std::fs::write(&path, conf).unwrap();
    let bin = ["/usr/sbin/nginx", "nginx"]
        .into_iter()
        .find(|b| Command::new(b).arg("-v").output().is_ok())
        .expect("nginx must be installed (apt-get install nginx; see .ci/run)");
    let child = Command::new(bin)
        .args(["-p", &d.to_string(), "-c", path.to_str().unwrap()])
        .args(["-g", "daemon off;"])
        .stdout(Stdio::null())
        .stderr(Stdio::from(
            std::fs::File::create(dir.path().join("error.log")).unwrap(),
        ))
        .spawn()
        .unwrap();
    wait_for_port(port, "nginx to start");
    Running {
        child,
        port,
        _dir: dir,
    }
}

/// The same site in Express (its default router: case-insensitive, non-strict), the
/// host matched as the `vhost` middleware matches it; `None` (and a note) when Express
/// is not installed outside CI.
fn express() -> Option<Running> {
    let module =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/express/node_modules/express");
    if !module.join("package.json").exists() {
        let install = format!("npm install --prefix target/express express@{EXPRESS_VERSION}");
        let in_ci = std::env::var("CI").is_ok_and(|v| v == "true");
        assert!(
            !in_ci,
            "Express is missing in CI: .ci/run installs it ({install})"
        );
        eprintln!("SKIPPED the Express column of the request-target table: not in CI and Express is not installed; run `{install}` (or .ci/run)");
        return None;
    }
    const APP: &str = r#"
const [expressPath, port] = process.argv.slice(2);
const express = require(expressPath);
const app = express();
const echo = (handler) => (req, res) =>
  res.type('text/plain').send(`${handler}|${req.originalUrl.split('?')[0]}|${req.hostname}\n`);
app.use((req, res, next) => /^tickets\.example$/i.test(req.hostname) ? echo('tickets')(req, res) : next());
app.use((req, res, next) => /^xn--bcher-kva\.example$/i.test(req.hostname) ? echo('books')(req, res) : next());
app.all('/checkout/assets/*', echo('assets'));
app.use('/checkout/', echo('checkout'));
app.use(echo('other'));
app.listen(Number(port), '127.0.0.1');
"#;
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("app.cjs");
    std::fs::write(&script, APP).unwrap();
    let port = free_port();
    let child = Command::new("node")
        .arg(&script)
        .arg(&module)
        .arg(port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::from(
            std::fs::File::create(dir.path().join("node.log")).unwrap(),
        ))
        .spawn()
        .expect("node runs (apt-get install nodejs)");
    wait_for_port(port, "Express to start");
    Some(Running {
        child,
        port,
        _dir: dir,
    })
}

/// Whether Anteroom's `decision` is at least as strict as the program that served
/// `s`: what a guarded handler serves is refused or guarded; a bypass only where the
/// program serves the bypassed handler.
fn no_weaker(decision: &str, s: &Served) -> bool {
    let refused = decision.starts_with("400");
    let guarded = decision.starts_with("guard");
    if s.status != 200 {
        return decision != "bypass" || s.status >= 400;
    }
    match s.handler.as_str() {
        "checkout" | "tickets" | "books" => refused || guarded,
        "assets" => refused || guarded || decision == "bypass",
        _ => decision != "bypass",
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_hostile_form_is_refused_or_read_as_nginx_and_express_route_it() {
    let nginx = nginx();
    let express = express();
    const SHOP: &str = "shop.example";
    let rows: &[(&str, &str, &str)] = &[
        ("plain", "/checkout/pay", SHOP),
        ("plain, bypassed", "/checkout/assets/app.css", SHOP),
        ("`%2f`", "/checkout/assets/..%2fpay", SHOP),
        ("`%2F` in the prefix", "/checkout%2Fassets/x", SHOP),
        ("`%2e`", "/checkout/assets/%2e%2e/pay", SHOP),
        ("`%2e`", "/a/%2e%2e/checkout/pay", SHOP),
        ("`..`", "/a/../checkout/pay", SHOP),
        ("`..`", "/checkout/assets/x/../../pay", SHOP),
        ("`%5c`", "/x/..%5ccheckout/pay", SHOP),
        ("`\\`", "/x/..\\checkout/pay", SHOP),
        ("`%3f`", "/checkout/assets/x%3F/deeper/pay", SHOP),
        ("`%23`", "/checkout/assets/x%23/deeper/pay", SHOP),
        ("raw `#`", "/checkout/assets/x#/../../pay", SHOP),
        ("`;`", "/checkout;a=b/pay", SHOP),
        ("`;`", "/checkout/assets;x/pay", SHOP),
        ("`..;`", "/checkout/assets/..;x/pay", SHOP),
        ("case", "/CHECKOUT/pay", SHOP),
        ("case", "/Checkout/Assets/app.css", SHOP),
        ("trailing slash", "/checkout", SHOP),
        ("trailing slash", "/checkout/", SHOP),
        ("`//`", "//checkout/pay", SHOP),
        ("`%63`", "/%63heckout/pay", SHOP),
        ("`%00`", "/checkout/%00x", SHOP),
        ("`%zz`", "/checkout/%zz", SHOP),
        ("host", "/x", "tickets.example"),
        ("trailing dot", "/x", "tickets.example."),
        ("case, trailing dot", "/x", "TICKETS.example."),
        ("trailing dot, port", "/x", "tickets.example.:8080"),
        ("port", "/x", "Tickets.Example:8080"),
        ("IPv6, port", "/x", "[::1]:8080"),
        ("IDN", "/x", "bücher.example"),
        ("IDN, case", "/x", "BÜCHER.example."),
        ("IDN, punycode", "/x", "xn--bcher-kva.example"),
        ("empty label", "/x", "tickets..example"),
    ];
    let mut table = String::from(
        "| form | request | nginx: location `$uri` `$host` | Express: handler `path` `hostname` | Anteroom |\n|---|---|---|---|---|\n",
    );
    let mut failures = Vec::new();
    for &(form, path, host) in rows {
        let (decision, our_path, our_host) = anteroom(path, host);
        let n = served(raw::get(nginx.port, path, Some(host), &[]).await);
        let e = match &express {
            Some(x) => Some(served(raw::get(x.port, path, Some(host), &[]).await)),
            None => None,
        };
        let mut fail = |why: String| failures.push(format!("{form} {path} (Host {host}): {why}"));
        // nginx: exactly its reading (or refused).
        if n.status == 200 {
            if let Some(p) = &our_path {
                if *p != n.path {
                    fail(format!("path {p:?}, nginx's $uri {:?}", n.path));
                }
            }
            if let Some(h) = &our_host {
                let theirs = read_host(&n.host).map(|h| h.name);
                if theirs.as_ref() != Ok(h) {
                    fail(format!("host {h:?}, nginx's $host {:?}", n.host));
                }
            }
        }
        for (who, s) in [("nginx", Some(&n)), ("Express", e.as_ref())] {
            if let Some(s) = s {
                if !no_weaker(&decision, s) {
                    fail(format!("{decision} while {who} serves {}", s.cell()));
                }
            }
        }
        let shown = |s: &str| s.replace('|', "\\|");
        let ours = match (&our_path, decision.starts_with("400")) {
            (_, true) => decision.clone(),
            (Some(p), false) => format!("{decision} (`{}`)", shown(p)),
            (None, false) => decision.clone(),
        };
        writeln!(
            table,
            "| {form} | `{}` Host `{}` | {} | {} | {ours} |",
            shown(path),
            shown(host),
            shown(&n.cell()),
            e.map_or("not run".into(), |e| shown(&e.cell())),
        )
        .unwrap();
    }
    let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/request-target-table.md");
    std::fs::write(&out, &table).unwrap();
    assert!(failures.is_empty(), "{}\n\n{table}", failures.join("\n"));
}
