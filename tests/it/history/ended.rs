//! "What ended stays ended" under the history checker (issue 28): visitors end their
//! sessions and places on purpose on both instances (release, revoke, admin remove; leave,
//! admin remove, admin flush, let in and released), one visitor holds the room's one slot
//! and one stays in line; then a fault hits the store or an instance, and afterwards the
//! ended visitors present everything they still hold (passes to `verify` on both
//! instances, place receipts to the join) while the holder and the stayer go on.
//!
//! Rules checked (on top of [`super::check`]'s): no pass verifies after its session
//! ended; no ended place comes back ahead of the visitor who stayed; the room never
//! reports more active sessions than its capacity; and the holder's pass and the stayer's
//! place survive (nothing live was lost).

use std::time::{Duration, Instant};

use super::{Endpoint, History, Seen};

/// The admin token both instances are given.
pub const ADMIN_TOKEN: &str = "admin-token-for-tests-0123456789abcdef";

/// What the enders did and saw, and the room's figures after the fault.
pub struct Ended {
    pub history: History,
}

async fn admin(app: &Endpoint, method: reqwest::Method, path: &str) -> u16 {
    let r = app
        .client
        .request(method, format!("{}{path}", app.base))
        .bearer_auth(ADMIN_TOKEN)
        .send()
        .await;
    r.map_or(0, |r| r.status().as_u16())
}

async fn revoke(app: &Endpoint, room: &str, pass: &str) -> u16 {
    let r = app
        .client
        .post(app.url(room, "revoke"))
        .bearer_auth(pass)
        .send()
        .await;
    r.map_or(0, |r| r.status().as_u16())
}

fn id_of(token: &str) -> &str {
    token.split('.').next().unwrap_or_default()
}

