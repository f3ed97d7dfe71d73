//! What `packaging/` ships, checked with the tools an operator would use: the .deb that
//! `packaging/build-deb.sh` builds from this test binary (`dpkg-deb --info/--contents`,
//! `systemd-analyze verify` and `security` on its unit, the packaged binary run with the
//! packaged configuration), and the Prometheus rules and Grafana dashboard (`promtool`,
//! and every metric they name is one Anteroom exports). Nothing is installed, except by
//! `the_deb_installs_runs_with_redis_and_removes_cleanly`, which only runs as root under
//! `CI=true` (it `dpkg -i`s the package on the machine and purges it) and says why when
//! it is skipped.
//!
//! `systemd-analyze` and `promtool` are skipped with a message when missing, except with
//! `CI=true`: `.ci/run` provides both (promtool unpacked from Debian's `prometheus`
//! package into `target/promtool`, not installed).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::Value;

use crate::helpers::receiver::{secret, Mode, Receiver};
use crate::helpers::{free_port, prefix, room, spawn_app, test_settings, wait_until, RedisServer};
use anteroom::room::{RoomConfig, WebhookSecret};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const RULES: &str = "deploy/prometheus/anteroom-rules.yml";
const RULE_TESTS: &str = "deploy/prometheus/anteroom-rules.test.yml";
const DASHBOARD: &str = "deploy/grafana/anteroom.json";

/// The unit's promises (issue 32): each line must appear as written.
const UNIT_LINES: &[&str] = &[
    "User=anteroom",
    "ExecStart=/usr/bin/anteroom --config /etc/anteroom/anteroom.toml",
    "ExecReload=/bin/kill -HUP $MAINPID",
    "Restart=on-failure",
    "LimitNOFILE=1048576",
    "StateDirectory=anteroom",
    "NoNewPrivileges=yes",
    "ProtectSystem=strict",
    "ProtectHome=yes",
    "PrivateTmp=yes",
    "PrivateDevices=yes",
    "ProtectKernelTunables=yes",
    "ProtectKernelModules=yes",
    "ProtectKernelLogs=yes",
    "ProtectControlGroups=yes",
    "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX",
    "RestrictNamespaces=yes",
    "LockPersonality=yes",
    "MemoryDenyWriteExecute=yes",
    "SystemCallFilter=@system-service",
    "CapabilityBoundingSet=",
];

fn run(cmd: &mut Command) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The tool on PATH (or at one of `also`), or `None` after saying the check is skipped;
/// under `CI=true` a missing tool fails the test.
fn tool(name: &str, also: &[PathBuf]) -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    });
    let found = on_path.or_else(|| also.iter().find(|p| p.is_file()).cloned());
    if found.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{name} is missing under CI=true (.ci/run provides it)"
        );
        eprintln!("SKIPPED: {name} is not installed; its checks did not run");
    }
    found
}

/// Builds the .deb from this build's binary into `dir` and returns its path.
fn build_deb(dir: &Path) -> PathBuf {
    let out = run(Command::new("bash")
        .arg(Path::new(ROOT).join("packaging/build-deb.sh"))
        .args([
            "--binary",
            env!("CARGO_BIN_EXE_anteroom"),
            "--compression",
            "none",
        ])
        .arg("--out")
        .arg(dir));
    let deb = stdout(&out).lines().last().unwrap_or_default().to_string();
    assert!(
        deb.ends_with("_amd64.deb") || deb.ends_with(".deb"),
        "{deb}"
    );
    PathBuf::from(deb)
}

/// The .deb built and unpacked (`dpkg-deb -x`) under one temporary directory.
struct Unpacked {
    _dir: tempfile::TempDir,
    deb: PathBuf,
    root: PathBuf,
}

fn unpacked() -> Unpacked {
    let dir = tempfile::tempdir().unwrap();
    let deb = build_deb(dir.path());
    let root = dir.path().join("root");
    run(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&root));
    Unpacked {
        _dir: dir,
        deb,
        root,
    }
}

