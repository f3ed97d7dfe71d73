//! The figures the dashboard shows, computed from the store's [`RoomReport`]:
//!
//! - admissions and reaped visitors per minute: a sliding 60 s window estimated from
//!   the current and previous minute buckets (`prev × (1 − elapsed) + current`);
//! - median and p90 wait of the admissions in the last 10 minutes, from the per-minute
//!   wait histograms, interpolated linearly inside a bucket;
//! - ETA for the last in line: the visitor-facing ETA (with its range) at position =
//!   queue length, and the room's measured turnover (`domain::eta`);
//! - a 30-minute series (queue length, admissions, reaped per minute).

use std::collections::HashMap;

use serde::Serialize;

use crate::domain::forecast::Forecast;
use crate::room::RoomConfig;
use crate::store::{MinuteStats, RoomReport, SocketCount, WAIT_BOUNDS_MS};

/// Minutes of history the dashboard charts.
pub const SERIES_MINUTES: u32 = 30;
/// Minutes the wait percentiles cover.
pub const WAIT_WINDOW_MINUTES: u64 = 10;

#[derive(Clone, Debug, Serialize, PartialEq, utoipa::ToSchema)]
pub struct SeriesPoint {
    pub minute: u64,
    pub queue_length: Option<u64>,
    pub admissions: u64,
    pub reaped: u64,
}

#[derive(Clone, Debug, Serialize, PartialEq, utoipa::ToSchema)]
pub struct InstanceSockets {
    pub instance: String,
    pub sockets: u64,
}

/// One room as the dashboard shows it.
#[derive(Clone, Debug, Serialize, PartialEq, utoipa::ToSchema)]
pub struct RoomLive {
    pub id: String,
    pub name: String,
    /// `open`, `paused` (also while `queue_all`), `rejected`, `closed`, `sold_out`, or a
    /// scheduled event's `scheduled` or `prequeue` (an ended event: `closed`).
    pub state: &'static str,
    pub queue_length: u64,
    pub active: u64,
    pub capacity: u64,
    pub max_admissions_per_minute: u64,
    pub session_ttl_secs: u64,
    pub heartbeat_timeout_secs: u64,
    pub target_url: String,
    pub stock: Option<u64>,
    pub admissions_per_minute: u64,
    pub reaped_per_minute: u64,
    pub wait_p50_seconds: Option<u64>,
    pub wait_p90_seconds: Option<u64>,
    pub eta_last_seconds: u64,
    pub eta_last_low_seconds: u64,
    pub eta_last_high_seconds: u64,
    /// `false`: no basis for an estimate yet (the figures are the worst case), or paused.
    pub eta_last_known: bool,
    /// Why the estimates last moved (an `eta_reason` code), if within the last minute.
    pub eta_reason: Option<&'static str>,
    /// Slots freeing per minute, as the ETA model sees the room now.
    pub turnover_per_minute: f64,
    /// Mean session length observed (Kaplan–Meier over recent session ends), seconds.
    pub mean_session_seconds: Option<f64>,
    pub admitted_total: u64,
    pub reaped_total: u64,
    pub sockets: Vec<InstanceSockets>,
    pub series: Vec<SeriesPoint>,
    /// Priority lanes (the general line first); empty without lanes.
    pub lanes: Vec<LaneLive>,
    /// The signed webhook's figures (retries pending, dead letters); `null` when the
    /// room has no webhook and never gave a delivery up.
    pub webhook: Option<crate::store::WebhookCounts>,
}

/// One priority lane as the dashboard shows it.
#[derive(Clone, Debug, Serialize, PartialEq, utoipa::ToSchema)]
pub struct LaneLive {
    /// `""`: the general line (visitors without a lane).
    pub lane: String,
    /// Its configured part of the admissions (the general line: the rest).
    pub share: f64,
    pub waiting: u64,
    /// Let in from the lane since the room had lanes.
    pub admitted: u64,
}

/// `prev × (1 − elapsed) + current`, the usual sliding-window estimate.
fn per_minute(
    minutes: &HashMap<u64, &MinuteStats>,
    now_ms: u64,
    f: fn(&MinuteStats) -> u64,
) -> u64 {
    let cur = now_ms / 60_000;
    let elapsed = (now_ms % 60_000) as f64 / 60_000.0;
    let c = minutes.get(&cur).map(|m| f(m)).unwrap_or(0) as f64;
    let p = minutes
        .get(&cur.saturating_sub(1))
        .map(|m| f(m))
        .unwrap_or(0) as f64;
    (p * (1.0 - elapsed) + c).round() as u64
}

/// The `q`-quantile (0..1) of a wait histogram, in seconds.
pub fn wait_quantile(hist: &[u64; 15], q: f64) -> Option<u64> {
    let total: u64 = hist.iter().sum();
    if total == 0 {
        return None;
    }
    let rank = q * total as f64;
    let mut seen = 0.0;
    for (i, &n) in hist.iter().enumerate() {
        if n == 0 {
            continue;
        }
        let lo = if i == 0 { 0 } else { WAIT_BOUNDS_MS[i - 1] } as f64;
        let hi = WAIT_BOUNDS_MS
            .get(i)
            .copied()
            .unwrap_or(WAIT_BOUNDS_MS[13] * 2) as f64;
        if seen + n as f64 >= rank {
            let within = (rank - seen) / n as f64;
            return Some(((lo + (hi - lo) * within) / 1000.0).round() as u64);
        }
        seen += n as f64;
    }
    None
}