/// Runs the "ended" workload on `apps` (two instances of one store, room `room` of
/// capacity 1, not paused), with `fault` started once every end was acknowledged and
/// read by both instances' keepers (a look, [`SETTLE`]), and checked for `after` once the
/// fault ended.
pub async fn run<F>(apps: &[Endpoint], room: &str, fault: F, after: Duration) -> Ended
where
    F: std::future::Future<Output = ()>,
{
    let h = History {
        visitors: 0,
        capacity: 1,
        ..History::default()
    };
    // Visitor numbers: 0..6 end sessions, 6 holds, 7.. end places, the last stays.
    let mut ended_passes: Vec<(usize, String)> = Vec::new();
    for (n, how) in ["release", "revoke", "remove"]
        .iter()
        .flat_map(|h| [h, h])
        .enumerate()
    {
        let app = &apps[n % apps.len()];
        let other = &apps[(n + 1) % apps.len()];
        let r = app.join(room).await;
        assert_eq!(r.state(), "admitted", "ender {n}: {:?}", r.body);
        let pass = r.body["pass"].as_str().unwrap().to_string();
        record_admitted(&h, n, &r, &pass);
        assert_eq!(other.verify(room, &pass).await.status, 200);
        h.record(
            n,
            Seen::Verified {
                pass: pass.clone(),
                degraded: false,
            },
        );
        h.record(n, Seen::ReleaseSent);
        let token = r.token();
        let status = match *how {
            "release" => app.release(room, &token).await.status,
            "revoke" => revoke(app, room, &pass).await,
            _ => {
                let path = format!("/api/admin/rooms/{room}/visitors/{}", id_of(&token));
                admin(app, reqwest::Method::DELETE, &path).await
            }
        };
        assert!(status < 300, "ender {n} ({how}): {status}");
        h.record(n, Seen::Ended { pass: pass.clone() });
        ended_passes.push((n, pass));
    }
    let holder_n = 6;
    let holder = apps[0].join(room).await;
    assert_eq!(holder.state(), "admitted", "{:?}", holder.body);
    let held = holder.body["pass"].as_str().unwrap().to_string();
    record_admitted(&h, holder_n, &holder, &held);
    let holder_token = holder.token();

    // Places: one flushed, one left, one removed; then the stayer.
    let mut ended_places: Vec<(usize, &str, String, String)> = Vec::new();
    let mut n = holder_n + 1;
    for how in ["flush", "leave", "remove"] {
        let app = &apps[n % apps.len()];
        let r = app.join(room).await;
        assert_eq!(r.state(), "queued", "place ender {n}: {:?}", r.body);
        let receipt = r.body["place_receipt"].as_str().unwrap().to_string();
        let token = r.token();
        let status = match how {
            "flush" => {
                let path = format!("/api/admin/rooms/{room}/flush");
                admin(app, reqwest::Method::POST, &path).await
            }
            "leave" => app.release(room, &token).await.status,
            _ => {
                let path = format!("/api/admin/rooms/{room}/visitors/{}", id_of(&token));
                admin(app, reqwest::Method::DELETE, &path).await
            }
        };
        assert!(status < 300, "place ender {n} ({how}): {status}");
        h.record(n, Seen::PlaceEnded);
        ended_places.push((n, how, token, receipt));
        n += 1;
    }
    let stayer_n = n;
    let stayer = apps[1 % apps.len()].join(room).await;
    assert_eq!(stayer.state(), "queued", "{:?}", stayer.body);
    let stayer_token = stayer.token();
    let mut stayer_receipt = stayer.body["place_receipt"].as_str().unwrap().to_string();

    // Every instance's keeper reads the ends at its next look.
    tokio::time::sleep(SETTLE).await;
    fault.await;

    let until = Instant::now() + after;
    let mut stayer_back = false;
    let mut holder_ok = false;
    let mut presented = vec![false; ended_places.len()];
    while Instant::now() < until {
        for app in apps {
            for (n, pass) in &ended_passes {
                h.count_request();
                let r = app.verify(room, pass).await;
                if r.status == 200 {
                    h.record(
                        *n,
                        Seen::Verified {
                            pass: pass.clone(),
                            degraded: r.headers.contains_key("x-anteroom-degraded"),
                        },
                    );
                }
            }
            let r = app.verify(room, &held).await;
            if r.status == 200 && !r.headers.contains_key("x-anteroom-degraded") {
                holder_ok = true;
            }
        }
        // The holder's view of the room: never more active than the capacity.
        let s = answering(&h, apps, |app| app.status(room, &holder_token)).await;
        if let (Some(active), Some(cap)) = (s.body["active"].as_u64(), s.body["capacity"].as_u64())
        {
            h.record(
                holder_n,
                Seen::Active {
                    active,
                    capacity: cap,
                },
            );
        }
        // The stayer polls, and comes back with its receipt if the store forgot it.
        let s = answering(&h, apps, |app| app.status(room, &stayer_token)).await;
        let stayer_at = match s.state() {
            "queued" => {
                if let Some(rc) = s.body["place_receipt"].as_str() {
                    stayer_receipt = rc.to_string();
                }
                s.body["position"].as_u64()
            }
            "not_queued" => {
                let rc = stayer_receipt.clone();
                let r = answering(&h, apps, |app| {
                    app.join_with_receipt(room, &stayer_token, &rc)
                })
                .await;
                (r.status == 200 && r.state() == "queued")
                    .then(|| r.body["position"].as_u64())
                    .flatten()
            }
            _ => None,
        };
        if let Some(p) = stayer_at {
            stayer_back = true;
            // Once the stayer is back, each ended place presents its receipt once.
            for (i, (n, _how, token, receipt)) in ended_places.iter().enumerate() {
                if presented[i] {
                    continue;
                }
                let r =
                    answering(&h, apps, |app| app.join_with_receipt(room, token, receipt)).await;
                if r.status != 200 {
                    continue; // the restore hold (503) or an expired receipt: try again
                }
                presented[i] = true;
                let pos = r.body["position"].as_u64().unwrap_or(u64::MAX);
                if r.state() == "queued" && pos <= p {
                    h.record(
                        *n,
                        Seen::PlaceRevived {
                            position: pos,
                            stayer: p,
                        },
                    );
                }
                // It joined as a newcomer (or took the old place): leave again.
                answering(&h, apps, |app| app.release(room, token)).await;
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    if !holder_ok {
        h.record(
            holder_n,
            Seen::Failed {
                status: 0,
                code: "holder_lost".into(),
            },
        );
    }
    for (i, (n, how, ..)) in ended_places.iter().enumerate() {
        if !presented[i] {
            let code = format!("{how}_receipt_never_answered");
            h.record(*n, Seen::Failed { status: 0, code });
        }
    }
    if !stayer_back {
        h.record(
            stayer_n,
            Seen::Failed {
                status: 0,
                code: "stayer_lost".into(),
            },
        );
    }
    Ended { history: h }
}

/// The first instance's answer that is not a transport failure (a killed instance).
async fn answering<'a, F, Fut>(h: &History, apps: &'a [Endpoint], f: F) -> crate::helpers::Reply
where
    F: Fn(&'a Endpoint) -> Fut,
    Fut: std::future::Future<Output = crate::helpers::Reply>,
{
    let mut last = None;
    for app in apps {
        h.count_request();
        let r = f(app).await;
        if r.status != 0 {
            return r;
        }
        last = Some(r);
    }
    // unwrap: there is at least one instance.
    last.unwrap()
}

/// How long the workload waits between the last end and the fault: past a keeper look
/// (`reaper.keeper_interval_ms`, 1 s) on every instance.
pub const SETTLE: Duration = Duration::from_millis(1_500);

fn record_admitted(h: &History, n: usize, r: &crate::helpers::Reply, pass: &str) {
    h.record(
        n,
        Seen::Admitted {
            serial: super::pass_serial(pass).expect("a pass's jti names its serial"),
            admitted_at_ms: r.body["admitted_at"].as_u64().expect("admitted_at"),
            pass: pass.to_string(),
        },
    );
}

mod scenarios {
    //! The "ended" workload under each fault; each prints one line (`history ended-…`)
    //! that RELIABILITY.md quotes.
    use std::time::Duration;

    use super::{run, ADMIN_TOKEN};
    use crate::helpers::{
        prefix, room, spawn_app, test_settings, RedisSentinel, RedisServer, ServerProcess,
    };
    use crate::history::{check, Endpoint};
    use anteroom::config::Settings;
    use anteroom::room::{RoomConfig, Secret};

    /// How long the ended visitors keep presenting what they hold after the fault: past
    /// the restore hold set below and a few keeper looks.
    const AFTER: Duration = Duration::from_secs(6);

    fn the_room() -> RoomConfig {
        RoomConfig {
            session_ttl_secs: 300,
            heartbeat_timeout_secs: 60,
            ..room("r", 1)
        }
    }

    fn settings(url: String, p: &str) -> Settings {
        let mut s = test_settings(Some(url), p, vec![the_room()]);
        s.admin.enabled = true;
        s.admin.token = Some(Secret::new(ADMIN_TOKEN));
        // Shorter than the default 10 s, so the check after the fault sees the end of it.
        s.store.restore_hold_ms = 2_000;
        s
    }

    fn assert_ended_stays_ended(scenario: &str, e: &super::Ended) {
        let v = check(&e.history);
        let requests = e
            .history
            .requests
            .load(std::sync::atomic::Ordering::Relaxed);
        eprintln!("history ended-{scenario}: {requests} requests: {v}");
        assert!(
            v.violations.is_empty(),
            "{scenario}: {}",
            v.violations.join("\n")
        );
    }

    async fn on_two_instances<F>(scenario: &str, url: String, fault: F)
    where
        F: std::future::Future<Output = ()>,
    {
        let p = prefix();
        let (a, b) = (
            spawn_app(settings(url.clone(), &p)).await,
            spawn_app(settings(url, &p)).await,
        );
        let e = run(&[Endpoint::app(&a), Endpoint::app(&b)], "r", fault, AFTER).await;
        assert_ended_stays_ended(scenario, &e);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn history_ended_stays_ended_through_flushall() {
        let redis = RedisServer::start();
        let url = redis.url();
        on_two_instances("flushall", url, async {
            let _: () = redis::cmd("FLUSHALL").query(&mut redis.conn()).unwrap();
        })
        .await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn history_ended_stays_ended_through_redis_restarted_empty() {
        let mut redis = RedisServer::start();
        let url = redis.url();
        on_two_instances("redis-restarted-empty", url, async {
            redis.kill();
            redis.restart();
        })
        .await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn history_ended_stays_ended_through_a_sentinel_failover() {
        let mut rs = RedisSentinel::start();
        let url = rs.url();
        on_two_instances("sentinel-failover", url, async {
            rs.master.kill();
        })
        .await;
    }

    /// The instance that ended half of the sessions and places is SIGKILLed; the other
    /// answers for everything afterwards.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn history_ended_stays_ended_when_an_instance_is_killed() {
        let redis = RedisServer::start();
        let config = format!(
            "redis_url = \"{}\"\nkey_prefix = \"{}\"\n[[rooms]]\nid = \"r\"\ncapacity = 1\nsession_ttl_secs = 300\nheartbeat_timeout_secs = 60\ntarget_url = \"http://example.test/\"\n",
            redis.url(),
            prefix(),
        );
        let env = [
            ("ANTEROOM_LOG", "warn"),
            ("ANTEROOM_ADMIN__ENABLED", "true"),
            ("ANTEROOM_ADMIN__TOKEN", ADMIN_TOKEN),
        ];
        let mut a = ServerProcess::start_logged(&config, &env);
        let b = ServerProcess::start_logged(&config, &env);
        let apps = [Endpoint::process(&b), Endpoint::process(&a)];
        let e = run(
            &apps,
            "r",
            async {
                a.kill();
            },
            AFTER,
        )
        .await;
        assert_ended_stays_ended("instance-killed", &e);
    }
}
