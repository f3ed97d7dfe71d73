//! The `[gateway]` section: Anteroom's own reverse proxy in front of a site
//! (`docs/gateway.md`). Its defaults are the `[gateway]` table of `default.toml`; it runs
//! only when `listen` is set.

use std::net::SocketAddr;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{valid_room_id, ConfigError};

/// The built-in gateway: a reverse proxy on its own address that sends visitors without
/// a valid pass to their room's queue and everyone else on to `upstream`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GatewaySettings {
    /// Address the gateway binds, e.g. `"0.0.0.0:8000"` (an IP and a port; port 0 picks a
    /// free one). Unset: no gateway.
    pub listen: Option<String>,
    /// The site behind the gateway: an `http://host:port` URL without a path. Required
    /// with `listen`.
    pub upstream: Option<String>,
    /// Milliseconds allowed to open a connection to the upstream (past it: `504`).
    pub connect_timeout_ms: u64,
    /// Milliseconds allowed for the upstream to answer a request with its status and
    /// headers (past it: `504`). The bodies that follow stream without a deadline.
    pub response_timeout_ms: u64,
    /// Milliseconds a client has to send a request's headers (slow clients are cut off).
    pub header_read_timeout_ms: u64,
    /// PEM file with the certificate chain (leaf first) the gateway serves. With
    /// `tls_key`, the gateway speaks HTTPS only, HTTP/2 and HTTP/1.1 offered by ALPN, and
    /// sets its pass cookies `Secure`; the files are read again on SIGHUP.
    pub tls_cert: Option<PathBuf>,
    /// PEM file with the private key of `tls_cert`. Both or neither.
    pub tls_key: Option<PathBuf>,
    /// Idle keep-alive connections to the upstream kept open for reuse.
    pub pool_max_idle: usize,
    /// Seconds an idle connection to the upstream is kept before it is closed.
    pub pool_idle_secs: u64,
    /// The guarded parts of the site; a request no route matches passes straight through.
    #[serde(default)]
    pub routes: Vec<GatewayRoute>,
}

/// One `[[gateway.routes]]` entry: requests for `path_prefix` (on `host`, when given)
/// need a pass for `room`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct GatewayRoute {
    /// Only requests with this `Host` (or HTTP/2 `:authority`), both read the same way:
    /// any case, one trailing dot ignored, a name in Unicode the same as its punycode; a
    /// port in `Host` is ignored unless this names one too. Unset: any host.
    pub host: Option<String>,
    /// The path prefix guarded, starting with `/` (`"/"` guards the whole site). Compared
    /// with the request path after percent-decoding and `//` merging, in any ASCII case;
    /// a prefix ending in `/` also guards the path without it (`/shop/` guards `/shop`).
    /// Paths with `%2F`, `\`, `%3F`, `.`/`..` segments and the like are refused with
    /// `400` (docs/gateway.md#paths-and-hosts). The longest matching prefix wins, a route
    /// with a `host` before one without on a tie.
    pub path_prefix: String,
    /// The room whose pass lets a visitor in. One room may guard several routes.
    pub room: String,
}

impl GatewaySettings {
    /// Whether the gateway runs (`listen` set).
    pub fn enabled(&self) -> bool {
        self.listen.is_some()
    }

    /// The gateway's certificate files (`gateway.tls_cert`, `gateway.tls_key`): both or
    /// neither.
    pub fn tls(&self) -> Result<Option<crate::tls::CertPaths>, ConfigError> {
        crate::tls::CertPaths::from_pair(
            self.tls_cert.as_ref(),
            self.tls_key.as_ref(),
            "gateway.tls_cert",
            "gateway.tls_key",
        )
    }

