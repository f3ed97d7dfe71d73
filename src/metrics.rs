//! Prometheus figures served at `/metrics`.
//!
//! Room figures (`anteroom_queue_length`, `anteroom_active`, `anteroom_capacity`, `anteroom_stock`,
//! `anteroom_admissions_total`, `anteroom_reaped_total{kind="abandoned"}`) are read from the
//! store at scrape time, so every instance reports the same room-wide value: aggregate
//! them with `max`, not `sum`. Process figures (`anteroom_rate_limited_total`,
//! `anteroom_store_errors_total`, `anteroom_reaped_total{kind="expired"}`,
//! `anteroom_reaper_passes_total`, `anteroom_ws_sockets`, `anteroom_ws_pushes_total`,
//! `anteroom_hub_store_calls_total`, `anteroom_webhook_deliveries_total`) are this
//! instance's own: aggregate with `sum`. `anteroom_webhook_dead_letters` and
//! `anteroom_webhook_pending` are room figures read from the store (rooms with a webhook).
//! The outflow figures `anteroom_origin_p95_ms` and `anteroom_origin_error_ratio` (the
//! controller's last decision's signals, read from the store: `max`);
//! `anteroom_outflow_decisions_total`, `anteroom_health_reports_total` and
//! `anteroom_no_shows_total` (admissions taken back from no-shows by this instance's
//! pass) are this instance's own (`sum`).
//!
//! For alerts and the dashboard (issue 32; `deploy/prometheus`, `deploy/grafana`):
//! `anteroom_http_responses_total{class}` (HTTP answers by status class, the probes left
//! out: `web::http_metrics`), `anteroom_ready` (1 while `/readyz` would answer 200, set by
//! each scrape and each probe), `anteroom_ws_longest_silence_seconds` (how long the queue
//! socket that has waited longest for a message has waited, against
//! `anteroom_ws_silence_promise_seconds`: `hub::promise`), `anteroom_eta_error_ratio` and
//! `anteroom_eta_judged_total` (the first known estimate a socket was sent, judged at its
//! admission), `anteroom_store_call_seconds{class}` ([`store_latency`]) are this
//! instance's own; `anteroom_wait_seconds` (join to admission, per room: [`waits`]) is the
//! room's, read from the store.

use prometheus::{
    Encoder, Gauge, GaugeVec, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge,
    IntGaugeVec, Opts, Registry, TextEncoder,
};

use crate::store::RoomStats;

pub mod store_latency;
pub mod waits;

pub use crate::store::timed::StoreOp;
pub use store_latency::StoreLatency;

/// The metrics exported as histograms (their series are `<name>_bucket`, `_sum` and
/// `_count`).
pub const HISTOGRAMS: [&str; 3] = [
    "anteroom_wait_seconds",
    "anteroom_eta_error_ratio",
    "anteroom_store_call_seconds",
];

/// The HTTP status classes counted, in order (`1xx` is the WebSocket upgrade).
pub const HTTP_CLASSES: [&str; 5] = ["1xx", "2xx", "3xx", "4xx", "5xx"];

