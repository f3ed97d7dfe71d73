//! The `[gateway]` section's check (it reads route hosts with the domain's host reader,
//! so it sits here, above the domain, rather than beside the section's type in `config`).

use std::net::SocketAddr;

use crate::config::{ConfigError, GatewaySettings};
use crate::room::valid_room_id;

impl GatewaySettings {
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
    use crate::config::GatewayRoute;

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
