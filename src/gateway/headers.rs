//! Header rules of a reverse proxy (RFC 9110 §7.6.1, RFC 7239): hop-by-hop headers are
//! the connection's, not the message's, and are removed both ways; the upstream is told
//! who the client is with `X-Forwarded-For/-Proto/-Host` and `Forwarded`. Pure
//! functions over an [`http::HeaderMap`].

use std::net::IpAddr;

use http::header::{
    HeaderName, HeaderValue, CONNECTION, FORWARDED, PROXY_AUTHENTICATE, PROXY_AUTHORIZATION, TE,
    TRAILER, TRANSFER_ENCODING, UPGRADE,
};
use http::HeaderMap;

// Names built once, at compile time: looking a header up by a `&str` parses the name on
// every call (a tenth of the gateway's CPU per request, measured with callgrind).
const KEEP_ALIVE: HeaderName = HeaderName::from_static("keep-alive");
const PROXY_CONNECTION: HeaderName = HeaderName::from_static("proxy-connection");
const X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");
const X_FORWARDED_PROTO: HeaderName = HeaderName::from_static("x-forwarded-proto");
const X_FORWARDED_HOST: HeaderName = HeaderName::from_static("x-forwarded-host");

/// Headers that only ever concern one hop.
const HOP_BY_HOP: [HeaderName; 9] = [
    CONNECTION,
    KEEP_ALIVE,
    PROXY_CONNECTION,
    PROXY_AUTHENTICATE,
    PROXY_AUTHORIZATION,
    TE,
    TRAILER,
    TRANSFER_ENCODING,
    UPGRADE,
];

/// The header an origin ends a visitor's session with (`revoke`); never forwarded to
/// the browser.
pub const COMMAND: HeaderName = HeaderName::from_static("anteroom-command");
/// The visitor id the gateway tells the upstream (what nginx's recipe copies from
/// `verify`); whatever a client sends under this name is dropped.
pub const VISITOR: HeaderName = HeaderName::from_static("x-anteroom-visitor");
/// The bypass rule a request came in by.
pub const BYPASS: HeaderName = HeaderName::from_static("x-anteroom-bypass");

/// Whether the message asks to switch protocols (`Connection: upgrade` and `Upgrade`).
pub fn is_upgrade(h: &HeaderMap) -> bool {
    h.contains_key(UPGRADE)
        && h.get_all(CONNECTION)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|t| t.trim().eq_ignore_ascii_case("upgrade"))
}

/// Removes the hop-by-hop headers, those `Connection` names included. For an upgrade
/// (see [`is_upgrade`]), `Connection: upgrade` and the `Upgrade` value are put back:
/// the switch is what the two ends negotiate through the proxy.
pub fn strip_hop_by_hop(h: &mut HeaderMap) {
    // The usual message has none of them: one pass over its few names (compared as
    // the interned standard headers they are, or by their text) instead of a hashed
    // lookup for each of the nine.
    if !h.keys().any(|k| HOP_BY_HOP.contains(k)) {
        return;
    }
    let upgrade = is_upgrade(h).then(|| h.get(UPGRADE).cloned()).flatten();
    let named: Vec<HeaderName> = h
        .get_all(CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|t| HeaderName::from_bytes(t.trim().as_bytes()).ok())
        .collect();
    for n in named {
        h.remove(n);
    }
    for n in &HOP_BY_HOP {
        h.remove(n);
    }
    if let Some(u) = upgrade {
        h.insert(CONNECTION, HeaderValue::from_static("upgrade"));
        h.insert(UPGRADE, u);
    }
}

/// Who sent the request, as the gateway sees it.
pub struct Client<'a> {
    /// The TCP peer.
    pub peer: IpAddr,
    /// `http`, or the `X-Forwarded-Proto` of a trusted proxy in front.
    pub proto: &'static str,
    /// The `Host` the client asked for.
    pub host: Option<&'a str>,
    /// The peer is a trusted proxy (`trust_forwarded_for`): its forwarding headers are
    /// kept and this hop is appended; otherwise a client's own are replaced.
    pub trusted: bool,
}

/// The scheme the client used: a trusted proxy's `X-Forwarded-Proto` (`https` or
/// `http`), else `http` (the gateway itself speaks plain HTTP).
pub fn client_proto(h: &HeaderMap, trusted: bool) -> &'static str {
    let https = trusted
        && h.get(X_FORWARDED_PROTO)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(',').next())
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("https"));
    if https {
        "https"
    } else {
        "http"
    }
}

