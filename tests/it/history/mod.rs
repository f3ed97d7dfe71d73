//! The history checker (issue 16, "Prove it"): polling visitors on two instances, each
//! recording what it did and what it was told, while a fault is done to the store or an
//! instance; then the whole history is checked against the waiting room's promises:
//!
//! 1. **capacity**: at no store time were more than `capacity` visitors admitted;
//! 2. **once**: no visitor was admitted twice for its one join (one serial each);
//! 3. **order**: visitors were let in in the order they joined (their tickets' order:
//!    they joined one after another, before the fault);
//! 4. **no lost place**: every visitor was let in by the end (they all stayed);
//! 5. **passes**: every pass that verified (offline or not) was one the room issued;
//! 6. **ended stays ended** (issue 28): no pass verified after its session was ended on
//!    purpose (released, revoked, removed), no place ended on purpose (left, removed,
//!    flushed, let in) came back ahead of a visitor who stayed, the room never reported
//!    more active sessions than its capacity, and nothing live was lost meanwhile (the
//!    workload in `ended.rs`).
//!
//! The checker is sound, never strict past what was observed: a session counts from the
//! store time it began (`admitted_at`) until its visitor *sent* its first release
//! request, the earliest the store can have ended it, so a reported overrun is real.
//! [`check`] is unit-tested on hand-made histories that break each rule; the scenarios
//! that drive it are in `scenarios.rs`.

mod ended;
mod scenarios;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine as _;

use crate::helpers::{Reply, ServerProcess, TestApp};
use anteroom::clock::wall_ms;

/// What one visitor observed (or did), with the wall time it happened (ms).
#[derive(Clone, Debug, PartialEq)]
pub enum Seen {
    /// Told it is admitted: the serial from its pass's `jti`, the store time it was
    /// admitted, the pass.
    Admitted {
        serial: u64,
        admitted_at_ms: u64,
        pass: String,
    },
    /// A pass verified with 200 (`degraded`: checked offline).
    Verified { pass: String, degraded: bool },
    /// The first request of its release left (the session ends no earlier).
    ReleaseSent,
    /// A request failed (`status`, `code`).
    Failed { status: u16, code: String },
    /// Status said the store no longer has it; it joined again with its place receipt.
    Rejoined,
    /// Its session ended on purpose, acknowledged (release, revoke, admin remove).
    Ended { pass: String },
    /// Its place ended on purpose, acknowledged (left, removed, flushed).
    PlaceEnded,
    /// After its place ended, its receipt put it at `position`, not behind the visitor
    /// who stayed (at `stayer`).
    PlaceRevived { position: u64, stayer: u64 },
    /// The room's figures as a visitor was told them.
    Active { active: u64, capacity: u64 },
}

/// One recorded event.
#[derive(Clone, Debug)]
pub struct Event {
    pub visitor: usize,
    pub at_ms: u64,
    pub seen: Seen,
}

/// Everything the visitors recorded, and what they were at the start.
#[derive(Default)]
pub struct History {
    events: Mutex<Vec<Event>>,
    /// Visitors (by join order) that walked in at their join; the rest queued, in order.
    pub walked_in: HashSet<usize>,
    pub visitors: usize,
    pub capacity: u64,
    /// Requests the visitors sent (the figure each scenario prints).
    pub requests: std::sync::atomic::AtomicU64,
}

impl History {
    pub fn record(&self, visitor: usize, seen: Seen) {
        // unwrap: never poisoned (no panics while held).
        self.events.lock().unwrap().push(Event {
            visitor,
            at_ms: wall_ms(),
            seen,
        });
    }

    pub fn events(&self) -> Vec<Event> {
        // unwrap: never poisoned (no panics while held).
        self.events.lock().unwrap().clone()
    }

    fn count_request(&self) {
        self.requests
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// What the checker found: the figures RELIABILITY.md quotes, and every broken rule.
#[derive(Debug, Default)]
pub struct Verdict {
    pub admitted: usize,
    pub places_lost: usize,
    pub double_admissions: usize,
    pub capacity_overruns: usize,
    pub out_of_order: usize,
    pub unissued_passes: usize,
    /// Rule 6: passes that verified after their session ended, places that came back
    /// after they ended, and reported overruns of the capacity.
    pub revived: usize,
    pub failed_requests: usize,
    /// Failed requests by `status code`.
    pub failures: BTreeMap<String, usize>,
    pub rejoins: usize,
    pub offline_verifications: usize,
    pub violations: Vec<String>,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "admitted {}, places lost {}, double admissions {}, capacity overruns {}, out of order {}, unissued passes {}, revived {}; failed requests {} {:?}, receipt rejoins {}, offline verifications {}",
            self.admitted,
            self.places_lost,
            self.double_admissions,
            self.capacity_overruns,
            self.out_of_order,
            self.unissued_passes,
            self.revived,
            self.failed_requests,
            self.failures,
            self.rejoins,
            self.offline_verifications
        )
    }
}