#[test]
fn the_deb_lists_the_binary_the_conffile_the_unit_and_the_state_directory() {
    let pkg = unpacked();

    let info = stdout(&run(Command::new("dpkg-deb").arg("--info").arg(&pkg.deb)));
    let version = env!("CARGO_PKG_VERSION");
    for field in [
        "Package: anteroom".to_string(),
        format!("Version: {version}"),
        "Depends: adduser".to_string(),
        "conffiles".to_string(),
        "postinst".to_string(),
    ] {
        assert!(info.contains(&field), "--info lacks {field:?}:\n{info}");
    }
    let package = stdout(&run(Command::new("dpkg-deb")
        .args(["-f"])
        .arg(&pkg.deb)
        .arg("Package")));
    assert_eq!(package.trim(), "anteroom");

    let contents = stdout(&run(Command::new("dpkg-deb")
        .arg("--contents")
        .arg(&pkg.deb)));
    for (mode, path) in [
        ("-rwxr-xr-x root/root", "./usr/bin/anteroom"),
        ("-rw-r----- root/root", "./etc/anteroom/anteroom.toml"),
        (
            "-rw-r--r-- root/root",
            "./lib/systemd/system/anteroom.service",
        ),
        ("drwxr-xr-x root/root", "./var/lib/anteroom/"),
        (
            "-rw-r--r-- root/root",
            "./usr/share/doc/anteroom/operations.md",
        ),
    ] {
        assert!(
            contents
                .lines()
                .any(|l| l.starts_with(mode) && l.ends_with(path)),
            "--contents lacks {mode} {path}:\n{contents}"
        );
    }

    // The control area, read back from the package.
    let control = pkg.root.with_file_name("control");
    run(Command::new("dpkg-deb")
        .arg("-e")
        .arg(&pkg.deb)
        .arg(&control));
    let conffiles = std::fs::read_to_string(control.join("conffiles")).unwrap();
    assert_eq!(conffiles.trim(), "/etc/anteroom/anteroom.toml");
    let postinst = std::fs::read_to_string(control.join("postinst")).unwrap();
    assert!(postinst.contains("adduser --system --group"), "{postinst}");
    assert!(
        [
            "systemctl enable",
            "systemctl start",
            "deb-systemd-invoke start"
        ]
        .iter()
        .all(|c| !postinst.contains(c)),
        "installing must not start or enable a service nobody configured:\n{postinst}"
    );

    let unit =
        std::fs::read_to_string(pkg.root.join("lib/systemd/system/anteroom.service")).unwrap();
    for line in UNIT_LINES {
        assert!(unit.lines().any(|l| l == *line), "the unit lacks {line:?}");
    }

    // The conffile: every setting commented out, so the built-in defaults apply.
    let conf = std::fs::read_to_string(pkg.root.join("etc/anteroom/anteroom.toml")).unwrap();
    let live: Vec<&str> = conf
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .collect();
    assert!(
        live.is_empty(),
        "uncommented lines in the conffile: {live:?}"
    );
    assert!(conf.contains("# listen = \"127.0.0.1:8080\""));
    assert!(conf.contains("docs/configuration.md"));
}

#[tokio::test]
async fn the_packaged_binary_starts_with_the_packaged_configuration() {
    let pkg = unpacked();
    let port = free_port();
    let mut child = Command::new(pkg.root.join("usr/bin/anteroom"))
        .arg("--config")
        .arg(pkg.root.join("etc/anteroom/anteroom.toml"))
        .env("ANTEROOM_LISTEN", format!("127.0.0.1:{port}"))
        .env("ANTEROOM_LOG", "warn")
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let client = crate::helpers::client();
    let url = format!("http://127.0.0.1:{port}/healthz");
    let status = wait_until(
        Duration::from_secs(30),
        "the packaged binary answers /healthz",
        || {
            let (client, url) = (client.clone(), url.clone());
            async move {
                client
                    .get(url)
                    .send()
                    .await
                    .ok()
                    .map(|r| r.status().as_u16())
            }
        },
    )
    .await;
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(status, 200);
}

