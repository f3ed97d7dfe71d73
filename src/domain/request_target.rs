//! The one reader of a request's path and host, shared by `verify` (the path nginx puts
//! in `X-Original-URI`) and the built-in gateway (its routes and `[[bypass]]` rules).
//! HTTP-free.
//!
//! Two programs may read the same request line differently, and a guard that reads it
//! one way while the site reads it another can be walked past. Measured against the real
//! programs (`tests/it/request_target.rs`): nginx decodes `%XX` (`%2F` and `%5C` too),
//! merges `//` and resolves `.`/`..` before it picks a `location`; Express routes on the
//! raw text, ASCII case-insensitively, and a `/shop/` route also answers `/shop`. So each
//! hostile form is either refused, because no one reading is right for both, or read the
//! way that guards at least as much as either program would:
//!
//! - **refused** (`bad_path`): `%2F` and `%5C` (an encoded separator), `\` (WHATWG URL
//!   readers take it for `/`), `%3F` and `%23` (a `?` or `#` inside a segment, which
//!   widens a `*` glob), a `.` or `..` segment written plainly or with `%2E` (browsers and
//!   curl resolve them before sending; nginx resolves them, Express does not), a segment
//!   that is empty, `.` or `..` before a `;` (`/..;x/`, which a servlet container strips
//!   to `..` and resolves), `%00`-`%1F` and `%7F` or raw control characters, a `%`
//!   without two hex digits (nginx: `400`), and a path that does not start with `/`.
//! - **normalised**: other `%XX` decoded once (bytes that are not UTF-8 become U+FFFD),
//!   `//` merged, the query (from `?`) and a fragment (from a raw `#`, as both programs
//!   cut it) left out. A trailing slash and `;` are kept as they are (both programs keep
//!   them).
//! - **matched as the site will** ([`under_prefix`]): a route's prefix is compared ASCII
//!   case-insensitively, and `/shop/` also covers `/shop`, as Express's default router
//!   does. `[[bypass]]` globs stay case-sensitive: there the stricter reading is the
//!   narrower one.
//!
//! A host ([`read_host`]) is read as nginx's `$host` is: lowercase, one trailing dot and
//! the port taken off (`[v6]:port` too); a name in Unicode becomes its punycode (what
//! browsers send); a name with an empty label, a space or another character no host
//! has is refused (`bad_host`).

use std::fmt;
use std::net::IpAddr;

/// Why a path or host is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BadTarget {
    /// The path does not start with `/`.
    NotAbsolute,
    /// `%2F` or `%5C`: a separator the site may or may not split on.
    EncodedSeparator,
    /// A raw `\`.
    Backslash,
    /// `%3F` or `%23`: a `?` or `#` inside a segment.
    EncodedDelimiter,
    /// A `.` or `..` segment, plain or with `%2E`.
    DotSegment,
    /// A segment whose name before its `;` parameters is empty, `.` or `..` (`/..;x/`):
    /// a servlet container strips the parameters and then resolves it.
    ParamSegment,
    /// A control character, raw or `%00`-`%1F`, `%7F`.
    Control,
    /// A `%` not followed by two hex digits.
    BadEscape,
    /// A `Host` that names no host.
    Host,
}

impl BadTarget {
    /// The machine code of the `400` (`bad_path` or `bad_host`).
    pub fn code(self) -> &'static str {
        match self {
            Self::Host => "bad_host",
            _ => "bad_path",
        }
    }
}

impl fmt::Display for BadTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.reason())
    }
}

impl BadTarget {
    /// A sentence for a person: what is wrong with the request.
    pub fn reason(self) -> &'static str {
        match self {
            Self::NotAbsolute => "the path must start with '/'",
            Self::EncodedSeparator => "the path has an encoded '/' or '\\' (%2F, %5C)",
            Self::Backslash => "the path has a '\\'",
            Self::EncodedDelimiter => "the path has an encoded '?' or '#' (%3F, %23)",
            Self::DotSegment => "the path has a '.' or '..' segment",
            Self::ParamSegment => {
                "the path has a segment that is empty, '.' or '..' before its ';'"
            }
            Self::Control => "the path has a control character",
            Self::BadEscape => "the path has a '%' not followed by two hex digits",
            Self::Host => "the Host header is not a host name",
        }
    }
}