/// Builds a room's live figures.
pub fn room_live(
    cfg: &RoomConfig,
    r: &RoomReport,
    sockets: &[SocketCount],
    forecast: Option<&Forecast>,
) -> RoomLive {
    let now = r.view.now_ms;
    let by_minute: HashMap<u64, &MinuteStats> = r.minutes.iter().map(|m| (m.minute, m)).collect();
    let current = now / 60_000;
    let mut hist = [0u64; 15];
    for m in r
        .minutes
        .iter()
        .filter(|m| m.minute + WAIT_WINDOW_MINUTES > current)
    {
        for (h, n) in hist.iter_mut().zip(m.waits.iter()) {
            *h += n;
        }
    }
    let series = (current + 1 - u64::from(SERIES_MINUTES)..=current)
        .map(|minute| {
            let m = by_minute.get(&minute);
            SeriesPoint {
                minute,
                queue_length: m.and_then(|m| m.queue_length),
                admissions: m.map(|m| m.admissions).unwrap_or(0),
                reaped: m.map(|m| m.reaped).unwrap_or(0),
            }
        })
        .collect();
    let eta = forecast
        .map(|f| f.schedule.at(r.view.queue_length, now, r.view.admits))
        .unwrap_or_default();
    let round1 = |x: f64| (x * 10.0).round() / 10.0;
    RoomLive {
        id: cfg.id.clone(),
        name: cfg.display_name().to_string(),
        state: r.view.room_state().as_str(),
        queue_length: r.view.queue_length,
        active: r.view.active,
        capacity: r.view.capacity,
        max_admissions_per_minute: cfg.max_admissions_per_minute,
        session_ttl_secs: cfg.session_ttl_secs,
        heartbeat_timeout_secs: cfg.heartbeat_timeout_secs,
        target_url: cfg.target_url.clone(),
        stock: r.view.stock,
        admissions_per_minute: per_minute(&by_minute, now, |m| m.admissions),
        reaped_per_minute: per_minute(&by_minute, now, |m| m.reaped),
        wait_p50_seconds: wait_quantile(&hist, 0.5),
        wait_p90_seconds: wait_quantile(&hist, 0.9),
        eta_last_seconds: eta.seconds,
        eta_last_low_seconds: eta.low,
        eta_last_high_seconds: eta.high,
        eta_last_known: eta.known,
        eta_reason: forecast.and_then(|f| f.reason),
        turnover_per_minute: forecast
            .map(|f| round1(f.schedule.turnover_per_minute))
            .unwrap_or(0.0),
        mean_session_seconds: forecast
            .and_then(|f| f.schedule.mean_session_ms)
            .map(|m| round1(m / 1000.0)),
        admitted_total: r.admitted_total,
        reaped_total: r.reaped_total,
        sockets: sockets
            .iter()
            .filter(|s| s.room == cfg.id && s.age_ms <= 15_000)
            .map(|s| InstanceSockets {
                instance: s.instance.clone(),
                sockets: s.count,
            })
            .collect(),
        series,
        lanes: r
            .lanes
            .iter()
            .map(|l| LaneLive {
                lane: l.lane.clone(),
                share: if l.lane.is_empty() {
                    round2(1.0 - cfg.lanes.iter().map(|c| c.share).sum::<f64>())
                } else {
                    cfg.lanes
                        .iter()
                        .find(|c| c.name == l.lane)
                        .map_or(0.0, |c| c.share)
                },
                waiting: l.waiting,
                admitted: l.admitted,
            })
            .collect(),
        webhook: None, // filled in by the admin service, which reads the store
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Sums across rooms, shown on top of the room list.
#[derive(Clone, Debug, Default, Serialize, PartialEq, utoipa::ToSchema)]
pub struct Totals {
    pub rooms: usize,
    pub queue_length: u64,
    pub active: u64,
    pub capacity: u64,
    pub admissions_per_minute: u64,
    pub sockets: u64,
}

pub fn totals(rooms: &[RoomLive]) -> Totals {
    let mut t = Totals {
        rooms: rooms.len(),
        ..Totals::default()
    };
    for r in rooms {
        t.queue_length += r.queue_length;
        t.active += r.active;
        t.capacity += r.capacity;
        t.admissions_per_minute += r.admissions_per_minute;
        t.sockets += r.sockets.iter().map(|s| s.sockets).sum::<u64>();
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate_inside_buckets() {
        let mut h = [0u64; 15];
        h[0] = 10; // 0–1 s
        assert_eq!(wait_quantile(&h, 0.5), Some(1)); // 0.5 s rounds to 1
        h[6] = 10; // 30–60 s
        assert_eq!(wait_quantile(&h, 0.5), Some(1));
        assert_eq!(wait_quantile(&h, 0.9), Some(54)); // 30 + 30 × 0.8
        assert_eq!(wait_quantile(&[0; 15], 0.5), None);
    }

    #[test]
    fn per_minute_slides_across_the_boundary() {
        let prev = MinuteStats {
            minute: 9,
            admissions: 60,
            ..MinuteStats::default()
        };
        let cur = MinuteStats {
            minute: 10,
            admissions: 15,
            ..MinuteStats::default()
        };
        let m: HashMap<u64, &MinuteStats> = [(9, &prev), (10, &cur)].into_iter().collect();
        // 15 s into minute 10: 60 × 0.75 + 15 = 60.
        assert_eq!(per_minute(&m, 10 * 60_000 + 15_000, |m| m.admissions), 60);
    }
}
