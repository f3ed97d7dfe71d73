//! A room's outflow (`[rooms.outflow]`, docs/outflow.md): whether its capacity is the
//! operator's number (`fixed`) or set by the controller from the origin's health
//! (`adaptive`, [`crate::domain::outflow`]), the controller's bounds and targets, and the
//! secret a sidecar signs its health reports with. Also the room's `claim_timeout_secs`
//! check (no-shows). Defaults: `[room_defaults.outflow]` in `default.toml`.

use serde::{Deserialize, Serialize};

use super::{RoomConfig, Secret};

/// The shortest `health_secret` accepted.
pub const MIN_SECRET_CHARS: usize = 32;

/// How a room's capacity is decided.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum OutflowMode {
    /// The room's `capacity`, as the operator set it.
    #[default]
    Fixed,
    /// The outflow controller sets `capacity` from the origin's health, between
    /// `min_capacity` and `max_capacity`.
    Adaptive,
}

impl OutflowMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fixed => "fixed",
            Self::Adaptive => "adaptive",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "fixed" => Self::Fixed,
            "adaptive" => Self::Adaptive,
            _ => return None,
        })
    }
}

/// `[rooms.outflow]`: the adaptive outflow controller's settings.
#[derive(Clone, Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OutflowConfig {
    /// `fixed` (the room's `capacity` as set) or `adaptive` (the controller sets it).
    pub mode: OutflowMode,
    /// The controller never sets the capacity below this (1-10000000).
    pub min_capacity: u64,
    /// Nor above this (`min_capacity`-10000000).
    pub max_capacity: u64,
    /// The origin's 95th percentile latency to headers the controller holds it at (it
    /// lowers the capacity over it and raises it under 0.95 × it), in ms (1-600000).
    pub target_p95_ms: u64,
    /// The share of the origin's answers that may be errors (5xx, timeouts, refused
    /// connections) before the controller lowers the capacity (0-1, exclusive of 0).
    pub max_error_rate: f64,
    /// Seconds between the controller's decisions; its signals cover the last two
    /// intervals (1-3600).
    pub interval_secs: u64,
    /// The bearer token `POST /api/rooms/{room}/health` requires (at least 32
    /// characters). Unset: the room takes no health reports (the built-in gateway's
    /// measurements only). Never shown back: `"[set]"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub health_secret: Option<Secret>,
}

impl PartialEq for OutflowConfig {
    fn eq(&self, o: &Self) -> bool {
        self.mode == o.mode
            && self.min_capacity == o.min_capacity
            && self.max_capacity == o.max_capacity
            && self.target_p95_ms == o.target_p95_ms
            && self.max_error_rate.to_bits() == o.max_error_rate.to_bits()
            && self.interval_secs == o.interval_secs
            && self.health_secret == o.health_secret
    }
}
impl Eq for OutflowConfig {}

impl Default for OutflowConfig {
    fn default() -> Self {
        super::RoomConfig::default().outflow
    }
}

impl OutflowConfig {
    /// Whether the controller sets this room's capacity.
    pub fn adaptive(&self) -> bool {
        self.mode == OutflowMode::Adaptive
    }

