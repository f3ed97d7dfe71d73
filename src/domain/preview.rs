//! The admin's preview of a room's queue page in any state
//! (`GET /admin/rooms/{room}/preview?state=…`): a made-up visitor's view with sample
//! figures, told what a real visitor in that state is told ([`crate::domain::told`]), so
//! an operator sees every state of the built-in page, the branding or the room's own
//! template before launch day. Nothing here reads or writes the store.

use crate::domain::admission::{VisitorView, CLOSED_EVENT_ENDED};
use crate::domain::told::{decide, RoomKind};
use crate::room::{Lane, QueueMode, RoomConfig};
use crate::store::VisitorState;

/// The sample figures: place 42 of 318 waiting, about 9 minutes (6 to 15).
pub const SAMPLE_POSITION: u64 = 42;
pub const SAMPLE_IN_LINE: u64 = 318;
pub const SAMPLE_ETA_SECS: [u64; 3] = [360, 540, 900];
/// The support code the sample visitor shows.
pub const SAMPLE_SUPPORT_CODE: &str = "K7QX-M2PD";

/// Every state the preview renders, in the order the dashboard lists them. `no_show`
/// is among them when the store has that state.
pub fn states() -> Vec<&'static str> {
    let mut s = vec![
        "queued",
        "queued_random",
        "queued_lanes",
        "queued_drop",
        "paused",
        "scheduled",
        "prequeue",
        "closed",
        "closed_kept",
        "event_ended",
        "sold_out",
        "sold_out_kept",
        "rejected",
        "not_queued",
        "admitted",
    ];
    if VisitorState::parse("no_show").is_some() {
        s.push("no_show");
    }
    s.extend(["restoring", "outage"]);
    s
}

/// What the preview shows for a state.
#[derive(Debug)]
pub enum Sample {
    /// The queue page with this view, for the room as adjusted (a random-mode, lanes or
    /// scheduled-event sample changes the room's copy, never the room).
    Page {
        view: Box<VisitorView>,
        cfg: Box<RoomConfig>,
    },
    /// The page shown while the store puts places back after it lost its data.
    Restoring,
    /// The page shown while the store cannot be reached.
    Outage,
}

