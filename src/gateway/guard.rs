//! What the gateway does with a request before anything is proxied: pass it straight
//! through, let a `[[bypass]]` rule or a valid pass in, turn a `?anteroom_pass=` into a
//! cookie, or send the visitor to the queue. HTTP-free: the server fills a
//! [`RequestInfo`] in and acts on the [`Decision`].
//!
//! Passes are checked here without the store (signature, expiry, room, and the
//! [`RevokedSet`] the poller keeps), so a guarded request costs no store call.

use crate::domain::bypass::{Bypass, RequestFacts};
use crate::domain::pass::{pass_cookie, Claims, PassError, PassKeys};

use crate::domain::request_target::{same_site_location, Host};

use super::revoked::RevokedSet;
use super::routes::Routes;

/// The query parameter the queue hands a pass over in.
pub const PASS_PARAM: &str = "anteroom_pass";

/// What the guard looks at.
pub struct RequestInfo<'a> {
    /// The `Host` header (or HTTP/2 `:authority`), read by
    /// [`read_host`](crate::domain::request_target::read_host).
    pub host: Option<&'a Host>,
    /// The path as read by [`read_path`](crate::domain::request_target::read_path),
    /// which routes are matched with; `facts.path` is the same.
    pub path: &'a str,
    /// The raw path, as received (the redirect after adopting a pass keeps it).
    pub raw_path: &'a str,
    pub query: Option<&'a str>,
    /// Looks a cookie up by name.
    pub cookie: &'a dyn Fn(&str) -> Option<&'a str>,
    /// What `[[bypass]]` rules look at.
    pub facts: RequestFacts<'a>,
}

/// Why a visitor on a guarded route is not let in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    NoPass,
    Invalid,
    Expired,
    WrongRoom,
    Revoked,
}

impl Refusal {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NoPass => "no_pass",
            Self::Invalid => "invalid_pass",
            Self::Expired => "expired_pass",
            Self::WrongRoom => "wrong_room",
            Self::Revoked => "revoked_pass",
        }
    }
}

/// What to do with the request.
#[derive(Debug, PartialEq)]
pub enum Decision {
    /// No route matches: proxied as it is.
    Unguarded,
    /// A `[[bypass]]` rule matched (its name): proxied without a pass.
    Bypass(String),
    /// A valid pass for the route's room: proxied as this visitor.
    Admitted { room: String, claims: Claims },
    /// A valid pass in `?anteroom_pass=`: set it as the room's cookie for `max_age_secs`
    /// and redirect to `location`, the same path and query without the parameter, always
    /// on this site ([`same_site_location`]: `//evil.example/x` becomes `/evil.example/x`).
    Adopt {
        room: String,
        pass: String,
        max_age_secs: u64,
        location: String,
    },
    /// No valid pass on a guarded route. `clear_cookie`: a cookie was sent and is no
    /// good (revoked, expired…): drop it.
    Refused {
        room: String,
        why: Refusal,
        clear_cookie: bool,
    },
}

/// The route table and what a pass is checked against.
pub struct Guard {
    pub routes: Routes,
    pub revoked: std::sync::Arc<RevokedSet>,
    /// Passes whose signature was checked, until they expire.
    pub checked: super::pass_cache::PassCache,
}

impl Guard {
    pub fn decide(&self, req: &RequestInfo<'_>, bypass: &Bypass, keys: &PassKeys) -> Decision {
        let room = self.routes.room_for(req.host, req.path);
        let (param, rest) = split_pass_param(req.query);
        if let Some(pass) = param {
            // On an unguarded URL (a room's target_url may be the site's home page) the
            // pass may be for any room the gateway guards.
            let rooms = match room {
                Some(r) => vec![r],
                None => self.routes.rooms(),
            };
            let mut why = Refusal::Invalid;
            for r in rooms {
                match self.check(keys, r, &pass) {
                    Ok(claims) => {
                        let now = jsonwebtoken::get_current_timestamp();
                        return Decision::Adopt {
                            room: r.to_string(),
                            pass,
                            max_age_secs: claims.exp.saturating_sub(now),
                            location: same_site_location(req.raw_path, &rest),
                        };
                    }
                    Err(e) => why = e,
                }
            }
            if let Some(room) = room {
                return Decision::Refused {
                    room: room.to_string(),
                    why,
                    clear_cookie: false,
                };
            }
        }
        let Some(room) = room else {
            return Decision::Unguarded;
        };
        if let Some(rule) = bypass.matching(&req.facts) {
            return Decision::Bypass(rule.to_string());
        }
        let Some(token) = (req.cookie)(&pass_cookie(room)) else {
            return Decision::Refused {
                room: room.to_string(),
                why: Refusal::NoPass,
                clear_cookie: false,
            };
        };
        match self.check(keys, room, token) {
            Ok(claims) => Decision::Admitted {
                room: room.to_string(),
                claims,
            },
            Err(why) => Decision::Refused {
                room: room.to_string(),
                why,
                clear_cookie: true,
            },
        }
    }

    /// The local pass check: signature, algorithm, issuer, expiry, room, not revoked. A
    /// fail-open pass only while the store is unreachable.
    pub fn check(&self, keys: &PassKeys, room: &str, token: &str) -> Result<Claims, Refusal> {
        let now = jsonwebtoken::get_current_timestamp();
        let claims = match self.checked.get(room, token, now) {
            Some(Ok(claims)) => claims,
            Some(Err(())) => return Err(Refusal::Expired),
            None => {
                let claims = keys.verify(token, room).map_err(|e| match e {
                    PassError::Expired => Refusal::Expired,
                    PassError::WrongRoom => Refusal::WrongRoom,
                    _ => Refusal::Invalid,
                })?;
                self.checked.put(room, token, &claims, now);
                claims
            }
        };
        match claims.serial() {
            Some(serial) if self.revoked.is_revoked(room, &claims.sub, serial) => {
                Err(Refusal::Revoked)
            }
            Some(_) => Ok(claims),
            None if claims.is_fail_open() && !self.revoked.store_reachable() => Ok(claims),
            None => Err(Refusal::Invalid),
        }
    }
}

/// The `anteroom_pass` value of a raw query (the last one, decoded) and the query
/// without it, every other pair kept byte for byte.
pub fn split_pass_param(query: Option<&str>) -> (Option<String>, String) {
    let Some(q) = query else {
        return (None, String::new());
    };
    let mut pass = None;
    let mut rest: Vec<&str> = Vec::new();
    for pair in q.split('&') {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if k == PASS_PARAM {
            pass = url::form_urlencoded::parse(format!("v={v}").as_bytes())
                .next()
                .map(|(_, v)| v.into_owned());
        } else if !pair.is_empty() {
            rest.push(pair);
        }
    }
    (pass, rest.join("&"))
}

/// `path?query`, or `path` when the query is empty.
pub fn with_query(path: &str, query: &str) -> String {
    if query.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{query}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pass_parameter_is_taken_out_and_the_rest_kept_as_is() {
        assert_eq!(split_pass_param(None), (None, String::new()));
        assert_eq!(
            split_pass_param(Some("a=1&anteroom_pass=x.y.z&b=%20")),
            (Some("x.y.z".into()), "a=1&b=%20".into())
        );
        assert_eq!(
            split_pass_param(Some("anteroom_pass=p")),
            (Some("p".into()), String::new())
        );
        assert_eq!(
            split_pass_param(Some("anteroom_passx=1")),
            (None, "anteroom_passx=1".into())
        );
        assert_eq!(with_query("/c", ""), "/c");
        assert_eq!(with_query("/c", "a=1"), "/c?a=1");
    }
}
