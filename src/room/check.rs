//! The checks a room's settings must pass wherever they come from (a file, the admin
//! API): ranges, shapes, and how the fields fit together. Each names the first bad field
//! as `(field, message)`. The checks that need more than the settings themselves (the
//! languages this instance serves, an entry key that parses, a template file that
//! exists and parses) are the domain's, in `domain::room_check`, run after these.

use std::path::{Component, Path};

use super::schedule;
use super::{outflow, valid_room_id, webhook, Lane, RoomConfig, MAX_LANES, MAX_STOCK};

impl RoomConfig {
    /// Checks ranges and shapes; returns `(field, message)` for the first problem. The
    /// domain's `room_check::check` runs this, then the checks that need the instance.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if !valid_room_id(&self.id) {
            return Err(("id", "must match [A-Za-z0-9_-]{1,64}".into()));
        }
        if self.capacity == 0 || self.capacity > 10_000_000 {
            return Err(("capacity", "must be between 1 and 10000000".into()));
        }
        if self.session_ttl_secs == 0 || self.session_ttl_secs > 7 * 86_400 {
            return Err(("session_ttl_secs", "must be between 1 and 604800".into()));
        }
        if self.heartbeat_timeout_secs == 0 || self.heartbeat_timeout_secs > 86_400 {
            return Err((
                "heartbeat_timeout_secs",
                "must be between 1 and 86400".into(),
            ));
        }
        if self.max_admissions_per_minute > 1_000_000 {
            return Err((
                "max_admissions_per_minute",
                "must be at most 1000000".into(),
            ));
        }
        match url::Url::parse(&self.target_url) {
            Ok(u) if u.scheme() == "http" || u.scheme() == "https" => {}
            _ => return Err(("target_url", "must be an absolute http(s) URL".into())),
        }
        if self.stock.is_some_and(|s| s > MAX_STOCK) {
            return Err(("stock", format!("must be at most {MAX_STOCK}")));
        }
        if self.name.chars().count() > 200 {
            return Err(("name", "must be at most 200 characters".into()));
        }
        if self.max_places_per_ip > 1000 {
            return Err((
                "max_places_per_ip",
                "must be at most 1000 (0 = no cap)".into(),
            ));
        }
        if self.pow_max_number == 0 || self.pow_max_number > 100_000_000 {
            return Err(("pow_max_number", "must be between 1 and 100000000".into()));
        }
        check_lanes(&self.lanes).map_err(|m| ("lanes", m))?;
        self.brand.check()?;
        if let Some(t) = &self.template {
            template_path(t).map_err(|m| ("template", m))?;
        }
        if self.max_session_secs > 7 * 86_400 {
            return Err(("max_session_secs", "must be at most 604800".into()));
        }
        if self.renew_on_activity && self.max_session_secs < self.session_ttl_secs {
            return Err((
                "max_session_secs",
                "must be at least session_ttl_secs when renew_on_activity is on".into(),
            ));
        }
        webhook::check_room(self)?;
        outflow::check_room(self)?;
        self.check_schedule()?;
        // Origins go into a CSP header and are compared exactly with postMessage origins:
        // exact origins only (a `*` would become a CSP wildcard).
        for o in &self.embed_origins {
            match url::Url::parse(o) {
                Ok(u)
                    if (u.scheme() == "http" || u.scheme() == "https")
                        && !o.contains('*')
                        && u.origin().ascii_serialization() == o.trim_end_matches('/') => {}
                _ => {
                    return Err((
                        "embed_origins",
                        "must list exact origins like https://shop.example (scheme, host, optional port; no wildcards)"
                            .into(),
                    ))
                }
            }
        }
        Ok(())
    }

    /// The scheduled event's times and overrides.
    fn check_schedule(&self) -> Result<(), (&'static str, String)> {
        if self.prequeue_opens_at.is_some() && self.opens_at.is_none() {
            return Err((
                "prequeue_opens_at",
                "needs opens_at (the pre-queue is shuffled then)".into(),
            ));
        }
        if let (Some(pq), Some(open)) = (self.prequeue_opens_at, self.opens_at) {
            if open < pq {
                return Err(("opens_at", "must not be before prequeue_opens_at".into()));
            }
        }
        if let Some(close) = self.closes_at {
            if self.opens_at.is_some_and(|open| close <= open)
                || self.prequeue_opens_at.is_some_and(|pq| close <= pq)
            {
                return Err(("closes_at", "must be after opens_at".into()));
            }
        }
        let overrides = [
            ("event_capacity", self.event_capacity),
            ("event_session_ttl_secs", self.event_session_ttl_secs),
            (
                "event_max_admissions_per_minute",
                self.event_max_admissions_per_minute,
            ),
        ];
        for (field, v) in overrides {
            if v.is_some() && self.opens_at.is_none() {
                return Err((
                    field,
                    "needs opens_at (it applies from opens_at to closes_at)".into(),
                ));
            }
        }
        if self
            .event_capacity
            .is_some_and(|c| c == 0 || c > 10_000_000)
        {
            return Err(("event_capacity", "must be between 1 and 10000000".into()));
        }
        if self
            .event_session_ttl_secs
            .is_some_and(|t| t == 0 || t > 7 * 86_400)
        {
            return Err((
                "event_session_ttl_secs",
                "must be between 1 and 604800".into(),
            ));
        }
        if self
            .event_max_admissions_per_minute
            .is_some_and(|r| r > 1_000_000)
        {
            return Err((
                "event_max_admissions_per_minute",
                "must be at most 1000000".into(),
            ));
        }
        Ok(())
    }

    /// `(capacity, session_ttl_secs, max_admissions_per_minute)` in force at `now` (ms):
    /// the event's overrides between `opens_at` and `closes_at`, else the room's own.
    pub fn effective_limits(&self, now: u64) -> (u64, u64, u64) {
        if schedule::overrides_apply(now, self.opens_at, self.closes_at) {
            (
                self.event_capacity.unwrap_or(self.capacity),
                self.event_session_ttl_secs.unwrap_or(self.session_ttl_secs),
                self.event_max_admissions_per_minute
                    .unwrap_or(self.max_admissions_per_minute),
            )
        } else {
            (
                self.capacity,
                self.session_ttl_secs,
                self.max_admissions_per_minute,
            )
        }
    }

    /// The display name (the id when no name is set).
    pub fn display_name(&self) -> &str {
        if self.name.is_empty() {
            &self.id
        } else {
            &self.name
        }
    }
}