/// The path of `raw` (a request target in origin form, query and all) as it is routed:
/// see the module doc for what is refused and what is normalised.
pub fn read_path(raw: &str) -> Result<String, BadTarget> {
    let raw = raw.split(['?', '#']).next().unwrap_or_default();
    if !raw.starts_with('/') {
        return Err(BadTarget::NotAbsolute);
    }
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let bytes = raw.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let byte = if b == b'%' {
            let (Some(h), Some(l)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            ) else {
                return Err(BadTarget::BadEscape);
            };
            i += 3;
            let d = h * 16 + l;
            match d {
                b'/' | b'\\' => return Err(BadTarget::EncodedSeparator),
                b'?' | b'#' => return Err(BadTarget::EncodedDelimiter),
                _ => d,
            }
        } else {
            i += 1;
            if b == b'\\' {
                return Err(BadTarget::Backslash);
            }
            b
        };
        if byte < 0x20 || byte == 0x7f {
            return Err(BadTarget::Control);
        }
        decoded.push(byte);
    }
    let decoded = String::from_utf8_lossy(&decoded);
    let mut path = String::with_capacity(decoded.len());
    for seg in decoded.split('/').filter(|s| !s.is_empty()) {
        if seg == "." || seg == ".." {
            return Err(BadTarget::DotSegment);
        }
        if let Some((name, _)) = seg.split_once(';') {
            if matches!(name, "" | "." | "..") {
                return Err(BadTarget::ParamSegment);
            }
        }
        path.push('/');
        path.push_str(seg);
    }
    if path.is_empty() || decoded.ends_with('/') {
        path.push('/');
    }
    Ok(path)
}

/// Whether `path` (read by [`read_path`]) is under a route's `prefix`: compared ASCII
/// case-insensitively, and a prefix ending in `/` also covers the path without it
/// (`/shop/` covers `/shop`), as Express's default router matches.
pub fn under_prefix(path: &str, prefix: &str) -> bool {
    let (p, want) = (path.as_bytes(), prefix.as_bytes());
    let starts = p.len() >= want.len() && p[..want.len()].eq_ignore_ascii_case(want);
    starts
        || (want.len() > 1
            && want.ends_with(b"/")
            && p.eq_ignore_ascii_case(&want[..want.len() - 1]))
}

/// A host as routes are matched on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Host {
    /// Lowercase ASCII (punycode for a name in Unicode), no trailing dot; an IPv6
    /// address in brackets.
    pub name: String,
    pub port: Option<u16>,
}

/// `raw` (a `Host` header, an HTTP/2 `:authority`, or a route's `host`) read as nginx's
/// `$host` is, with Unicode names in punycode; `Err` for what names no host.
pub fn read_host(raw: &str) -> Result<Host, BadTarget> {
    let (name, port) = match raw.strip_prefix('[') {
        Some(rest) => {
            let (inside, after) = rest.split_once(']').ok_or(BadTarget::Host)?;
            (&raw[..inside.len() + 2], after)
        }
        None => match raw.split_once(':') {
            Some((name, _)) => (name, &raw[name.len()..]),
            None => (raw, ""),
        },
    };
    let port = match port {
        "" | ":" => None,
        p => {
            let digits = p.strip_prefix(':').ok_or(BadTarget::Host)?;
            if !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(BadTarget::Host);
            }
            Some(digits.parse::<u16>().map_err(|_| BadTarget::Host)?)
        }
    };
    // `url` would percent-decode a name; a `Host` with `%` is no host.
    if name.is_empty() || name.contains(['%', '@', '/', '\\']) {
        return Err(BadTarget::Host);
    }
    let bare = name.strip_suffix('.').unwrap_or(name);
    let name = match url::Host::parse(bare).map_err(|_| BadTarget::Host)? {
        url::Host::Domain(d) => {
            if d.is_empty() || d.split('.').any(str::is_empty) {
                return Err(BadTarget::Host);
            }
            d
        }
        ip => ip.to_string(),
    };
    Ok(Host { name, port })
}

/// A same-site `Location` for `raw_path` and `query`: leading `/` and `\` collapse to one
/// `/`, so `//evil.example/x` (which a browser reads as another site) stays on this one.
pub fn same_site_location(raw_path: &str, query: &str) -> String {
    let rest = raw_path.trim_start_matches(['/', '\\']);
    if query.is_empty() {
        format!("/{rest}")
    } else {
        format!("/{rest}?{query}")
    }
}