#[derive(Clone)]
pub struct Metrics {
    registry: Registry,
    queue_length: IntGaugeVec,
    active: IntGaugeVec,
    capacity: IntGaugeVec,
    stock: IntGaugeVec,
    admissions: IntCounterVec,
    pub reaped: IntCounterVec,
    pub rate_limited: IntCounterVec,
    pub store_errors: IntCounterVec,
    pub reaper_passes: IntCounterVec,
    /// Times this instance found the store's data gone (its epoch changed).
    pub store_data_loss: IntCounter,
    /// Failovers of the store followed (Redis Sentinel): each may have lost the last writes.
    pub store_failovers: IntCounter,
    /// Declared rooms re-created after they went missing from the store.
    pub rooms_recreated: IntCounterVec,
    /// Decisions taken without the store: `verify_offline`, `fail_open_admission`.
    pub degraded: IntCounterVec,
    /// Requests passed by a `[[bypass]]` rule, by rule name.
    pub bypassed: IntCounterVec,
    /// Enqueue tokens naming a lane the room does not have (queued in the general line).
    pub lane_unknown: IntCounterVec,
    /// Places put back after the store lost its data (this instance's sockets, by its
    /// hub; place receipts, by the join).
    pub places_restored: IntCounterVec,
    /// Place receipts presented after a data loss for places that ended (or that this
    /// instance cannot vouch for): joined at the back instead.
    pub receipts_refused: IntCounterVec,
    /// Queued visitors whose page went to the background and had the place held longer.
    pub hidden_holds: IntCounterVec,
    /// Admissions put back from passes after the store lost its data.
    pub sessions_restored: IntCounterVec,
    /// Statuses answered, by `source`: `store`, or `line` (this instance's view of the
    /// line, `store.local_status`).
    pub status_answers: IntCounterVec,
    ws_sockets: IntGauge,
    ws_pushes: IntCounter,
    hub_store_calls: IntCounter,
    /// Webhook attempts by this instance, by room and outcome (`delivered`, `failed`:
    /// parked for a retry, `dead`: given up).
    pub webhook_deliveries: IntCounterVec,
    /// Webhook deliveries given up, per room (read from the store at scrape time).
    webhook_dead_letters: IntGaugeVec,
    /// Webhook deliveries waiting for a retry, per room (from the store).
    webhook_pending: IntGaugeVec,
    /// The origin's p95 latency (ms) and error share at the outflow controller's last
    /// decision, per room (from the store).
    origin_p95: GaugeVec,
    origin_errors: GaugeVec,
    /// Outflow decisions taken by this instance, by room and `decision` (raise, lower,
    /// hold).
    pub outflow_decisions: IntCounterVec,
    /// Health reports received, by room and `outcome` (accepted, unauthorized, invalid).
    pub health_reports: IntCounterVec,
    /// Admissions taken back from no-shows by this instance, by room
    /// (docs/outflow.md#no-shows).
    pub no_shows: IntCounterVec,
    /// HTTP answers by status class, [`HTTP_CLASSES`]' order (resolved once: a request
    /// costs one atomic add).
    http_responses: [IntCounter; 5],
    /// 1 while `/readyz` would answer 200, 0 otherwise.
    pub ready: IntGauge,
    /// Seconds the queue socket that has waited longest for a message has waited.
    ws_longest_silence: Gauge,
    /// The longest a waiting socket should go without one (a constant of the hub's,
    /// exported so an alert compares the two).
    ws_silence_promise: Gauge,
    /// Per room, the waits from join to admission (from the store's minute buckets).
    pub waits: waits::Waits,
    /// |first known estimate − the wait that followed| ÷ max(the wait, 10 s), per room.
    pub eta_error: HistogramVec,
    /// The same estimates by where the wait fell: `inside` its range, `before` it, `after`.
    pub eta_judged: IntCounterVec,
    /// Store calls' durations by class.
    pub store_latency: StoreLatency,
    /// Open queue sockets per room, every instance's (from their reports in the store).
    room_sockets: IntGaugeVec,
}

/// A socket report older than this is an instance that stopped reporting (as the admin
/// view counts them, `domain::live`; instances report every 3 s).
const SOCKET_REPORT_FRESH_MS: u64 = 15_000;

fn gauge(r: &Registry, name: &str, help: &str, labels: &[&str]) -> IntGaugeVec {
    // unwrap: names and labels are static and valid; registration happens once per registry.
    let g = IntGaugeVec::new(Opts::new(name, help), labels).unwrap();
    r.register(Box::new(g.clone())).unwrap();
    g
}

fn float_gauge(r: &Registry, name: &str, help: &str) -> GaugeVec {
    // unwrap: as above.
    let g = GaugeVec::new(Opts::new(name, help), &["room"]).unwrap();
    r.register(Box::new(g.clone())).unwrap();
    g
}