/// Checks a history against the five rules (module doc).
pub fn check(h: &History) -> Verdict {
    let events = h.events();
    let mut out = Verdict::default();
    // Per visitor: its serials, the first admission (serial, store time), its release.
    let mut serials: BTreeMap<usize, HashSet<u64>> = BTreeMap::new();
    let mut first: BTreeMap<usize, (u64, u64)> = BTreeMap::new();
    let mut released: HashMap<usize, u64> = HashMap::new();
    let mut issued: HashSet<&str> = HashSet::new();
    for e in &events {
        match &e.seen {
            Seen::Admitted {
                serial,
                admitted_at_ms,
                pass,
            } => {
                serials.entry(e.visitor).or_default().insert(*serial);
                first.entry(e.visitor).or_insert((*serial, *admitted_at_ms));
                issued.insert(pass);
            }
            Seen::ReleaseSent => {
                released.entry(e.visitor).or_insert(e.at_ms);
            }
            Seen::Failed { status, code } => {
                out.failed_requests += 1;
                *out.failures.entry(format!("{status} {code}")).or_default() += 1;
            }
            Seen::Rejoined => out.rejoins += 1,
            Seen::Verified { degraded, .. } => out.offline_verifications += *degraded as usize,
            Seen::Ended { .. } | Seen::PlaceEnded => {}
            Seen::PlaceRevived { position, stayer } => {
                out.revived += 1;
                out.violations.push(format!(
                    "visitor {} came back at place {position} with the receipt of a place that ended, ahead of the visitor who stayed (at {stayer})",
                    e.visitor
                ));
            }
            Seen::Active { active, capacity } => {
                if active > capacity {
                    out.revived += 1;
                    out.violations.push(format!(
                        "visitor {} was told {active} active of capacity {capacity}",
                        e.visitor
                    ));
                }
            }
        }
        if let Seen::Failed { code, .. } = &e.seen {
            if code == "holder_lost" || code == "stayer_lost" || code.ends_with("_never_answered") {
                out.violations.push(format!(
                    "visitor {}: {code} (a live session or place did not survive)",
                    e.visitor
                ));
            }
        }
    }
    // 6. ended stays ended: no pass verified after its session ended.
    let mut ended_at: HashMap<&str, u64> = HashMap::new();
    for e in &events {
        if let Seen::Ended { pass } = &e.seen {
            ended_at.entry(pass.as_str()).or_insert(e.at_ms);
        }
    }
    for e in &events {
        if let Seen::Verified { pass, degraded } = &e.seen {
            if ended_at.get(pass.as_str()).is_some_and(|at| e.at_ms > *at) {
                out.revived += 1;
                out.violations.push(format!(
                    "visitor {}'s pass verified{} after its session ended",
                    e.visitor,
                    if *degraded { " (offline)" } else { "" }
                ));
            }
        }
    }
    out.admitted = first.len();
    // 2. once.
    for (v, s) in &serials {
        if s.len() > 1 {
            out.double_admissions += 1;
            out.violations.push(format!(
                "visitor {v} admitted {} times: serials {s:?}",
                s.len()
            ));
        }
    }
    // 1. capacity, at each admission's store time.
    let sessions: Vec<(usize, u64, u64)> = first
        .iter()
        .map(|(v, (_, at))| (*v, *at, released.get(v).copied().unwrap_or(u64::MAX)))
        .collect();
    for (v, at, _) in &sessions {
        let live: Vec<usize> = sessions
            .iter()
            .filter(|(_, start, end)| start <= at && at < end)
            .map(|(w, ..)| *w)
            .collect();
        if live.len() as u64 > h.capacity {
            out.capacity_overruns += 1;
            out.violations.push(format!(
                "{} admitted at once (capacity {}) when visitor {v} was let in at {at}: {live:?}",
                live.len(),
                h.capacity
            ));
        }
    }
    // 3. order: the queued visitors' first serials rise with their join order.
    let mut last: Option<(usize, u64)> = None;
    for v in (0..h.visitors).filter(|v| !h.walked_in.contains(v)) {
        let Some((serial, _)) = first.get(&v) else {
            continue;
        };
        if let Some((w, s)) = last {
            if *serial < s {
                out.out_of_order += 1;
                out.violations.push(format!(
                    "visitor {v} (serial {serial}) let in before visitor {w} (serial {s}), who joined first"
                ));
            }
        }
        last = Some((v, *serial));
    }
    // 4. no lost place.
    for v in 0..h.visitors {
        if !first.contains_key(&v) {
            out.places_lost += 1;
            out.violations
                .push(format!("visitor {v} stayed but was never let in"));
        }
    }
    // 5. every verified pass was issued.
    for e in &events {
        if let Seen::Verified { pass, .. } = &e.seen {
            if !issued.contains(pass.as_str()) {
                out.unissued_passes += 1;
                out.violations.push(format!(
                    "visitor {} verified a pass the room never issued",
                    e.visitor
                ));
            }
        }
    }
    out
}