/// Sets `X-Forwarded-For`, `X-Forwarded-Proto`, `X-Forwarded-Host` and `Forwarded`.
///
/// Built by pushing onto strings sized once, the peer's IPv4 address written digit by
/// digit: `format!` and `Ipv4Addr`'s `Display` made this function a tenth of the
/// gateway's instructions per request (callgrind, BENCHMARKS.md's lever table).
pub fn set_forwarded(h: &mut HeaderMap, c: &Client<'_>) {
    let mut peer = String::with_capacity(48);
    push_ip(&mut peer, c.peer);
    let xff = match h.get(X_FORWARDED_FOR).and_then(|v| v.to_str().ok()) {
        Some(prior) if c.trusted => {
            let mut v = String::with_capacity(prior.len() + 2 + peer.len());
            v.push_str(prior);
            v.push_str(", ");
            v.push_str(&peer);
            v
        }
        _ => peer.clone(),
    };
    let host_len = c.host.map_or(0, |h| h.len() + 8);
    let mut element = String::with_capacity(peer.len() + 20 + host_len);
    element.push_str("for=");
    match c.peer {
        IpAddr::V6(_) => {
            element.push_str("\"[");
            element.push_str(&peer);
            element.push_str("]\"");
        }
        IpAddr::V4(_) => element.push_str(&peer),
    }
    element.push_str(";proto=");
    element.push_str(c.proto);
    if let Some(host) = c.host {
        element.push_str(";host=\"");
        if host.contains(['"', '\\']) {
            element.extend(host.chars().filter(|&ch| ch != '"' && ch != '\\'));
        } else {
            element.push_str(host);
        }
        element.push('"');
    }
    let forwarded = match h.get(FORWARDED).and_then(|v| v.to_str().ok()) {
        Some(prior) if c.trusted => format!("{prior}, {element}"),
        _ => element,
    };
    let set = |h: &mut HeaderMap, name: HeaderName, v: &str| {
        if let Ok(v) = HeaderValue::from_str(v) {
            h.insert(name, v);
        }
    };
    set(h, X_FORWARDED_FOR, &xff);
    set(h, FORWARDED, &forwarded);
    h.insert(X_FORWARDED_PROTO, HeaderValue::from_static(c.proto));
    let keep_host = c.trusted && h.contains_key(X_FORWARDED_HOST);
    match c.host {
        Some(host) if !keep_host => set(h, X_FORWARDED_HOST, host),
        None if !keep_host => {
            h.remove(X_FORWARDED_HOST);
        }
        _ => {}
    }
}

/// `ip` as `Display` writes it; an IPv4 address without the formatting machinery.
fn push_ip(out: &mut String, ip: IpAddr) {
    match ip {
        IpAddr::V4(v4) => {
            for (i, &n) in v4.octets().iter().enumerate() {
                if i > 0 {
                    out.push('.');
                }
                if n >= 100 {
                    out.push(char::from(b'0' + n / 100));
                }
                if n >= 10 {
                    out.push(char::from(b'0' + n / 10 % 10));
                }
                out.push(char::from(b'0' + n % 10));
            }
        }
        IpAddr::V6(v6) => {
            use std::fmt::Write;
            // unwrap: writing to a String cannot fail.
            write!(out, "{v6}").unwrap();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn hop_by_hop_headers_go_and_an_upgrade_survives() {
        let mut h = map(&[
            ("connection", "keep-alive, x-secret"),
            ("keep-alive", "timeout=5"),
            ("x-secret", "1"),
            ("te", "trailers"),
            ("transfer-encoding", "chunked"),
            ("proxy-authorization", "Basic x"),
            ("accept", "*/*"),
        ]);
        strip_hop_by_hop(&mut h);
        let names: Vec<&str> = h.keys().map(|k| k.as_str()).collect();
        assert_eq!(names, vec!["accept"]);

        let mut h = map(&[("connection", "Upgrade"), ("upgrade", "websocket")]);
        assert!(is_upgrade(&h));
        strip_hop_by_hop(&mut h);
        assert_eq!(h["connection"], "upgrade");
        assert_eq!(h["upgrade"], "websocket");
        assert!(!is_upgrade(&map(&[("upgrade", "websocket")])));
    }

    #[test]
    fn forwarding_headers_replace_a_clients_and_extend_a_trusted_proxys() {
        let client = |trusted| Client {
            peer: "10.0.0.2".parse().unwrap(),
            proto: "http",
            host: Some("shop.example"),
            trusted,
        };
        let mut h = map(&[
            ("x-forwarded-for", "6.6.6.6"),
            ("forwarded", "for=6.6.6.6"),
            ("x-forwarded-host", "evil.example"),
        ]);
        set_forwarded(&mut h, &client(false));
        assert_eq!(h["x-forwarded-for"], "10.0.0.2");
        assert_eq!(
            h["forwarded"],
            "for=10.0.0.2;proto=http;host=\"shop.example\""
        );
        assert_eq!(h["x-forwarded-host"], "shop.example");
        assert_eq!(h["x-forwarded-proto"], "http");

        let mut h = map(&[("x-forwarded-for", "1.2.3.4"), ("forwarded", "for=1.2.3.4")]);
        set_forwarded(&mut h, &client(true));
        assert_eq!(h["x-forwarded-for"], "1.2.3.4, 10.0.0.2");
        assert!(h["forwarded"]
            .to_str()
            .unwrap()
            .starts_with("for=1.2.3.4, for=10.0.0.2;"));

        let mut h = HeaderMap::new();
        let v6 = Client {
            peer: "::1".parse().unwrap(),
            host: None,
            ..client(false)
        };
        set_forwarded(&mut h, &v6);
        assert_eq!(h["forwarded"], "for=\"[::1]\";proto=http");
    }

    #[test]
    fn an_address_is_written_as_display_writes_it() {
        for ip in [
            "0.0.0.0",
            "9.10.99.100",
            "127.0.0.1",
            "255.255.255.255",
            "10.200.3.45",
            "::1",
            "2001:db8::8a2e:370:7334",
            "::ffff:1.2.3.4",
        ] {
            let ip: IpAddr = ip.parse().unwrap();
            let mut out = String::new();
            push_ip(&mut out, ip);
            assert_eq!(out, ip.to_string());
        }
    }

    #[test]
    fn only_a_trusted_proxy_says_https() {
        let h = map(&[("x-forwarded-proto", "https")]);
        assert_eq!(client_proto(&h, true), "https");
        assert_eq!(client_proto(&h, false), "http");
        assert_eq!(client_proto(&HeaderMap::new(), true), "http");
    }
}