#[test]
fn the_unit_passes_systemd_analyze_verify_and_security() {
    let Some(analyze) = tool("systemd-analyze", &[]) else {
        return;
    };
    let pkg = unpacked();
    // `verify` checks that ExecStart's binary exists: point it at the unpacked one.
    let unit =
        std::fs::read_to_string(pkg.root.join("lib/systemd/system/anteroom.service")).unwrap();
    let binary = pkg.root.join("usr/bin/anteroom");
    let units = pkg.root.with_file_name("units");
    std::fs::create_dir_all(&units).unwrap();
    let path = units.join("anteroom.service");
    std::fs::write(
        &path,
        unit.replace("/usr/bin/anteroom", binary.to_str().unwrap()),
    )
    .unwrap();

    let out = run(Command::new(&analyze).arg("verify").arg(&path));
    // Unknown or misspelt settings are only warnings: there must be none.
    let warnings = String::from_utf8_lossy(&out.stderr);
    assert!(
        warnings.trim().is_empty(),
        "systemd-analyze verify: {warnings}"
    );

    // The sandbox's exposure score (0–100, lower is tighter; the unit scores about 16):
    // a setting dropped by mistake raises it past the threshold.
    let out = Command::new(&analyze)
        .args(["security", "--offline=yes", "--threshold=25"])
        .arg(&path)
        .output()
        .unwrap();
    let report = stdout(&out);
    assert!(
        out.status.success(),
        "exposure above 2.5:\n{}{}",
        report.lines().last().unwrap_or_default(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The `anteroom_…` names in `text` (a PromQL expression, a Rust source).
fn metric_names(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = text;
    while let Some(i) = rest.find("anteroom_") {
        let boundary = rest[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_ascii_alphanumeric() && c != '_');
        let tail = &rest[i..];
        let end = tail
            .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(tail.len());
        if boundary {
            names.insert(tail[..end].to_string());
        }
        rest = &tail[end..];
    }
    names
}

/// The metric names `src/metrics.rs` and `src/metrics/*.rs` register (their string
/// literals), with the `_bucket`, `_sum` and `_count` series of the histograms.
fn registered_names() -> BTreeSet<String> {
    let mut files = vec![Path::new(ROOT).join("src/metrics.rs")];
    for e in std::fs::read_dir(Path::new(ROOT).join("src/metrics")).unwrap() {
        files.push(e.unwrap().path());
    }
    let mut names = BTreeSet::new();
    for f in files {
        let src = std::fs::read_to_string(f).unwrap();
        names.extend(
            src.split('"')
                .skip(1)
                .step_by(2)
                .filter(|s| s.starts_with("anteroom_") && !s.contains(' '))
                .map(str::to_string),
        );
    }
    for h in anteroom::metrics::HISTOGRAMS {
        assert!(names.contains(h), "{h} is not registered");
        for suffix in ["_bucket", "_sum", "_count"] {
            names.insert(format!("{h}{suffix}"));
        }
    }
    names
}

/// The recording rules of a rules file: name → expression.
fn recording_rules(rules: &str) -> std::collections::BTreeMap<String, String> {
    let mut out = std::collections::BTreeMap::new();
    let lines: Vec<&str> = rules.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let Some(name) = line.trim().strip_prefix("- record:") else {
            continue;
        };
        let expr_line = lines[i + 1];
        let indent = expr_line.len() - expr_line.trim_start().len();
        let first = expr_line.trim().strip_prefix("expr:").unwrap().trim();
        let expr = if first == "|" {
            lines[i + 2..]
                .iter()
                .take_while(|l| l.len() - l.trim_start().len() > indent)
                .map(|l| l.trim())
                .collect::<Vec<_>>()
                .join(" ")
        } else {
            first.to_string()
        };
        out.insert(name.trim().to_string(), expr);
    }
    out
}

/// The recording rules' names (`anteroom:…`) in `text`.
fn recorded_names(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = text;
    while let Some(i) = rest.find("anteroom:") {
        let tail = &rest[i..];
        let end = tail
            .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == ':'))
            .unwrap_or(tail.len());
        names.insert(tail[..end].to_string());
        rest = &tail[end..];
    }
    names
}

