//! Which room guards a request: the `[[gateway.routes]]` table, matched by host and
//! path prefix. HTTP-free.
//!
//! Paths and hosts are read by [`request_target`](crate::domain::request_target), the
//! same reader `verify` uses: the path decoded, `//` merged, hostile forms refused before
//! anything is matched; a prefix compared in any ASCII case, `/shop/` covering `/shop`;
//! a host lowercased, its trailing dot and port taken off, Unicode in punycode. The
//! request itself is forwarded unchanged.

use crate::config::GatewayRoute;
use crate::domain::request_target::{read_host, under_prefix, Host};

struct Route {
    /// Read as a request's host is; with a port only when the configuration gave one.
    host: Option<Host>,
    prefix: String,
    room: String,
}

/// The routes, ready to match.
pub struct Routes {
    /// Longest prefix first; among equal prefixes, host-specific first.
    routes: Vec<Route>,
}

impl Routes {
    /// The table; a route whose `host` names no host (configuration validation refuses
    /// it first) matches nothing.
    pub fn new(config: &[GatewayRoute]) -> Self {
        let mut routes: Vec<Route> = config
            .iter()
            .map(|r| Route {
                host: r.host.as_deref().map(|h| {
                    read_host(h).unwrap_or(Host {
                        name: String::new(),
                        port: None,
                    })
                }),
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

    /// The room guarding `path` (read by
    /// [`read_path`](crate::domain::request_target::read_path)) on `host` (the `Host`
    /// header or `:authority`, read by [`read_host`]).
    pub fn room_for(&self, host: Option<&Host>, path: &str) -> Option<&str> {
        self.routes
            .iter()
            .find(|r| {
                let host_ok = match (&r.host, host) {
                    (None, _) => true,
                    (Some(want), Some(got)) => {
                        !want.name.is_empty()
                            && want.name == got.name
                            && (want.port.is_none() || want.port == got.port)
                    }
                    (Some(_), None) => false,
                };
                host_ok && under_prefix(path, &r.prefix)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn h(raw: &str) -> Option<Host> {
        Some(read_host(raw).unwrap())
    }

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
            r.room_for(h("shop.example").as_ref(), "/checkout/1"),
            Some("sale")
        );
        assert_eq!(r.room_for(None, "/checkout/vip/2"), Some("vip"));
        assert_eq!(
            r.room_for(h("tickets.example").as_ref(), "/checkout/1"),
            Some("tickets")
        );
        // A port in Host is ignored for a route without one.
        assert_eq!(
            r.room_for(h("TICKETS.example:8443").as_ref(), "/checkout"),
            Some("tickets")
        );
        // The longer host-less prefix still beats the shorter host route.
        assert_eq!(
            r.room_for(h("tickets.example").as_ref(), "/checkout/vip"),
            Some("vip")
        );
        assert_eq!(r.rooms(), vec!["sale", "site", "tickets", "vip"]);
    }

    #[test]
    fn unmatched_requests_have_no_room() {
        let r = Routes::new(&[route(Some("a.example"), "/checkout", "sale")]);
        assert_eq!(r.room_for(h("b.example").as_ref(), "/checkout"), None);
        assert_eq!(r.room_for(None, "/checkout"), None);
        assert_eq!(r.room_for(h("a.example").as_ref(), "/"), None);
    }

    #[test]
    fn a_host_route_guards_every_spelling_of_its_host() {
        let r = Routes::new(&[
            route(Some("tickets.example"), "/", "tickets"),
            route(Some("bücher.example"), "/", "books"),
            route(Some("shop.example:8443"), "/", "tls"),
        ]);
        for host in [
            "tickets.example.",
            "TICKETS.example.",
            "tickets.example.:8080",
            "Tickets.Example:80",
        ] {
            assert_eq!(r.room_for(h(host).as_ref(), "/"), Some("tickets"), "{host}");
        }
        assert_eq!(
            r.room_for(h("xn--bcher-kva.example").as_ref(), "/x"),
            Some("books")
        );
        assert_eq!(
            r.room_for(h("BÜCHER.example.").as_ref(), "/x"),
            Some("books")
        );
        assert_eq!(
            r.room_for(h("shop.example:8443").as_ref(), "/"),
            Some("tls")
        );
        assert_eq!(r.room_for(h("shop.example:80").as_ref(), "/"), None);
        assert_eq!(r.room_for(h("shop.example").as_ref(), "/"), None);
    }

    #[test]
    fn a_prefix_guards_its_path_in_any_case_and_without_its_trailing_slash() {
        let r = Routes::new(&[
            route(None, "/shop/", "shop"),
            route(None, "/checkout", "sale"),
        ]);
        assert_eq!(r.room_for(None, "/shop"), Some("shop"));
        assert_eq!(r.room_for(None, "/SHOP/cart"), Some("shop"));
        assert_eq!(r.room_for(None, "/Checkout/pay"), Some("sale"));
        assert_eq!(r.room_for(None, "/shopping"), None);
    }
}