/// The serial in a pass's `jti` (`<room>.<serial>`).
fn pass_serial(pass: &str) -> Option<u64> {
    let payload = pass.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .ok()?;
    let claims: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    claims["jti"].as_str()?.rsplit('.').next()?.parse().ok()
}

/// An instance the visitors talk to: an in-process app or a real process (which may be
/// killed: a request it cannot answer is a failure with status 0).
pub struct Endpoint {
    base: String,
    client: reqwest::Client,
}

impl Endpoint {
    pub fn app(app: &TestApp) -> Self {
        Self::at(&app.address)
    }

    pub fn process(p: &ServerProcess) -> Self {
        Self::at(&p.url(""))
    }

    fn at(base: &str) -> Self {
        Self {
            base: base.to_string(),
            client: reqwest::Client::builder()
                .timeout(Duration::from_secs(10))
                .build()
                .unwrap(),
        }
    }

    async fn send(&self, req: reqwest::RequestBuilder) -> Reply {
        match req.send().await {
            Ok(r) => Reply::from(r).await,
            Err(e) => Reply {
                status: 0,
                headers: Default::default(),
                body: serde_json::json!({"error": {"code": if e.is_timeout() { "timeout" } else { "unreachable" }}}),
            },
        }
    }

    fn url(&self, room: &str, op: &str) -> String {
        format!("{}/api/rooms/{room}/{op}", self.base)
    }

    async fn join(&self, room: &str) -> Reply {
        self.send(self.client.post(self.url(room, "join"))).await
    }

    async fn join_with_receipt(&self, room: &str, token: &str, receipt: &str) -> Reply {
        self.send(
            self.client
                .post(self.url(room, "join"))
                .bearer_auth(token)
                .json(&serde_json::json!({ "place_receipt": receipt })),
        )
        .await
    }

    async fn status(&self, room: &str, token: &str) -> Reply {
        self.send(self.client.get(self.url(room, "status")).bearer_auth(token))
            .await
    }

    async fn verify(&self, room: &str, pass: &str) -> Reply {
        self.send(self.client.get(self.url(room, "verify")).bearer_auth(pass))
            .await
    }

    async fn release(&self, room: &str, token: &str) -> Reply {
        self.send(
            self.client
                .post(self.url(room, "release"))
                .bearer_auth(token),
        )
        .await
    }
}

/// How the workload runs.
pub struct Workload {
    pub room: &'static str,
    pub visitors: usize,
    pub capacity: u64,
    /// How long an admitted visitor stays before releasing (ms; spread over the range by
    /// its number).
    pub stay_ms: (u64, u64),
    /// Between two status polls of one visitor.
    pub poll: Duration,
    /// The whole run must end within this.
    pub deadline: Duration,
}

impl Default for Workload {
    fn default() -> Self {
        Self {
            room: "r",
            visitors: 30,
            capacity: 3,
            stay_ms: (200, 600),
            poll: Duration::from_millis(150),
            deadline: Duration::from_secs(90),
        }
    }
}

/// One visitor's state as it goes.
struct Visitor {
    n: usize,
    token: String,
    receipt: Option<String>,
    /// The instance it talks to now (moves to the next after a failure).
    at: usize,
}