/// What the dashboard's queries name that does not exist: recording rules the rules
/// file does not define, and metrics not in `known`. Also returns the metrics the
/// queries read, through the recording rules they use.
fn dashboard_names(
    queries: &[String],
    records: &std::collections::BTreeMap<String, String>,
    known: &BTreeSet<String>,
) -> (Vec<String>, BTreeSet<String>) {
    let mut unknown = Vec::new();
    let mut metrics = BTreeSet::new();
    for q in queries {
        metrics.extend(metric_names(q));
        for r in recorded_names(q) {
            match records.get(&r) {
                Some(expr) => {
                    metrics.extend(metric_names(expr));
                    // A rule may read another rule.
                    for inner in recorded_names(expr) {
                        if let Some(e) = records.get(&inner) {
                            metrics.extend(metric_names(e));
                        }
                    }
                }
                None => unknown.push(r),
            }
        }
    }
    unknown.extend(metrics.difference(known).cloned());
    (unknown, metrics)
}

/// GitHub's anchors for the headings of a Markdown file (as .ci/check-links.py makes them).
fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut fenced = false;
    let mut out = BTreeSet::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let text = line.trim_start_matches('#').trim().to_lowercase();
        let slug: String = text
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == '_' || *c == '-' || *c == ' ')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        out.insert(slug);
    }
    out
}

/// The rules file's alerts, each as its lines (from `- alert:` to the next).
fn alert_blocks(rules: &str) -> Vec<Vec<&str>> {
    let mut blocks: Vec<Vec<&str>> = Vec::new();
    for line in rules.lines() {
        if line.trim_start().starts_with("- alert:") {
            blocks.push(Vec::new());
        }
        if let Some(b) = blocks.last_mut() {
            b.push(line);
        }
    }
    blocks
}

#[test]
fn every_alert_has_a_delay_a_severity_a_summary_and_a_runbook_that_exists() {
    let rules = std::fs::read_to_string(Path::new(ROOT).join(RULES)).unwrap();
    let operations = std::fs::read_to_string(Path::new(ROOT).join("docs/operations.md")).unwrap();
    let anchors = anchors(&operations);
    let blocks = alert_blocks(&rules);
    assert!(blocks.len() >= 10, "{} alerts", blocks.len());
    for block in &blocks {
        let name = block[0].trim().trim_start_matches("- alert:").trim();
        for key in [
            "expr:",
            "for:",
            "severity:",
            "summary:",
            "description:",
            "runbook_url:",
        ] {
            assert!(
                block.iter().any(|l| l.trim_start().starts_with(key)),
                "{name} has no {key}"
            );
        }
        let runbook = block
            .iter()
            .find_map(|l| l.trim().strip_prefix("runbook_url:"))
            .unwrap()
            .trim()
            .trim_matches('"');
        let anchor = runbook
            .strip_prefix("docs/operations.md#")
            .unwrap_or_else(|| panic!("{name}: {runbook} is not in docs/operations.md"));
        assert_eq!(
            anchor,
            name.to_lowercase(),
            "{name}'s runbook is its own section"
        );
        assert!(
            anchors.contains(anchor),
            "docs/operations.md has no #{anchor}"
        );
    }

    // Every metric the expressions name is one Anteroom registers.
    let exprs: String = rules
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n");
    let unknown: Vec<String> = metric_names(&exprs)
        .difference(&registered_names())
        .cloned()
        .collect();
    assert!(
        unknown.is_empty(),
        "not metrics Anteroom exports: {unknown:?}"
    );
    // And every recording rule an expression reads is one the file defines.
    let records = recording_rules(&rules);
    assert!(records.len() >= 10, "{} recording rules", records.len());
    for r in recorded_names(&exprs) {
        assert!(records.contains_key(&r), "no recording rule {r}");
    }
}

