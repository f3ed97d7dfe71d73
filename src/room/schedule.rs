//! A room's scheduled event ("launch-day drop"): RFC 3339 times in the configuration and
//! the admin API, milliseconds since the epoch everywhere else (the store decides on its
//! own clock: Redis `TIME`, or the memory store's [`Clock`](crate::store::memory::Clock)).
//!
//! The serde helpers here let `RoomConfig` read and write the times as RFC 3339 strings
//! while holding them as `Option<u64>` milliseconds.

use serde::{Deserialize, Deserializer, Serializer};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// What a bad time says (the field is named by whoever reports it).
pub const TIME_HINT: &str = "must be an RFC 3339 time like 2026-11-27T18:00:00Z";

/// Milliseconds since the epoch of an RFC 3339 time (`2026-11-27T18:00:00Z`,
/// `2026-11-27T19:00:00+01:00`); `None` for anything else, or a time before 1970.
pub fn parse_rfc3339_ms(s: &str) -> Option<u64> {
    let t = OffsetDateTime::parse(s.trim(), &Rfc3339).ok()?;
    u64::try_from(t.unix_timestamp_nanos() / 1_000_000).ok()
}

/// The RFC 3339 form (UTC, `Z`) of a time in ms since the epoch.
pub fn format_rfc3339_ms(ms: u64) -> String {
    let nanos = i128::from(ms) * 1_000_000;
    OffsetDateTime::from_unix_timestamp_nanos(nanos)
        .ok()
        .and_then(|t| t.format(&Rfc3339).ok())
        .unwrap_or_default()
}

/// `#[serde(with = "…::opt_time")]` for an optional time held as ms.
pub mod opt_time {
    use super::*;

    pub fn serialize<S: Serializer>(v: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(ms) => s.serialize_str(&format_rfc3339_ms(*ms)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        match Option::<String>::deserialize(d)? {
            None => Ok(None),
            Some(s) if s.trim().is_empty() => Ok(None),
            Some(s) => parse_rfc3339_ms(&s)
                .map(Some)
                .ok_or_else(|| serde::de::Error::custom(format!("`{s}` {TIME_HINT}"))),
        }
    }
}

/// `#[serde(default, deserialize_with = "…::patch_time")]` for a patch: absent or `null`
/// leaves the time, `""` removes it, an RFC 3339 string sets it.
pub fn patch_time<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<u64>>, D::Error> {
    match Option::<String>::deserialize(d)? {
        None => Ok(None),
        Some(s) if s.trim().is_empty() => Ok(Some(None)),
        Some(s) => parse_rfc3339_ms(&s)
            .map(|ms| Some(Some(ms)))
            .ok_or_else(|| serde::de::Error::custom(format!("`{s}` {TIME_HINT}"))),
    }
}

/// Where a room's event stands at `now` (ms, store clock), by the rule both stores use
/// (`event_phase` in `common.lua`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EventPhase {
    /// No event, or the event is open (after its opening, before its end).
    #[default]
    Open,
    /// Before the pre-queue opens (or before the opening, without a pre-queue): no
    /// place is taken.
    Scheduled,
    /// The pre-queue is open (or the opening came and the shuffle has not finished):
    /// visitors wait unordered, nobody is let in.
    Prequeue,
    /// After `closes_at`: closed, with its own reason.
    Ended,
}

impl EventPhase {
    /// The phase of an event with these times (ms), `shuffled` telling whether the
    /// pre-queue has been put in line.
    pub fn at(
        now: u64,
        prequeue_opens_at: Option<u64>,
        opens_at: Option<u64>,
        closes_at: Option<u64>,
        shuffled: bool,
    ) -> Self {
        if closes_at.is_some_and(|c| now >= c) {
            return Self::Ended;
        }
        if prequeue_opens_at
            .or(opens_at)
            .is_some_and(|first| now < first)
        {
            return Self::Scheduled;
        }
        if let (Some(_), Some(open)) = (prequeue_opens_at, opens_at) {
            if now < open || !shuffled {
                return Self::Prequeue;
            }
        }
        Self::Open
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Scheduled => "scheduled",
            Self::Prequeue => "prequeue",
            Self::Ended => "ended",
        }
    }

    pub fn parse(s: &str) -> Self {
        match s {
            "scheduled" => Self::Scheduled,
            "prequeue" | "shuffling" => Self::Prequeue,
            "ended" => Self::Ended,
            _ => Self::Open,
        }
    }
}

/// Whether the event's overrides (`event_capacity`, …) apply at `now`: from `opens_at`
/// until `closes_at` (ms).
pub fn overrides_apply(now: u64, opens_at: Option<u64>, closes_at: Option<u64>) -> bool {
    opens_at.is_some_and(|o| now >= o) && closes_at.is_none_or(|c| now < c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_round_trips_in_milliseconds() {
        let ms = parse_rfc3339_ms("2026-11-27T18:00:00.250Z").unwrap();
        assert_eq!(ms, 1_795_802_400_250);
        assert_eq!(format_rfc3339_ms(ms), "2026-11-27T18:00:00.25Z");
        assert_eq!(
            parse_rfc3339_ms("2026-11-27T19:00:00+01:00"),
            Some(1_795_802_400_000)
        );
        assert_eq!(parse_rfc3339_ms("tomorrow at six"), None);
        assert_eq!(parse_rfc3339_ms("2026-11-27 18:00"), None);
    }

    #[test]
    fn phases_follow_the_times() {
        let (pq, open, close) = (Some(1_000), Some(2_000), Some(3_000));
        assert_eq!(
            EventPhase::at(999, pq, open, close, false),
            EventPhase::Scheduled
        );
        assert_eq!(
            EventPhase::at(1_000, pq, open, close, false),
            EventPhase::Prequeue
        );
        assert_eq!(
            EventPhase::at(2_000, pq, open, close, false),
            EventPhase::Prequeue
        );
        assert_eq!(
            EventPhase::at(2_000, pq, open, close, true),
            EventPhase::Open
        );
        assert_eq!(
            EventPhase::at(3_000, pq, open, close, true),
            EventPhase::Ended
        );
        assert_eq!(
            EventPhase::at(1_999, None, open, None, false),
            EventPhase::Scheduled
        );
        assert_eq!(
            EventPhase::at(2_000, None, open, None, false),
            EventPhase::Open
        );
        assert_eq!(EventPhase::at(0, None, None, None, false), EventPhase::Open);
        assert!(overrides_apply(2_000, open, close));
        assert!(!overrides_apply(1_999, open, close));
        assert!(!overrides_apply(3_000, open, close));
    }
}