fn counter(r: &Registry, name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
    // unwrap: as above.
    let c = IntCounterVec::new(Opts::new(name, help), labels).unwrap();
    r.register(Box::new(c.clone())).unwrap();
    c
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let r = Registry::new();
        Self {
            ws_silence_promise: {
                // unwrap: static, valid name; registered once.
                let g = Gauge::new(
                    "anteroom_ws_silence_promise_seconds",
                    "The longest a waiting queue socket should go without a message (docs/websocket.md)",
                )
                .unwrap();
                r.register(Box::new(g.clone())).unwrap();
                g
            },
            queue_length: gauge(&r, "anteroom_queue_length", "Visitors waiting", &["room"]),
            active: gauge(&r, "anteroom_active", "Live admitted sessions", &["room"]),
            capacity: gauge(&r, "anteroom_capacity", "Room capacity", &["room"]),
            stock: gauge(
                &r,
                "anteroom_stock",
                "Units left (-1 = unlimited)",
                &["room"],
            ),
            admissions: counter(&r, "anteroom_admissions_total", "Admissions", &["room"]),
            webhook_deliveries: counter(
                &r,
                "anteroom_webhook_deliveries_total",
                "Webhook delivery attempts by outcome (delivered, failed, dead)",
                &["room", "outcome"],
            ),
            webhook_dead_letters: gauge(
                &r,
                "anteroom_webhook_dead_letters",
                "Webhook deliveries given up after the last attempt",
                &["room"],
            ),
            webhook_pending: gauge(
                &r,
                "anteroom_webhook_pending",
                "Webhook deliveries waiting for a retry",
                &["room"],
            ),
            origin_p95: float_gauge(
                &r,
                "anteroom_origin_p95_ms",
                "The origin's p95 latency to headers at the outflow controller's last decision (ms)",
            ),
            origin_errors: float_gauge(
                &r,
                "anteroom_origin_error_ratio",
                "The origin's share of errors (5xx, timeouts) at the outflow controller's last decision",
            ),
            outflow_decisions: counter(
                &r,
                "anteroom_outflow_decisions_total",
                "Outflow controller decisions by this instance (raise, lower, hold)",
                &["room", "decision"],
            ),
            health_reports: counter(
                &r,
                "anteroom_health_reports_total",
                "Origin health reports received (accepted, unauthorized, invalid)",
                &["room", "outcome"],
            ),
            no_shows: counter(
                &r,
                "anteroom_no_shows_total",
                "Admissions taken back because the pass was not presented within claim_timeout_secs",
                &["room"],
            ),

            reaped: counter(
                &r,
                "anteroom_reaped_total",
                "Visitors dropped for silence (abandoned) and sessions pruned (expired)",
                &["room", "kind"],
            ),
            rate_limited: counter(
                &r,
                "anteroom_rate_limited_total",
                "Requests refused by a limiter",
                &["limiter"],
            ),
            store_errors: counter(
                &r,
                "anteroom_store_errors_total",
                "Store operations that failed",
                &["op"],
            ),
            reaper_passes: counter(
                &r,
                "anteroom_reaper_passes_total",
                "Reaper passes by outcome",
                &["outcome"],
            ),
            store_failovers: {
                // unwrap: static, valid name; registered once.
                let c = IntCounter::new(
                    "anteroom_store_failovers_total",
                    "Failovers of the store followed to a new master (Redis Sentinel)",
                )
                .unwrap();
                r.register(Box::new(c.clone())).unwrap();
                c
            },
            store_data_loss: {
                // unwrap: static, valid name; registered once.
                let c = IntCounter::new(
                    "anteroom_store_data_loss_total",
                    "Times the store was found to have lost its data (epoch changed)",
                )
                .unwrap();
                r.register(Box::new(c.clone())).unwrap();
                c
            },
            degraded: counter(
                &r,
                "anteroom_degraded_total",
                "Decisions taken without the store (it was unreachable)",
                &["what"],
            ),
            bypassed: counter(
                &r,
                "anteroom_bypass_total",
                "Requests passed without a pass by a [[bypass]] rule",
                &["rule"],
            ),
            status_answers: counter(
                &r,
                "anteroom_status_answers_total",
                "Statuses answered, by source: the store, or this instance's view of the line (store.local_status)",
                &["source"],
            ),
            sessions_restored: counter(
                &r,
                "anteroom_sessions_restored_total",
                "Admissions put back from their passes after the store lost its data",
                &["room"],
            ),
            hidden_holds: counter(
                &r,
                "anteroom_hidden_holds_total",
                "Queued visitors whose page went to the background and had the place held for reaper.hidden_grace_secs",
                &["room"],
            ),
            places_restored: counter(
                &r,
                "anteroom_places_restored_total",
                "Places put back after the store lost its data (sockets by the hub, place receipts by the join)",
                &["room"],
            ),
            receipts_refused: counter(
                &r,
                "anteroom_receipts_refused_total",
                "Place receipts presented after a data loss for places that ended, or that this instance cannot vouch for: joined at the back",
                &["room"],
            ),
            lane_unknown: counter(
                &r,
                "anteroom_lane_unknown_total",
                "Enqueue tokens naming a lane the room does not have (queued in the general line)",
                &["room"],
            ),
            rooms_recreated: counter(
                &r,
                "anteroom_rooms_recreated_total",
                "Declared rooms re-created after going missing from the store",
                &["room"],
            ),
            ws_sockets: {
                // unwrap: static, valid name; registered once.
                let g = IntGauge::new(
                    "anteroom_ws_sockets",
                    "Open queue WebSockets on this instance",
                )
                .unwrap();
                r.register(Box::new(g.clone())).unwrap();
                g
            },
            ws_pushes: {
                let c = IntCounter::new(
                    "anteroom_ws_pushes_total",
                    "Messages pushed to queue sockets",
                )
                .unwrap();
                r.register(Box::new(c.clone())).unwrap();
                c
            },
            hub_store_calls: {
                let c = IntCounter::new(
                    "anteroom_hub_store_calls_total",
                    "Store calls made by the WebSocket hub (one per room per 1,000 sockets per tick)",
                )
                .unwrap();
                r.register(Box::new(c.clone())).unwrap();
                c
            },
            http_responses: {
                let v = counter(
                    &r,
                    "anteroom_http_responses_total",
                    "HTTP answers by status class (1xx: WebSocket upgrades); /healthz, /readyz and /metrics are not counted",
                    &["class"],
                );
                HTTP_CLASSES.map(|c| v.with_label_values(&[c]))
            },
            ready: {
                // unwrap: static, valid name; registered once.
                let g = IntGauge::new(
                    "anteroom_ready",
                    "1 while /readyz answers 200 (the store answers and holds every declared room), else 0",
                )
                .unwrap();
                r.register(Box::new(g.clone())).unwrap();
                g
            },
            ws_longest_silence: {
                // unwrap: static, valid name; registered once.
                let g = Gauge::new(
                    "anteroom_ws_longest_silence_seconds",
                    "Seconds since the queue socket that has waited longest was last sent a message (0: no socket waiting)",
                )
                .unwrap();
                r.register(Box::new(g.clone())).unwrap();
                g
            },
            waits: {
                let w = waits::Waits::new();
                // unwrap: a valid, unique descriptor; registered once.
                r.register(Box::new(w.clone())).unwrap();
                w
            },
            eta_error: {
                // unwrap: static, valid name, labels and buckets; registered once.
                let h = HistogramVec::new(
                    HistogramOpts::new(
                        "anteroom_eta_error_ratio",
                        "First known estimate a queue socket was sent, judged at the admission: |estimate - wait| / max(wait, 10 s)",
                    )
                    .buckets(vec![0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1.0, 1.5, 2.0, 5.0]),
                    &["room"],
                )
                .unwrap();
                r.register(Box::new(h.clone())).unwrap();
                h
            },
            eta_judged: counter(
                &r,
                "anteroom_eta_judged_total",
                "First known estimates judged at the admission, by where the wait fell (inside the range shown, before it, after it)",
                &["room", "outcome"],
            ),
            store_latency: StoreLatency::register(&r),
            room_sockets: gauge(
                &r,
                "anteroom_room_sockets",
                "Open queue WebSockets per room, all instances together (their reports in the store)",
                &["room"],
            ),
            registry: r,
        }
    }

    /// Counts an HTTP answer of status `status`.
    pub fn http_response(&self, status: u16) {
        if let Some(c) = (status / 100)
            .checked_sub(1)
            .and_then(|i| self.http_responses.get(i as usize))
        {
            c.inc();
        }
    }

    /// Records how long the queue socket that has waited longest has waited (None: no
    /// socket waits for a message), and the hub's promise.
    pub fn observe_silence(
        &self,
        longest: Option<std::time::Duration>,
        promise: std::time::Duration,
    ) {
        self.ws_longest_silence
            .set(longest.map_or(0.0, |d| d.as_secs_f64()));
        self.ws_silence_promise.set(promise.as_secs_f64());
    }

    /// Records the open sockets per room from every instance's report (read from the
    /// store at scrape time); `rooms` are the rooms listed, each 0 without a fresh report.
    pub fn observe_room_sockets(&self, rooms: &[String], reports: &[crate::store::SocketCount]) {
        for room in rooms {
            let n: u64 = reports
                .iter()
                .filter(|s| s.room == *room && s.age_ms <= SOCKET_REPORT_FRESH_MS)
                .map(|s| s.count)
                .sum();
            self.room_sockets.with_label_values(&[room]).set(n as i64);
        }
    }

    /// Records one room's waits (minutes read from the store at scrape time).
    pub fn observe_waits(&self, room: &str, minutes: &[crate::store::MinuteStats]) {
        self.waits.observe(room, minutes);
    }

    /// Judges the first known estimate a socket was sent (`shown`: seconds, low, high)
    /// against the wait that followed it (`waited`).
    pub fn judge_eta(&self, room: &str, shown: (u64, u64, u64), waited: std::time::Duration) {
        let (seconds, low, high) = shown;
        let w = waited.as_secs_f64();
        let error = (seconds as f64 - w).abs() / w.max(10.0);
        self.eta_error.with_label_values(&[room]).observe(error);
        let outcome = if w < low as f64 {
            "before"
        } else if w > high as f64 {
            "after"
        } else {
            "inside"
        };
        self.eta_judged.with_label_values(&[room, outcome]).inc();
    }

    /// Records the WebSocket hub's counters (this instance).
    pub fn observe_hub(&self, sockets: u64, pushes: u64, store_calls: u64) {
        self.ws_sockets.set(sockets as i64);
        let follow = |c: &IntCounter, total: u64| {
            let cur = c.get();
            if total > cur {
                c.inc_by(total - cur);
            }
        };
        follow(&self.ws_pushes, pushes);
        follow(&self.hub_store_calls, store_calls);
    }

    /// Sets a store-wide counter to `total` (it only moves forward unless the room was
    /// reset, in which case the series restarts).
    fn follow(vec: &IntCounterVec, labels: &[&str], total: u64) {
        let c = vec.with_label_values(labels);
        let cur = c.get();
        if total >= cur {
            c.inc_by(total - cur);
        } else {
            let _ = vec.remove_label_values(labels);
            vec.with_label_values(labels).inc_by(total);
        }
    }

    /// Records one room's figures, read from the store at scrape time.
    pub fn observe_room(&self, room: &str, s: &RoomStats) {
        self.queue_length
            .with_label_values(&[room])
            .set(s.queue_length as i64);
        self.active.with_label_values(&[room]).set(s.active as i64);
        self.capacity
            .with_label_values(&[room])
            .set(s.capacity as i64);
        self.stock
            .with_label_values(&[room])
            .set(s.stock.map(|x| x as i64).unwrap_or(-1));
        Self::follow(&self.admissions, &[room], s.admitted_total);
        Self::follow(&self.reaped, &[room, "abandoned"], s.reaped_total);
    }

    /// Records one room's webhook figures, read from the store at scrape time.
    pub fn observe_webhooks(&self, room: &str, c: &crate::store::WebhookCounts) {
        self.webhook_dead_letters
            .with_label_values(&[room])
            .set(c.dead_letters as i64);
        self.webhook_pending
            .with_label_values(&[room])
            .set(c.pending as i64);
    }

    /// Records the outflow controller's last decision's signals (read from the store).
    pub fn observe_origin(&self, room: &str, p95_ms: Option<f64>, error_rate: Option<f64>) {
        for (g, v) in [
            (&self.origin_p95, p95_ms),
            (&self.origin_errors, error_rate),
        ] {
            match v {
                Some(v) => g.with_label_values(&[room]).set(v),
                None => {
                    let _ = g.remove_label_values(&[room]);
                }
            }
        }
    }

    /// Forgets a deleted room's series.
    pub fn forget_room(&self, room: &str) {
        for v in [
            &self.queue_length,
            &self.active,
            &self.capacity,
            &self.stock,
            &self.webhook_dead_letters,
            &self.webhook_pending,
            &self.room_sockets,
        ] {
            let _ = v.remove_label_values(&[room]);
        }
        let _ = self.admissions.remove_label_values(&[room]);
        let _ = self.reaped.remove_label_values(&[room, "abandoned"]);
        let _ = self.origin_p95.remove_label_values(&[room]);
        let _ = self.origin_errors.remove_label_values(&[room]);
        self.waits.forget(room);
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut buf = Vec::new();
        // unwrap: encoding to a Vec cannot fail.
        TextEncoder::new()
            .encode(&self.registry.gather(), &mut buf)
            .unwrap();
        String::from_utf8(buf).unwrap_or_default()
    }
}