#[test]
fn every_alert_has_a_firing_and_a_quiet_unit_test() {
    let rules = std::fs::read_to_string(Path::new(ROOT).join(RULES)).unwrap();
    let tests = std::fs::read_to_string(Path::new(ROOT).join(RULE_TESTS)).unwrap();
    let mut firing = BTreeSet::new();
    let mut quiet = BTreeSet::new();
    let lines: Vec<&str> = tests.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        let Some(name) = l.trim().strip_prefix("alertname:") else {
            continue;
        };
        let exp = lines[i + 1].trim();
        assert!(exp.starts_with("exp_alerts:"), "{name}: {exp}");
        if exp.ends_with("[]") {
            quiet.insert(name.trim().to_string());
        } else {
            firing.insert(name.trim().to_string());
        }
    }
    for block in alert_blocks(&rules) {
        let name = block[0].trim().trim_start_matches("- alert:").trim();
        assert!(firing.contains(name), "no unit test where {name} fires");
        assert!(
            quiet.contains(name),
            "no unit test where {name} stays quiet"
        );
    }
}

#[test]
fn a_misspelt_name_in_the_dashboard_is_caught() {
    let dashboard = std::fs::read_to_string(Path::new(ROOT).join(DASHBOARD)).unwrap();
    let rules = std::fs::read_to_string(Path::new(ROOT).join(RULES)).unwrap();
    let records = recording_rules(&rules);
    let known = registered_names();
    let check = |text: &str| {
        let d: Value = serde_json::from_str(text).unwrap();
        dashboard_names(&dashboard_queries(&d), &records, &known).0
    };
    assert_eq!(check(&dashboard), Vec::<String>::new(), "as shipped");
    for (right, wrong) in [
        (
            "anteroom_ws_longest_silence_seconds",
            "anteroom_ws_longest_silence_second",
        ),
        ("anteroom:queue_length:max", "anteroom:queue_lenght:max"),
    ] {
        assert!(dashboard.contains(right), "{right}");
        let unknown = check(&dashboard.replace(right, wrong));
        assert!(unknown.contains(&wrong.to_string()), "{wrong}: {unknown:?}");
    }
    // A misspelt metric inside a recording rule the dashboard reads is caught too.
    let mut broken = records.clone();
    let e = broken.get_mut("anteroom:admissions:rate5m").unwrap();
    *e = e.replace("anteroom_admissions_total", "anteroom_admission_total");
    let d: Value = serde_json::from_str(&dashboard).unwrap();
    let (unknown, _) = dashboard_names(&dashboard_queries(&d), &broken, &known);
    assert_eq!(unknown, vec!["anteroom_admission_total".to_string()]);
}

#[test]
fn the_alert_rules_pass_promtool_check_and_their_unit_tests() {
    let unpacked = Path::new(ROOT).join("target/promtool/usr/bin/promtool");
    let Some(promtool) = tool("promtool", &[unpacked]) else {
        return;
    };
    let dir = Path::new(ROOT).join("deploy/prometheus");
    run(Command::new(&promtool)
        .args(["check", "rules"])
        .arg(Path::new(ROOT).join(RULES)));
    // Unit tests name the rules file relative to themselves.
    let out = run(Command::new(&promtool)
        .current_dir(&dir)
        .args(["test", "rules"])
        .arg(Path::new(ROOT).join(RULE_TESTS)));
    assert!(stdout(&out).contains("SUCCESS"), "{}", stdout(&out));
}