/// A room's lanes: at most [`MAX_LANES`], unique names, each share 0.01–0.99 and all
/// together at most 0.99, so visitors without a lane always keep a share.
fn check_lanes(lanes: &[Lane]) -> Result<(), String> {
    if lanes.len() > MAX_LANES {
        return Err(format!("at most {MAX_LANES} lanes"));
    }
    let mut total = 0.0;
    for (i, l) in lanes.iter().enumerate() {
        let name_ok = !l.name.is_empty()
            && l.name.len() <= 32
            && l.name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !name_ok {
            return Err(format!("lanes[{i}].name must match [A-Za-z0-9_-]{{1,32}}"));
        }
        if lanes[..i].iter().any(|o| o.name == l.name) {
            return Err(format!("lanes[{i}].name \"{}\" is used twice", l.name));
        }
        if !(0.01..=0.99).contains(&l.share) {
            return Err(format!("lanes[{i}].share must be between 0.01 and 0.99"));
        }
        total += l.share;
    }
    if total > 0.99 + 1e-9 {
        return Err(format!(
            "the shares add up to {total:.2}; at most 0.99, so visitors without a lane keep a share"
        ));
    }
    Ok(())
}

/// A `template` value's shape: a relative path of plain parts (whether the file exists,
/// inside `template_dir`, and parses is the domain's check).
pub fn template_path(t: &str) -> Result<(), String> {
    let p = Path::new(t);
    if t.is_empty() || t.len() > 512 {
        return Err("must be a path of 1 to 512 bytes inside template_dir".into());
    }
    if !p
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(format!(
            "must be a relative path inside template_dir, without `..` ({t:?})"
        ));
    }
    Ok(())
}