/// The client address behind trusted proxies, as nginx's `real_ip_recursive` finds it.
/// `entries` is `X-Forwarded-For` as one list, oldest first. With no `trusted` networks
/// the peer is taken as the one trusted proxy and the last entry (the one it appended)
/// is the client. With `trusted` networks, a peer outside them is the client itself;
/// otherwise the entries are walked from the right past every trusted address, and the
/// first other one is the client. Entries before it were written by whoever the client
/// is and are never used; an entry that is not an address stops the walk at the last
/// trusted hop.
pub fn forwarded_client(peer: IpAddr, entries: &[&str], trusted: &[ipnet::IpNet]) -> IpAddr {
    if trusted.is_empty() {
        return entries.last().and_then(|e| e.parse().ok()).unwrap_or(peer);
    }
    let is_trusted = |ip: &IpAddr| trusted.iter().any(|n| n.contains(ip));
    if !is_trusted(&peer) {
        return peer;
    }
    let mut client = peer;
    for e in entries.iter().rev() {
        let Ok(ip) = e.parse::<IpAddr>() else {
            return client;
        };
        client = ip;
        if !is_trusted(&ip) {
            return ip;
        }
    }
    client
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_hostile_path_form_is_refused_or_read_as_the_site_routes_it() {
        use BadTarget::*;
        for (raw, want) in [
            ("/checkout", Ok("/checkout")),
            ("/checkout/", Ok("/checkout/")),
            ("", Err(NotAbsolute)),
            ("*", Err(NotAbsolute)),
            ("/", Ok("/")),
            ("//checkout", Ok("/checkout")),
            ("/a//b/", Ok("/a/b/")),
            ("/%63heckout", Ok("/checkout")),
            ("/checkout/x?y=/../..", Ok("/checkout/x")),
            ("/checkout/assets/x#/../../pay", Ok("/checkout/assets/x")),
            ("/checkout;a=b/pay", Ok("/checkout;a=b/pay")),
            ("/CHECKOUT/Pay", Ok("/CHECKOUT/Pay")),
            ("/checkout/%25", Ok("/checkout/%")),
            ("/checkout/%C3%A9", Ok("/checkout/é")),
            ("/checkout/%ff", Ok("/checkout/\u{fffd}")),
            ("/checkout/assets/..%2fpay", Err(EncodedSeparator)),
            ("/checkout%2Fassets/x", Err(EncodedSeparator)),
            ("/x/..%5ccheckout/pay", Err(EncodedSeparator)),
            ("/x/..\\checkout/pay", Err(Backslash)),
            ("/checkout/assets/x%3F/deeper/pay", Err(EncodedDelimiter)),
            ("/checkout/assets/x%23/deeper", Err(EncodedDelimiter)),
            ("/a/../checkout", Err(DotSegment)),
            ("/./checkout", Err(DotSegment)),
            ("/checkout/assets/x/..", Err(DotSegment)),
            ("/a/..;x/checkout", Err(ParamSegment)),
            ("/.;/checkout", Err(ParamSegment)),
            ("/;x/checkout", Err(ParamSegment)),
            ("/checkout/assets;x/pay", Ok("/checkout/assets;x/pay")),
            ("/a/%2e%2e/checkout", Err(DotSegment)),
            ("/checkout/assets/.%2E/pay", Err(DotSegment)),
            ("/checkout/%2e/pay", Err(DotSegment)),
            ("/checkout/...", Ok("/checkout/...")),
            ("/checkout/..x", Ok("/checkout/..x")),
            ("/checkout%00x", Err(Control)),
            ("/checkout%7f", Err(Control)),
            ("/check\tout", Err(Control)),
            ("/checkout/%zz", Err(BadEscape)),
            ("/checkout/%2", Err(BadEscape)),
        ] {
            assert_eq!(read_path(raw).as_deref(), want.as_deref(), "{raw:?}");
        }
    }

    #[test]
    fn a_prefix_matches_in_any_case_and_a_trailing_slash_is_optional() {
        for (path, prefix, want) in [
            ("/checkout/pay", "/checkout", true),
            ("/CHECKOUT/pay", "/checkout", true),
            ("/Checkout", "/checkout/", true),
            ("/shop", "/shop/", true),
            ("/shop/", "/shop/", true),
            ("/shopping", "/shop/", false),
            ("/sho", "/shop/", false),
            ("/anything", "/", true),
            ("/", "/", true),
            ("/about", "/checkout", false),
        ] {
            assert_eq!(under_prefix(path, prefix), want, "{path} under {prefix}");
        }
    }

    #[test]
    fn each_host_form_is_read_as_nginx_reads_host_or_refused() {
        let host = |name: &str, port: Option<u16>| {
            Ok(Host {
                name: name.into(),
                port,
            })
        };
        for (raw, want) in [
            ("tickets.example", host("tickets.example", None)),
            ("tickets.example.", host("tickets.example", None)),
            ("TICKETS.example.", host("tickets.example", None)),
            ("tickets.example.:8443", host("tickets.example", Some(8443))),
            ("Tickets.Example:80", host("tickets.example", Some(80))),
            ("tickets.example:", host("tickets.example", None)),
            ("bücher.example", host("xn--bcher-kva.example", None)),
            ("BÜCHER.example.", host("xn--bcher-kva.example", None)),
            ("xn--bcher-kva.example", host("xn--bcher-kva.example", None)),
            ("127.0.0.1:8000", host("127.0.0.1", Some(8000))),
            ("[::1]:80", host("[::1]", Some(80))),
            ("[::1]", host("[::1]", None)),
            ("localhost", host("localhost", None)),
            ("", Err(BadTarget::Host)),
            (".", Err(BadTarget::Host)),
            ("tickets..example", Err(BadTarget::Host)),
            ("tickets.example..", Err(BadTarget::Host)),
            ("tick ets.example", Err(BadTarget::Host)),
            ("tickets%2eexample", Err(BadTarget::Host)),
            ("user@tickets.example", Err(BadTarget::Host)),
            ("tickets.example/x", Err(BadTarget::Host)),
            ("tickets.example:99999", Err(BadTarget::Host)),
            ("tickets.example:80:80", Err(BadTarget::Host)),
            ("tickets.example:+80", Err(BadTarget::Host)),
            ("::1", Err(BadTarget::Host)),
            ("[::1", Err(BadTarget::Host)),
            ("[::1]x", Err(BadTarget::Host)),
        ] {
            assert_eq!(read_host(raw), want, "{raw:?}");
        }
    }

    #[test]
    fn a_redirect_location_always_stays_on_the_site() {
        for (path, query, want) in [
            ("/checkout/cart", "item=5", "/checkout/cart?item=5"),
            ("/", "", "/"),
            ("//evil.example/x", "", "/evil.example/x"),
            ("///evil.example", "a=1", "/evil.example?a=1"),
            ("/\\evil.example", "", "/evil.example"),
            ("\\/evil.example", "", "/evil.example"),
        ] {
            assert_eq!(same_site_location(path, query), want, "{path:?}");
        }
    }
}