#[test]
fn the_dashboards_queries_are_valid_promql() {
    let unpacked = Path::new(ROOT).join("target/promtool/usr/bin/promtool");
    let Some(promtool) = tool("promtool", &[unpacked]) else {
        return;
    };
    // Each panel query as a recording rule, Grafana's variables given values, so that
    // `promtool check rules` parses it as Prometheus would.
    let dashboard: Value =
        serde_json::from_str(&std::fs::read_to_string(Path::new(ROOT).join(DASHBOARD)).unwrap())
            .unwrap();
    let mut file = String::from("groups:\n  - name: dashboard\n    rules:\n");
    let queries = dashboard_queries(&dashboard);
    let panel_queries = queries.iter().filter(|q| !q.starts_with("label_values("));
    for (i, q) in panel_queries.enumerate() {
        let q = q
            .replace("$room", ".*")
            .replace("$__rate_interval", "5m")
            .replace("$__range", "1h");
        let quoted = serde_json::to_string(&q).unwrap();
        file.push_str(&format!(
            "      - record: dashboard:query:{i}\n        expr: {quoted}\n"
        ));
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dashboard-queries.yml");
    std::fs::write(&path, &file).unwrap();
    let out = run(Command::new(&promtool).args(["check", "rules"]).arg(&path));
    assert!(stdout(&out).contains("SUCCESS"), "{}", stdout(&out));
}

/// Every query of the dashboard (panels' targets and the variables'), in order.
fn dashboard_queries(dashboard: &Value) -> Vec<String> {
    let mut queries = Vec::new();
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().into_iter().flatten() {
            queries.push(target["expr"].as_str().unwrap().to_string());
        }
    }
    for var in dashboard["templating"]["list"].as_array().unwrap() {
        if var["type"] == "query" {
            queries.push(var["definition"].as_str().unwrap().to_string());
        }
    }
    queries
}

/// The metric names of a Prometheus text exposition.
fn exposed_names(exposition: &str) -> BTreeSet<String> {
    exposition
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| l.split(['{', ' ']).next())
        .map(str::to_string)
        .collect()
}

#[tokio::test]
async fn every_metric_the_dashboard_names_is_in_a_running_apps_metrics() {
    let dashboard: Value =
        serde_json::from_str(&std::fs::read_to_string(Path::new(ROOT).join(DASHBOARD)).unwrap())
            .expect("the dashboard is valid JSON");
    let vars = dashboard["templating"]["list"].as_array().unwrap();
    assert!(
        vars.iter()
            .any(|v| v["name"] == "room" && v["type"] == "query"),
        "a room selector"
    );
    let queries = dashboard_queries(&dashboard);
    // The figures are read through the recording rules: each must be defined, and what
    // it reads is what the dashboard needs from the binary.
    let rules = std::fs::read_to_string(Path::new(ROOT).join(RULES)).unwrap();
    let records = recording_rules(&rules);
    let (unknown, wanted) = dashboard_names(&queries, &records, &registered_names());
    assert!(unknown.is_empty(), "the dashboard names {unknown:?}");
    for metric in [
        "anteroom_queue_length",
        "anteroom_active",
        "anteroom_capacity",
        "anteroom_admissions_total",
        "anteroom_ws_sockets",
        "anteroom_room_sockets",
        "anteroom_wait_seconds_bucket",
        "anteroom_eta_error_ratio_bucket",
        "anteroom_eta_judged_total",
        "anteroom_store_call_seconds_bucket",
        "anteroom_http_responses_total",
        "anteroom_ready",
        "anteroom_ws_longest_silence_seconds",
        "anteroom_ws_silence_promise_seconds",
        "anteroom_store_errors_total",
        "anteroom_webhook_pending",
        "anteroom_webhook_dead_letters",
    ] {
        assert!(wanted.contains(metric), "no panel shows {metric}");
    }
    for q in &queries {
        let room_figure = [
            "anteroom_queue_length",
            "anteroom_active",
            "anteroom_capacity",
        ]
        .iter()
        .any(|m| q.contains(&format!("{m}{{")))
            || recorded_names(q)
                .iter()
                .any(|r| records[r].contains("by (room"));
        assert!(
            !room_figure || q.contains("$room"),
            "{q} ignores the room selector"
        );
    }

    // A room with a webhook that always fails: one visitor admitted, one waiting, the
    // deliveries dead-lettered; then the store killed, so store errors are counted.
    let rx = Receiver::start(Mode::AlwaysFail).await;
    let mut redis = RedisServer::start();
    let hooked = RoomConfig {
        webhook_url: Some(rx.url()),
        webhook_secret: Some(WebhookSecret::new(secret())),
        ..room("r", 1)
    };
    let mut settings = test_settings(Some(redis.url()), &prefix(), vec![hooked]);
    settings.webhooks.interval_ms = 100;
    settings.webhooks.retry_base_ms = 100;
    settings.webhooks.retry_cap_ms = 200;
    settings.webhooks.max_attempts = 2;
    // And a room of one 1 s slot with queue sockets, whose estimates become known once a
    // session has ended and are judged as each visitor is let in.
    settings.rooms.push(RoomConfig {
        session_ttl_secs: 1,
        ..room("e", 1)
    });
    let app = spawn_app(settings).await;
    assert_eq!(app.join("r").await.state(), "admitted");
    assert_eq!(app.join("r").await.state(), "queued");
    app.join("e").await;
    let mut sockets = Vec::new();
    for _ in 0..4 {
        let token = app.join("e").await.token();
        sockets.push(
            crate::helpers::ws::connect(&app, "e", &token, None)
                .await
                .unwrap(),
        );
    }
    let scrape = || {
        let (client, url) = (app.client.clone(), app.url("/metrics"));
        async move { client.get(url).send().await.ok()?.text().await.ok() }
    };
    let healthy = wait_until(
        Duration::from_secs(30),
        "a dead letter and an estimate judged in /metrics",
        || {
            let s = scrape();
            async move {
                s.await.filter(|m| {
                    m.contains("anteroom_webhook_dead_letters{room=\"r\"} 1")
                        && m.contains("anteroom_eta_judged_total{")
                })
            }
        },
    )
    .await;
    redis.kill();
    let _ = app.join("r").await;
    let broken = wait_until(Duration::from_secs(15), "a store error in /metrics", || {
        let s = scrape();
        async move {
            s.await
                .filter(|m| m.contains("anteroom_store_errors_total{"))
        }
    })
    .await;

    let exposed: BTreeSet<String> = exposed_names(&healthy)
        .union(&exposed_names(&broken))
        .cloned()
        .collect();
    let missing: Vec<&String> = wanted.difference(&exposed).collect();
    assert!(
        missing.is_empty(),
        "the dashboard names {missing:?}, not in:\n{healthy}"
    );
}