    /// Checks ranges; `(field, message)` for the first problem, the field under
    /// `outflow.`.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if self.min_capacity == 0 || self.min_capacity > 10_000_000 {
            return Err((
                "outflow.min_capacity",
                "must be between 1 and 10000000".into(),
            ));
        }
        if self.max_capacity > 10_000_000 {
            return Err(("outflow.max_capacity", "must be at most 10000000".into()));
        }
        if self.min_capacity > self.max_capacity {
            return Err((
                "outflow.min_capacity",
                format!(
                    "must not be above max_capacity ({} > {})",
                    self.min_capacity, self.max_capacity
                ),
            ));
        }
        if self.target_p95_ms == 0 || self.target_p95_ms > 600_000 {
            return Err((
                "outflow.target_p95_ms",
                "must be between 1 and 600000 (ms)".into(),
            ));
        }
        if !(self.max_error_rate > 0.0 && self.max_error_rate <= 1.0) {
            return Err((
                "outflow.max_error_rate",
                "must be a share above 0 and at most 1 (e.g. 0.01 for 1 %)".into(),
            ));
        }
        if self.interval_secs == 0 || self.interval_secs > 3600 {
            return Err(("outflow.interval_secs", "must be between 1 and 3600".into()));
        }
        if let Some(s) = &self.health_secret {
            if !s.is_empty() && s.expose().chars().count() < MIN_SECRET_CHARS {
                return Err((
                    "outflow.health_secret",
                    format!(
                        "must be at least {MIN_SECRET_CHARS} characters (e.g. `openssl rand -base64 32`)"
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// A change to a room's outflow through the admin API: `None` leaves a key as it is;
/// `health_secret: ""` removes the secret.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OutflowPatch {
    pub mode: Option<OutflowMode>,
    pub min_capacity: Option<u64>,
    pub max_capacity: Option<u64>,
    pub target_p95_ms: Option<u64>,
    pub max_error_rate: Option<f64>,
    pub interval_secs: Option<u64>,
    #[schema(value_type = Option<String>)]
    pub health_secret: Option<Secret>,
}

impl Eq for OutflowPatch {}

impl OutflowPatch {
    /// The outflow table with this patch applied.
    pub fn applied_to(&self, o: &OutflowConfig) -> OutflowConfig {
        OutflowConfig {
            mode: self.mode.unwrap_or(o.mode),
            min_capacity: self.min_capacity.unwrap_or(o.min_capacity),
            max_capacity: self.max_capacity.unwrap_or(o.max_capacity),
            target_p95_ms: self.target_p95_ms.unwrap_or(o.target_p95_ms),
            max_error_rate: self.max_error_rate.unwrap_or(o.max_error_rate),
            interval_secs: self.interval_secs.unwrap_or(o.interval_secs),
            health_secret: match &self.health_secret {
                Some(s) => (!s.is_empty()).then(|| s.clone()),
                None => o.health_secret.clone(),
            },
        }
    }
}

/// A room's outflow table and `claim_timeout_secs`; `(field, message)` for the first
/// problem.
pub fn check_room(cfg: &RoomConfig) -> Result<(), (&'static str, String)> {
    cfg.outflow.check()?;
    if cfg.claim_timeout_secs > MAX_CLAIM_TIMEOUT_SECS {
        return Err((
            "claim_timeout_secs",
            format!("must be at most {MAX_CLAIM_TIMEOUT_SECS} (an hour; 0 = off)"),
        ));
    }
    if cfg.claim_timeout_secs > 0 && cfg.claim_timeout_secs >= cfg.session_ttl_secs {
        return Err((
            "claim_timeout_secs",
            "must be less than session_ttl_secs (0 = off)".into(),
        ));
    }
    Ok(())
}

/// The longest claim timeout: a visitor who has not reached the site an hour after their
/// turn is not coming, and a longer one would hold a slot for nothing.
pub const MAX_CLAIM_TIMEOUT_SECS: u64 = 3_600;

#[cfg(test)]
mod tests {
    use super::*;

    fn adaptive() -> OutflowConfig {
        OutflowConfig {
            mode: OutflowMode::Adaptive,
            ..OutflowConfig::default()
        }
    }

    fn field_of(c: &OutflowConfig) -> &'static str {
        c.check().unwrap_err().0
    }

    #[test]
    fn the_defaults_are_fixed_and_valid() {
        let d = OutflowConfig::default();
        assert_eq!(d.mode, OutflowMode::Fixed);
        d.check().unwrap();
        adaptive().check().unwrap();
    }

    #[test]
    fn a_minimum_above_the_maximum_is_refused_naming_min_capacity() {
        let c = OutflowConfig {
            min_capacity: 50,
            max_capacity: 10,
            ..adaptive()
        };
        let (field, msg) = c.check().unwrap_err();
        assert_eq!(field, "outflow.min_capacity");
        assert!(msg.contains("50 > 10"), "{msg}");
    }

    #[test]
    fn a_target_of_zero_is_refused() {
        let c = OutflowConfig {
            target_p95_ms: 0,
            ..adaptive()
        };
        assert_eq!(field_of(&c), "outflow.target_p95_ms");
    }

    #[test]
    fn error_rates_outside_zero_to_one_are_refused() {
        for bad in [0.0, -0.1, 1.5, f64::NAN] {
            let c = OutflowConfig {
                max_error_rate: bad,
                ..adaptive()
            };
            assert_eq!(field_of(&c), "outflow.max_error_rate", "{bad}");
        }
    }

    #[test]
    fn a_short_health_secret_is_refused() {
        let c = OutflowConfig {
            health_secret: Some(Secret::new("too short")),
            ..adaptive()
        };
        assert_eq!(field_of(&c), "outflow.health_secret");
        let ok = OutflowConfig {
            health_secret: Some(Secret::new("x".repeat(32))),
            ..adaptive()
        };
        ok.check().unwrap();
    }

    #[test]
    fn zero_and_huge_intervals_and_minimums_are_refused() {
        let c = OutflowConfig {
            interval_secs: 0,
            ..adaptive()
        };
        assert_eq!(field_of(&c), "outflow.interval_secs");
        let c = OutflowConfig {
            min_capacity: 0,
            ..adaptive()
        };
        assert_eq!(field_of(&c), "outflow.min_capacity");
    }

    #[test]
    fn the_secret_never_serialises() {
        let c = OutflowConfig {
            health_secret: Some(Secret::new("s".repeat(40))),
            ..adaptive()
        };
        let j = serde_json::to_string(&c).unwrap();
        assert!(!j.contains("ssss"), "{j}");
    }
}