/// The sample for `state` of the room `cfg` at `now_ms`; `Err` names an unknown state.
pub fn sample(cfg: &RoomConfig, state: &str, now_ms: u64) -> Result<Sample, String> {
    if !states().contains(&state) {
        return Err(format!(
            "unknown state `{state}`: one of {}",
            states().join(", ")
        ));
    }
    let mut cfg = cfg.clone();
    let min = 60_000;
    let (vs, has_place, ended) = match state {
        "restoring" => return Ok(Sample::Restoring),
        "outage" => return Ok(Sample::Outage),
        "queued" => (VisitorState::Queued, true, false),
        "queued_random" => {
            cfg.mode = QueueMode::Random;
            (VisitorState::Queued, true, false)
        }
        "queued_lanes" => {
            if cfg.lanes.is_empty() {
                cfg.lanes = vec![Lane {
                    name: "members".into(),
                    share: 0.3,
                }];
            }
            (VisitorState::Queued, true, false)
        }
        "queued_drop" => {
            cfg.opens_at = Some(now_ms - 10 * min);
            (VisitorState::Queued, true, false)
        }
        "paused" => (VisitorState::Paused, true, false),
        "scheduled" => {
            cfg.prequeue_opens_at = Some(now_ms + 60 * min);
            cfg.opens_at = Some(now_ms + 90 * min);
            (VisitorState::Scheduled, false, false)
        }
        "prequeue" => {
            cfg.prequeue_opens_at = Some(now_ms - 10 * min);
            cfg.opens_at = Some(now_ms + 50 * min);
            (VisitorState::Prequeue, true, false)
        }
        "closed" => (VisitorState::Closed, false, false),
        "closed_kept" => (VisitorState::Closed, true, false),
        "event_ended" => {
            cfg.opens_at = Some(now_ms - 120 * min);
            cfg.closes_at = Some(now_ms - min);
            (VisitorState::Closed, false, true)
        }
        "sold_out" => (VisitorState::SoldOut, false, false),
        "sold_out_kept" => (VisitorState::SoldOut, true, false),
        "rejected" => (VisitorState::Rejected, false, false),
        "not_queued" => (VisitorState::NotQueued, false, false),
        "admitted" => (VisitorState::Admitted, false, false),
        // `no_show` and any state the store names the same way.
        other => match VisitorState::parse(other) {
            Some(s) => (s, false, false),
            None => return Err(format!("unknown state `{other}`")),
        },
    };
    let kind = RoomKind::of(&cfg);
    let counting = match vs {
        VisitorState::Scheduled => cfg.prequeue_opens_at.or(cfg.opens_at).is_some(),
        VisitorState::Prequeue => cfg.opens_at.is_some(),
        _ => false,
    };
    let told = decide(vs, has_place, None, kind, ended, counting);
    let waiting = matches!(vs, VisitorState::Queued | VisitorState::Paused);
    let [low, median, high] = SAMPLE_ETA_SECS;
    let position = match vs {
        _ if !has_place => 0,
        VisitorState::Queued | VisitorState::Paused if kind.random => SAMPLE_IN_LINE,
        _ => SAMPLE_POSITION,
    };
    let secs = |ms: Option<u64>| ms.map(|m| m / 1000);
    let scheduled = matches!(vs, VisitorState::Scheduled | VisitorState::Prequeue);
    let view = VisitorView {
        room: cfg.id.clone(),
        state: vs,
        position,
        queue_length: SAMPLE_IN_LINE,
        active: cfg.capacity,
        capacity: cfg.capacity,
        eta_seconds: if waiting { median } else { 0 },
        eta_low_seconds: if waiting { low } else { 0 },
        eta_high_seconds: if waiting { high } else { 0 },
        eta_known: waiting && vs != VisitorState::Paused,
        eta_quantiles: crate::domain::eta::QUANTILES,
        stock: None,
        visitor_token: String::new(),
        support_code: SAMPLE_SUPPORT_CODE.into(),
        pass: None,
        redirect_url: (vs == VisitorState::Admitted).then(|| cfg.target_url.clone()),
        expires_at: None,
        admitted_at: None,
        eta_reason: None,
        degraded: None,
        place: None,
        place_receipt: None,
        prequeue_opens_at: scheduled.then(|| secs(cfg.prequeue_opens_at)),
        opens_at: scheduled.then(|| secs(cfg.opens_at)),
        now_ms: scheduled.then_some(now_ms),
        closed_reason: ended.then_some(CLOSED_EVENT_ENDED),
        message: told.message,
        figures: told.figures,
        notes: told.notes,
    };
    Ok(Sample::Page {
        view: Box::new(view),
        cfg: Box::new(cfg),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::told::message;

    fn room() -> RoomConfig {
        RoomConfig {
            id: "shop".into(),
            capacity: 10,
            target_url: "https://shop.example/".into(),
            ..RoomConfig::default()
        }
    }

    #[test]
    fn every_state_has_a_sample_told_as_a_real_visitor_is() {
        let now = 1_800_000_000_000;
        let told = |s: &str| match sample(&room(), s, now).unwrap() {
            Sample::Page { view, .. } => view.message,
            Sample::Restoring => "restoring",
            Sample::Outage => "outage",
        };
        for s in states() {
            told(s);
        }
        assert_eq!(told("queued"), message::QUEUED);
        assert_eq!(told("queued_random"), message::QUEUED_RANDOM);
        assert_eq!(told("queued_lanes"), message::QUEUED_LANES);
        assert_eq!(told("queued_drop"), message::QUEUED_DROP);
        assert_eq!(told("closed_kept"), message::CLOSED_KEPT);
        assert_eq!(told("event_ended"), message::EVENT_ENDED);
        assert_eq!(told("sold_out"), message::SOLD_OUT);
        assert_eq!(told("scheduled"), message::SCHEDULED);
        assert_eq!(told("admitted"), message::ADMITTED);
    }

    #[test]
    fn an_unknown_state_is_named() {
        let e = sample(&room(), "on_fire", 0).unwrap_err();
        assert!(e.contains("`on_fire`") && e.contains("queued"), "{e}");
    }
}