/// Whether this run may install packages on the machine: as root, under `CI=true`
/// (`.ci/run`), with no `anteroom` package already there. Otherwise says why not.
fn may_install() -> bool {
    let why = if std::env::var("CI").as_deref() != Ok("true") {
        "not under CI=true (it installs a package on this machine; .ci/run sets CI)"
    } else if !run(Command::new("id").arg("-u")).stdout.starts_with(b"0\n") {
        "not running as root (dpkg -i needs it)"
    } else if Command::new("dpkg")
        .args(["-s", "anteroom"])
        .output()
        .is_ok_and(|o| o.status.success())
    {
        "an anteroom package is already installed here, which this test would remove"
    } else {
        return true;
    };
    eprintln!("SKIPPED installing the .deb: {why}");
    false
}

/// `dpkg -i` the package, check what it put where, `systemd-analyze verify` the unit
/// as installed, run the installed binary as the `anteroom` user with the installed
/// configuration and a Redis, then `dpkg -r` (configuration kept) and `--purge`
/// (everything gone, the user too).
#[tokio::test]
async fn the_deb_installs_runs_with_redis_and_removes_cleanly() {
    if !may_install() {
        return;
    }
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let deb = build_deb(dir.path());
    // Purge whatever happens below, so a failed run does not leave the package behind.
    struct Purge;
    impl Drop for Purge {
        fn drop(&mut self) {
            let _ = Command::new("dpkg").args(["--purge", "anteroom"]).output();
        }
    }
    let _purge = Purge;
    run(Command::new("dpkg").arg("-i").arg(&deb));

    let stat = |path: &str| {
        stdout(&run(Command::new("stat").args(["-c", "%U:%G %a", path])))
            .trim()
            .to_string()
    };
    assert!(run(Command::new("getent").args(["passwd", "anteroom"]))
        .status
        .success());
    assert_eq!(stat("/etc/anteroom/anteroom.toml"), "root:anteroom 640");
    assert_eq!(stat("/var/lib/anteroom"), "anteroom:anteroom 750");
    assert_eq!(stat("/usr/bin/anteroom"), "root:root 755");
    // Installed, not enabled: nothing runs on the commented configuration.
    let enabled = Command::new("systemctl")
        .args(["is-enabled", "anteroom.service"])
        .output()
        .unwrap();
    assert_ne!(
        stdout(&enabled).trim(),
        "enabled",
        "installing must not enable the service"
    );

    if let Some(analyze) = tool("systemd-analyze", &[]) {
        let out = run(Command::new(&analyze)
            .arg("verify")
            .arg("/lib/systemd/system/anteroom.service"));
        let warnings = String::from_utf8_lossy(&out.stderr);
        assert!(
            warnings.trim().is_empty(),
            "systemd-analyze verify: {warnings}"
        );
    }

    // The installed binary, as the service's user (the configuration is readable by its
    // group only), on the installed configuration plus what an operator sets first.
    let redis = RedisServer::start();
    let port = free_port();
    let id = |flag: &str| -> u32 {
        stdout(&run(Command::new("id").args([flag, "anteroom"])))
            .trim()
            .parse()
            .unwrap()
    };
    // Started as that user directly (not through runuser), so killing it below kills it.
    struct Killed(std::process::Child);
    impl Drop for Killed {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let child = Command::new("/usr/bin/anteroom")
        .args(["--config", "/etc/anteroom/anteroom.toml"])
        .uid(id("-u"))
        .gid(id("-g"))
        .env("ANTEROOM_LISTEN", format!("127.0.0.1:{port}"))
        .env("ANTEROOM_REDIS_URL", redis.url())
        .env("ANTEROOM_KEY_PREFIX", prefix())
        .env("ANTEROOM_ADMIN__TOKEN", crate::helpers::admin::TOKEN)
        .env("ANTEROOM_LOG", "warn")
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Killed however the checks below end, so purge can remove its user.
    let child = Killed(child);
    let client = crate::helpers::client();
    let url = format!("http://127.0.0.1:{port}/readyz");
    let status = wait_until(
        Duration::from_secs(30),
        "the installed binary is ready on Redis (/readyz)",
        || {
            let (client, url) = (client.clone(), url.clone());
            async move {
                let r = client.get(url).send().await.ok()?;
                (r.status() == 200).then_some(200)
            }
        },
    )
    .await;
    let rooms = client
        .get(format!("http://127.0.0.1:{port}/api/admin/rooms"))
        .bearer_auth(crate::helpers::admin::TOKEN)
        .send()
        .await
        .unwrap()
        .status();
    drop(child);
    assert_eq!((status, rooms.as_u16()), (200, 200));

    // Remove keeps the configuration (a conffile); purge takes everything.
    run(Command::new("dpkg").args(["-r", "anteroom"]));
    assert!(!Path::new("/usr/bin/anteroom").exists());
    assert!(!Path::new("/lib/systemd/system/anteroom.service").exists());
    assert!(Path::new("/etc/anteroom/anteroom.toml").exists());
    run(Command::new("dpkg").args(["--purge", "anteroom"]));
    for gone in [
        "/etc/anteroom",
        "/var/lib/anteroom",
        "/usr/share/doc/anteroom",
    ] {
        assert!(!Path::new(gone).exists(), "{gone} is left after purge");
    }
    for db in ["passwd", "group"] {
        let left = Command::new("getent")
            .args([db, "anteroom"])
            .output()
            .unwrap();
        assert!(
            !left.status.success(),
            "the anteroom {db} entry is left after purge"
        );
    }
    assert!(!Command::new("dpkg")
        .args(["-s", "anteroom"])
        .output()
        .unwrap()
        .status
        .success());
}