/// Runs the workload on `apps` while `fault` runs beside it (started once every visitor
/// has joined), and returns the history, checked by the caller. Every visitor joins in
/// turn (so their tickets are in their numbers' order), then polls its status, keeping
/// its place receipt and joining again with it when the store forgot it, moving to the
/// other instance after a failed request; once let in it verifies its pass, stays, and
/// releases.
pub async fn run<F>(apps: &[Endpoint], w: &Workload, fault: F) -> (History, Duration)
where
    F: std::future::Future<Output = ()>,
{
    let mut h = History {
        visitors: w.visitors,
        capacity: w.capacity,
        ..History::default()
    };
    let mut visitors = Vec::new();
    for n in 0..w.visitors {
        let app = &apps[n % apps.len()];
        let r = app.join(w.room).await;
        assert_eq!(r.status, 200, "visitor {n} could not join: {:?}", r.body);
        if r.state() == "admitted" {
            h.walked_in.insert(n);
        } else {
            assert_eq!(r.state(), "queued", "{:?}", r.body);
        }
        visitors.push(Visitor {
            n,
            token: r.token(),
            receipt: r.body["place_receipt"].as_str().map(str::to_string),
            at: n % apps.len(),
        });
    }
    let h = h;
    let started = Instant::now();
    let until = started + w.deadline;
    let drive =
        futures_util::future::join_all(visitors.into_iter().map(|v| visit(apps, w, &h, v, until)));
    let ((), ()) = futures_util::join!(
        async {
            drive.await;
        },
        fault
    );
    (h, started.elapsed())
}

async fn visit(apps: &[Endpoint], w: &Workload, h: &History, mut v: Visitor, until: Instant) {
    let stay = w.stay_ms.0 + (v.n as u64 * 7919) % (w.stay_ms.1 - w.stay_ms.0 + 1);
    while Instant::now() < until {
        let app = &apps[v.at];
        h.count_request();
        let r = app.status(w.room, &v.token).await;
        if r.status != 200 {
            failed(h, &mut v, apps.len(), &r);
            tokio::time::sleep(w.poll).await;
            continue;
        }
        match r.state() {
            "admitted" => {
                admitted(apps, w, h, &mut v, &r, stay, until).await;
                return;
            }
            "not_queued" => {
                // The store forgot the place: back with the receipt.
                h.record(v.n, Seen::Rejoined);
                let Some(receipt) = v.receipt.clone() else {
                    return;
                };
                h.count_request();
                let r = app.join_with_receipt(w.room, &v.token, &receipt).await;
                if r.status != 200 {
                    failed(h, &mut v, apps.len(), &r);
                } else if r.state() == "admitted" {
                    admitted(apps, w, h, &mut v, &r, stay, until).await;
                    return;
                }
            }
            _ => {
                if let Some(rc) = r.body["place_receipt"].as_str() {
                    v.receipt = Some(rc.to_string());
                }
            }
        }
        tokio::time::sleep(w.poll).await;
    }
}

fn failed(h: &History, v: &mut Visitor, instances: usize, r: &Reply) {
    h.record(
        v.n,
        Seen::Failed {
            status: r.status,
            code: r.error_code().to_string(),
        },
    );
    v.at = (v.at + 1) % instances;
}

/// Admitted: record it, verify the pass (on the next instance), stay, release.
async fn admitted(
    apps: &[Endpoint],
    w: &Workload,
    h: &History,
    v: &mut Visitor,
    r: &Reply,
    stay: u64,
    until: Instant,
) {
    let pass = r.body["pass"]
        .as_str()
        .expect("an admitted view carries a pass");
    h.record(
        v.n,
        Seen::Admitted {
            serial: pass_serial(pass).expect("a pass's jti names its serial"),
            admitted_at_ms: r.body["admitted_at"].as_u64().expect("admitted_at"),
            pass: pass.to_string(),
        },
    );
    let checker = &apps[(v.at + 1) % apps.len()];
    h.count_request();
    let ok = checker.verify(w.room, pass).await;
    if ok.status == 200 {
        h.record(
            v.n,
            Seen::Verified {
                pass: pass.to_string(),
                degraded: ok.headers.contains_key("x-anteroom-degraded"),
            },
        );
    }
    tokio::time::sleep(Duration::from_millis(stay)).await;
    h.record(v.n, Seen::ReleaseSent);
    while Instant::now() < until {
        h.count_request();
        let r = apps[v.at].release(w.room, &v.token).await;
        if r.status < 300 {
            return;
        }
        failed(h, v, apps.len(), &r);
        tokio::time::sleep(w.poll).await;
    }
}

#[cfg(test)]
mod tests {
    //! The checker catches each broken rule (and passes a clean history).
    use super::*;