#[cfg(test)]
mod forwarded_tests {
    use super::forwarded_client;
    use std::net::IpAddr;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn without_trusted_networks_the_last_entry_of_all_lines_is_the_client() {
        let peer = ip("10.0.0.1");
        // Two header lines read as one list: the client's own first line loses.
        let entries = ["6.6.6.6", "203.0.113.9"];
        assert_eq!(forwarded_client(peer, &entries, &[]), ip("203.0.113.9"));
        assert_eq!(forwarded_client(peer, &[], &[]), peer);
        assert_eq!(forwarded_client(peer, &["junk"], &[]), peer);
    }

    #[test]
    fn trusted_networks_are_walked_from_the_right() {
        let trusted = [
            "10.0.0.0/8".parse().unwrap(),
            "192.168.1.7/32".parse().unwrap(),
        ];
        let peer = ip("10.0.0.1");
        let entries = ["6.6.6.6", "203.0.113.9", "192.168.1.7", "10.1.2.3"];
        assert_eq!(
            forwarded_client(peer, &entries, &trusted),
            ip("203.0.113.9")
        );
        // An untrusted peer is the client, whatever it claims.
        assert_eq!(
            forwarded_client(ip("198.51.100.4"), &entries, &trusted),
            ip("198.51.100.4")
        );
        // Garbage stops the walk at the last trusted hop.
        assert_eq!(
            forwarded_client(peer, &["1.2.3.4", "junk", "10.9.9.9"], &trusted),
            ip("10.9.9.9")
        );
    }
}
