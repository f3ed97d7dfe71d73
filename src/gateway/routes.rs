//! Which room guards a request: the `[[gateway.routes]]` table, matched by host and
//! path prefix. HTTP-free.
//!
//! The path is normalised before matching (percent-decoded, `//` merged, `.` and `..`
//! resolved), because the upstream will read `/a/../checkout`, `//checkout` and
//! `/%63heckout` as `/checkout`: matching the raw text would let those past a
//! `/checkout` route. The request itself is forwarded unchanged.

use crate::config::GatewayRoute;

struct Route {
    /// Lowercase; with a port only when the configuration gave one.
    host: Option<String>,
    prefix: String,
    room: String,
}

/// The routes, ready to match.
pub struct Routes {
    /// Longest prefix first; among equal prefixes, host-specific first.
    routes: Vec<Route>,
}

impl Routes {
    pub fn new(config: &[GatewayRoute]) -> Self {
        let mut routes: Vec<Route> = config
            .iter()
            .map(|r| Route {
                host: r.host.as_deref().map(str::to_ascii_lowercase),
                prefix: r.path_prefix.clone(),
                room: r.room.clone(),
            })
            .collect();
        routes.sort_by(|a, b| {
            b.prefix
                .len()
                .cmp(&a.prefix.len())
                .then(b.host.is_some().cmp(&a.host.is_some()))
        });
        Self { routes }
    }

    /// The room guarding `path` (already normalised, see [`normalize_path`]) on `host`
    /// (the `Host` header, if any).
    pub fn room_for(&self, host: Option<&str>, path: &str) -> Option<&str> {
        let host = host.map(str::to_ascii_lowercase);
        let bare = host.as_deref().map(strip_port);
        self.routes
            .iter()
            .find(|r| {
                let host_ok = match &r.host {
                    None => true,
                    Some(want) => {
                        host.as_deref() == Some(want.as_str()) || bare == Some(want.as_str())
                    }
                };
                host_ok && path.starts_with(&r.prefix)
            })
            .map(|r| r.room.as_str())
    }

    /// Every room a route names, once each.
    pub fn rooms(&self) -> Vec<&str> {
        let mut rooms: Vec<&str> = self.routes.iter().map(|r| r.room.as_str()).collect();
        rooms.sort_unstable();
        rooms.dedup();
        rooms
    }
}

/// `shop.example:8443` → `shop.example`; `[::1]:80` → `[::1]`.
fn strip_port(host: &str) -> &str {
    match host.rfind(':') {
        Some(i) if !host[i..].contains(']') => &host[..i],
        _ => host,
    }
}

/// The path as the upstream will understand it: percent-decoded (bytes that do not
/// form UTF-8 stay as `%XX`), repeated slashes merged, `.` dropped and `..` resolved
/// (never above the root).
pub fn normalize_path(raw: &str) -> String {
    let decoded = percent_decode(raw);
    let mut out: Vec<&str> = Vec::new();
    for seg in decoded.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            s => out.push(s),
        }
    }
    let mut path = String::with_capacity(decoded.len() + 1);
    for seg in &out {
        path.push('/');
        path.push_str(seg);
    }
    // A trailing slash (or a trailing `.`/`..`) means a directory: keep it.
    let dir = decoded.ends_with('/') || decoded.ends_with("/.") || decoded.ends_with("/..");
    if path.is_empty() || dir {
        path.push('/');
    }
    path
}

fn percent_decode(text: &str) -> String {
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let raw = text.as_bytes();
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        if raw[i] == b'%' && i + 2 < raw.len() {
            if let (Some(h), Some(l)) = (hex(raw[i + 1]), hex(raw[i + 2])) {
                out.push(h * 16 + l);
                i += 3;
                continue;
            }
        }
        out.push(raw[i]);
        i += 1;
    }
    // Bytes that are not UTF-8 (`%ff`) become U+FFFD: the rest still decodes, so
    // `/%63heckout%ff` is under `/checkout` as it is for the upstream.
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(host: Option<&str>, prefix: &str, room: &str) -> GatewayRoute {
        GatewayRoute {
            host: host.map(Into::into),
            path_prefix: prefix.into(),
            room: room.into(),
        }
    }

    #[test]
    fn the_longest_prefix_wins_and_a_host_route_wins_a_tie() {
        let r = Routes::new(&[
            route(None, "/", "site"),
            route(None, "/checkout", "sale"),
            route(None, "/checkout/vip", "vip"),
            route(Some("Tickets.Example"), "/checkout", "tickets"),
        ]);
        assert_eq!(r.room_for(None, "/about"), Some("site"));
        assert_eq!(
            r.room_for(Some("shop.example"), "/checkout/1"),
            Some("sale")
        );
        assert_eq!(r.room_for(None, "/checkout/vip/2"), Some("vip"));
        assert_eq!(
            r.room_for(Some("tickets.example"), "/checkout/1"),
            Some("tickets")
        );
        // A port in Host is ignored for a route without one.
        assert_eq!(
            r.room_for(Some("TICKETS.example:8443"), "/checkout"),
            Some("tickets")
        );
        // The longer host-less prefix still beats the shorter host route.
        assert_eq!(
            r.room_for(Some("tickets.example"), "/checkout/vip"),
            Some("vip")
        );
        assert_eq!(r.rooms(), vec!["sale", "site", "tickets", "vip"]);
    }

    #[test]
    fn unmatched_requests_have_no_room() {
        let r = Routes::new(&[route(Some("a.example"), "/checkout", "sale")]);
        assert_eq!(r.room_for(Some("b.example"), "/checkout"), None);
        assert_eq!(r.room_for(None, "/checkout"), None);
        assert_eq!(r.room_for(Some("a.example"), "/"), None);
    }

    #[test]
    fn paths_are_read_as_the_upstream_reads_them() {
        for (raw, want) in [
            ("/checkout", "/checkout"),
            ("//checkout", "/checkout"),
            ("/a/../checkout", "/checkout"),
            ("/./checkout/./x", "/checkout/x"),
            ("/%63heckout", "/checkout"),
            ("/static/..%2Fcheckout", "/checkout"),
            ("/../../checkout", "/checkout"),
            ("/", "/"),
            ("", "/"),
            ("/a/b/", "/a/b/"),
            ("/a/b/..", "/a/"),
            ("/%zz/%4", "/%zz/%4"),
            ("/%63heckout%ff", "/checkout\u{fffd}"),
        ] {
            assert_eq!(normalize_path(raw), want, "{raw}");
        }
    }
}