    fn history(capacity: u64, visitors: usize, walked_in: &[usize]) -> History {
        History {
            capacity,
            visitors,
            walked_in: walked_in.iter().copied().collect(),
            ..History::default()
        }
    }

    fn push(h: &History, visitor: usize, at_ms: u64, seen: Seen) {
        h.events.lock().unwrap().push(Event {
            visitor,
            at_ms,
            seen,
        });
    }

    fn admitted(h: &History, v: usize, serial: u64, at: u64) {
        push(
            h,
            v,
            at,
            Seen::Admitted {
                serial,
                admitted_at_ms: at,
                pass: format!("pass-{v}-{serial}"),
            },
        );
    }

    /// Capacity 1: visitor 0 walks in, 1 and 2 queue; each releases before the next.
    fn clean() -> History {
        let h = history(1, 3, &[0]);
        admitted(&h, 0, 1, 100);
        push(&h, 0, 200, Seen::ReleaseSent);
        admitted(&h, 1, 2, 210);
        push(
            &h,
            1,
            220,
            Seen::Verified {
                pass: "pass-1-2".into(),
                degraded: true,
            },
        );
        push(&h, 1, 300, Seen::ReleaseSent);
        admitted(&h, 2, 3, 300);
        h
    }

    #[test]
    fn a_clean_history_passes() {
        let v = check(&clean());
        assert!(v.violations.is_empty(), "{:?}", v.violations);
        assert_eq!((v.admitted, v.offline_verifications), (3, 1));
    }

    #[test]
    fn an_admission_over_capacity_is_caught() {
        let h = clean();
        admitted(&h, 3, 4, 150); // while 0 still held the one slot
        push(&h, 3, 160, Seen::ReleaseSent);
        let v = check(&h);
        assert_eq!(v.capacity_overruns, 1, "{:?}", v.violations);
    }

    #[test]
    fn a_second_admission_for_one_join_is_caught() {
        let h = clean();
        admitted(&h, 2, 9, 400);
        assert_eq!(check(&h).double_admissions, 1);
    }

    #[test]
    fn a_visitor_let_in_before_one_who_joined_earlier_is_caught() {
        let h = history(1, 3, &[0]);
        admitted(&h, 0, 1, 100);
        push(&h, 0, 200, Seen::ReleaseSent);
        admitted(&h, 2, 2, 210);
        push(&h, 2, 300, Seen::ReleaseSent);
        admitted(&h, 1, 3, 310);
        assert_eq!(check(&h).out_of_order, 1);
    }

    #[test]
    fn a_visitor_never_let_in_is_a_lost_place() {
        let h = history(1, 4, &[0]);
        admitted(&h, 0, 1, 100);
        assert_eq!(check(&h).places_lost, 3);
    }

    #[test]
    fn a_verified_pass_nobody_was_given_is_caught() {
        let h = clean();
        push(
            &h,
            2,
            500,
            Seen::Verified {
                pass: "forged".into(),
                degraded: true,
            },
        );
        assert_eq!(check(&h).unissued_passes, 1);
    }

    #[test]
    fn a_pass_verified_after_its_session_ended_is_caught() {
        let h = clean();
        push(
            &h,
            0,
            250,
            Seen::Ended {
                pass: "pass-0-1".into(),
            },
        );
        assert!(check(&h).violations.is_empty(), "verified before it ended");
        push(
            &h,
            0,
            900,
            Seen::Verified {
                pass: "pass-0-1".into(),
                degraded: false,
            },
        );
        let v = check(&h);
        assert_eq!(v.revived, 1, "{:?}", v.violations);
    }

    #[test]
    fn a_revived_place_and_an_overrun_reported_are_caught() {
        let h = clean();
        push(
            &h,
            5,
            10,
            Seen::Active {
                active: 1,
                capacity: 1,
            },
        );
        assert!(check(&h).violations.is_empty());
        push(
            &h,
            5,
            20,
            Seen::Active {
                active: 4,
                capacity: 1,
            },
        );
        push(
            &h,
            6,
            30,
            Seen::PlaceRevived {
                position: 1,
                stayer: 2,
            },
        );
        assert_eq!(check(&h).revived, 2);
    }

    #[test]
    fn the_serial_comes_from_the_pass() {
        let claims = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(br#"{"jti":"my.room.42","sub":"x"}"#);
        assert_eq!(pass_serial(&format!("h.{claims}.s")), Some(42));
        assert_eq!(pass_serial("not a pass"), None);
    }
}