    /// The upstream URL, checked: `http://`, a host, no path, query or credentials.
    pub fn upstream_url(&self) -> Result<url::Url, ConfigError> {
        let invalid = |message: &str| ConfigError::Invalid {
            field: "gateway.upstream".into(),
            message: message.into(),
        };
        let raw = self
            .upstream
            .as_deref()
            .ok_or_else(|| invalid("is required when gateway.listen is set"))?;
        let url = url::Url::parse(raw)
            .map_err(|_| invalid("must be a URL like http://127.0.0.1:3000"))?;
        if url.scheme() != "http" {
            return Err(invalid(
                "must start with http:// (TLS to the upstream is not built in)",
            ));
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(invalid("must name a host"));
        }
        if url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
            return Err(invalid(
                "must have no path or query: requests keep their own path",
            ));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(invalid("must not carry credentials"));
        }
        Ok(url)
    }

    /// Checks every field; the error names it (`gateway.routes[2].room`).
    pub fn validate(&self, main_listen: &str) -> Result<(), ConfigError> {
        let invalid = |field: String, message: &str| ConfigError::Invalid {
            field,
            message: message.into(),
        };
        let Some(listen) = &self.listen else {
            if self.upstream.is_some() || !self.routes.is_empty() || self.tls_cert.is_some() {
                return Err(invalid(
                    "gateway.listen".into(),
                    "is required when gateway.upstream, gateway.routes or gateway.tls_cert is set",
                ));
            }
            return Ok(());
        };
        self.tls()?;
        let addr: SocketAddr = listen.parse().map_err(|_| {
            invalid(
                "gateway.listen".into(),
                "must be an address like 0.0.0.0:8000",
            )
        })?;
        if addr.port() != 0 && main_listen.parse::<SocketAddr>().ok() == Some(addr) {
            return Err(invalid(
                "gateway.listen".into(),
                "must differ from listen (the queue's own address)",
            ));
        }
        self.upstream_url()?;
        for (field, v) in [
            ("connect_timeout_ms", self.connect_timeout_ms),
            ("response_timeout_ms", self.response_timeout_ms),
            ("header_read_timeout_ms", self.header_read_timeout_ms),
            ("pool_idle_secs", self.pool_idle_secs),
        ] {
            if v == 0 {
                return Err(invalid(format!("gateway.{field}"), "must be at least 1"));
            }
        }
        for (i, r) in self.routes.iter().enumerate() {
            let field = |name: &str| format!("gateway.routes[{i}].{name}");
            if !r.path_prefix.starts_with('/') {
                return Err(invalid(field("path_prefix"), "must start with '/'"));
            }
            if !valid_room_id(&r.room) {
                return Err(invalid(field("room"), "must match [A-Za-z0-9_-]{1,64}"));
            }
            if let Some(h) = &r.host {
                if crate::domain::request_target::read_host(h).is_err() {
                    return Err(invalid(
                        field("host"),
                        "must be a host name like shop.example.com (optionally with :port)",
                    ));
                }
            }
            let twice = self.routes[..i].iter().any(|o| {
                let host = |h: &Option<String>| {
                    h.as_deref()
                        .map(|h| crate::domain::request_target::read_host(h).ok())
                };
                o.path_prefix == r.path_prefix && host(&o.host) == host(&r.host)
            });
            if twice {
                return Err(invalid(
                    field("path_prefix"),
                    "is given twice for the same host",
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gw() -> GatewaySettings {
        GatewaySettings {
            listen: Some("127.0.0.1:8000".into()),
            upstream: Some("http://127.0.0.1:3000".into()),
            routes: vec![GatewayRoute {
                host: None,
                path_prefix: "/checkout".into(),
                room: "sale".into(),
            }],
            ..crate::config::Settings::default().gateway
        }
    }

    fn err(g: &GatewaySettings) -> String {
        g.validate("127.0.0.1:8080").unwrap_err().to_string()
    }

    #[test]
    fn a_good_gateway_validates_and_an_absent_one_is_off() {
        gw().validate("127.0.0.1:8080").unwrap();
        let off = crate::config::Settings::default().gateway;
        assert!(!off.enabled());
        off.validate("127.0.0.1:8080").unwrap();
    }

    #[test]
    fn each_bad_field_is_named() {
        let mut g = gw();
        g.listen = Some("localhost".into());
        assert!(err(&g).contains("`gateway.listen`"), "{}", err(&g));
        let mut g = gw();
        g.listen = Some("127.0.0.1:8080".into());
        assert!(err(&g).contains("must differ"));
        for (up, why) in [
            (None, "required"),
            (Some("https://x.example"), "http://"),
            (Some("http://x.example/base"), "no path"),
            (Some("not a url"), "URL"),
        ] {
            let mut g = gw();
            g.upstream = up.map(Into::into);
            let e = err(&g);
            assert!(e.contains("`gateway.upstream`") && e.contains(why), "{e}");
        }
        let mut g = gw();
        g.routes[0].path_prefix = "checkout".into();
        assert!(err(&g).contains("`gateway.routes[0].path_prefix`"));
        let mut g = gw();
        g.routes[0].room = "a b".into();
        assert!(err(&g).contains("`gateway.routes[0].room`"));
        let mut g = gw();
        g.routes[0].host = Some("bad host".into());
        assert!(err(&g).contains("`gateway.routes[0].host`"));
        let mut g = gw();
        g.routes.push(g.routes[0].clone());
        assert!(err(&g).contains("`gateway.routes[1].path_prefix`"));
        let mut g = gw();
        g.response_timeout_ms = 0;
        assert!(err(&g).contains("`gateway.response_timeout_ms`"));
        let mut g = gw();
        g.listen = None;
        assert!(err(&g).contains("`gateway.listen`"));
    }
}
