//! `[[bypass]]` rules: requests that pass `verify` without a pass — monitoring and
//! health checks (a secret header), declared crawlers (a `User-Agent` substring, which
//! anyone can send), an office or a partner network (a CIDR), static files (a path
//! glob). What each rule stops and what it does not: `docs/abuse.md`.

use std::net::IpAddr;

use sha2::{Digest, Sha256};

use crate::config::{BypassRule, ConfigError};

/// What a rule looks at in a request. HTTP-free: the web layer fills it in.
pub struct RequestFacts<'a> {
    /// The client IP (as `trust_forwarded_for` finds it).
    pub ip: IpAddr,
    pub user_agent: Option<&'a str>,
    /// The original path (query left out).
    pub path: Option<&'a str>,
    /// Looks a request header up by its lowercase name.
    pub header: &'a dyn Fn(&str) -> Option<&'a str>,
}

enum Condition {
    Net(ipnet::IpNet),
    UserAgent(String),
    /// Lowercase header name and the SHA-256 of the expected value (compared digest to
    /// digest, so the time taken says nothing of how much of a guess was right).
    Header(String, [u8; 32]),
    Path(glob::Pattern),
}

struct Rule {
    name: String,
    condition: Condition,
}

/// The parsed rules, in the configuration's order (the first match names the bypass).
#[derive(Default)]
pub struct Bypass {
    rules: Vec<Rule>,
}

impl std::fmt::Debug for Bypass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.rules.iter().map(|r| r.name.as_str()).collect();
        f.debug_struct("Bypass").field("rules", &names).finish()
    }
}

fn digest(s: &str) -> [u8; 32] {
    Sha256::digest(s.as_bytes()).into()
}

impl Bypass {
    /// Parses and checks the rules; the error names the rule and what is wrong.
    pub fn from_rules(rules: &[BypassRule]) -> Result<Self, ConfigError> {
        let mut out: Vec<Rule> = Vec::with_capacity(rules.len());
        for (i, r) in rules.iter().enumerate() {
            let invalid = |message: String| ConfigError::Invalid {
                field: format!("bypass[{i}]"),
                message,
            };
            let name_ok = !r.name.is_empty()
                && r.name.len() <= 64
                && r.name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
            if !name_ok {
                return Err(invalid(
                    "name must be 1-64 letters, digits, '-' or '_'".into(),
                ));
            }
            if out.iter().any(|o| o.name == r.name) {
                return Err(invalid(format!("name {:?} is used twice", r.name)));
            }
            let given = [
                r.cidr.is_some(),
                r.user_agent.is_some(),
                r.header.is_some() || r.value.is_some(),
                r.path.is_some(),
            ];
            if given.iter().filter(|&&g| g).count() != 1 {
                return Err(invalid(format!(
                    "rule {:?} needs exactly one condition: cidr, user_agent, header (with value) or path",
                    r.name
                )));
            }
            let condition = if let Some(c) = &r.cidr {
                let net = c
                    .parse::<ipnet::IpNet>()
                    .or_else(|_| c.parse::<IpAddr>().map(ipnet::IpNet::from))
                    .map_err(|_| invalid(format!("cidr {c:?} is not a network or address")))?;
                Condition::Net(net.trunc())
            } else if let Some(ua) = &r.user_agent {
                if ua.is_empty() {
                    return Err(invalid("user_agent must not be empty".into()));
                }
                Condition::UserAgent(ua.clone())
            } else if let Some(p) = &r.path {
                if !p.starts_with('/') {
                    return Err(invalid(format!("path {p:?} must start with '/'")));
                }
                let pattern = glob::Pattern::new(p)
                    .map_err(|e| invalid(format!("path {p:?} is not a glob: {e}")))?;
                Condition::Path(pattern)
            } else {
                let (Some(h), Some(v)) = (&r.header, &r.value) else {
                    return Err(invalid("header and value go together".into()));
                };
                let name_ok = !h.is_empty()
                    && h.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b));
                if !name_ok {
                    return Err(invalid(format!("header {h:?} is not a header name")));
                }
                if v.expose().len() < 16 {
                    return Err(invalid(
                        "value must be at least 16 characters (it is a shared secret)".into(),
                    ));
                }
                Condition::Header(h.to_ascii_lowercase(), digest(v.expose()))
            };
            out.push(Rule {
                name: r.name.clone(),
                condition,
            });
        }
        Ok(Self { rules: out })
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The name of the first rule the request matches.
    pub fn matching(&self, req: &RequestFacts<'_>) -> Option<&str> {
        self.rules
            .iter()
            .find(|r| match &r.condition {
                Condition::Net(net) => net.contains(&canonical(req.ip)),
                Condition::UserAgent(s) => req.user_agent.is_some_and(|ua| ua.contains(s)),
                Condition::Header(name, want) => {
                    (req.header)(name).is_some_and(|got| digest(got) == *want)
                }
                Condition::Path(p) => req.path.is_some_and(|path| {
                    let path = path.split(['?', '#']).next().unwrap_or(path);
                    p.matches_with(
                        path,
                        glob::MatchOptions {
                            require_literal_separator: true,
                            ..glob::MatchOptions::new()
                        },
                    )
                }),
            })
            .map(|r| r.name.as_str())
    }
}

/// An IPv4 address seen as IPv6 (`::ffff:a.b.c.d`, a dual-stack socket) is the IPv4 one.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::room::Secret;

    fn rule(name: &str) -> BypassRule {
        BypassRule {
            name: name.into(),
            ..BypassRule::default()
        }
    }

    fn rules() -> Bypass {
        Bypass::from_rules(&[
            BypassRule {
                cidr: Some("10.1.0.0/16".into()),
                ..rule("office")
            },
            BypassRule {
                cidr: Some("2001:db8:1::/48".into()),
                ..rule("office6")
            },
            BypassRule {
                user_agent: Some("Googlebot/".into()),
                ..rule("crawler")
            },
            BypassRule {
                header: Some("X-Anteroom-Bypass".into()),
                value: Some(Secret::new("monitor-secret-0123456789")),
                ..rule("monitor")
            },
            BypassRule {
                path: Some("/static/*".into()),
                ..rule("static")
            },
        ])
        .unwrap()
    }

    fn facts<'a>(
        ip: &str,
        ua: Option<&'a str>,
        path: Option<&'a str>,
        header: &'a dyn Fn(&str) -> Option<&'a str>,
    ) -> RequestFacts<'a> {
        RequestFacts {
            ip: ip.parse().unwrap(),
            user_agent: ua,
            path,
            header,
        }
    }

    const NONE: &dyn Fn(&str) -> Option<&'static str> = &|_| None;

    #[test]
    fn each_kind_matches_and_its_near_miss_does_not() {
        let b = rules();
        let m = |f: RequestFacts<'_>| b.matching(&f).map(str::to_string);
        assert_eq!(
            m(facts("10.1.200.3", None, None, NONE)).as_deref(),
            Some("office")
        );
        assert_eq!(m(facts("10.2.0.1", None, None, NONE)), None);
        // A dual-stack socket's IPv4-mapped address is the IPv4 one.
        assert_eq!(
            m(facts("::ffff:10.1.0.9", None, None, NONE)).as_deref(),
            Some("office")
        );
        assert_eq!(
            m(facts("2001:db8:1:ffff::1", None, None, NONE)).as_deref(),
            Some("office6")
        );
        assert_eq!(m(facts("2001:db8:2::1", None, None, NONE)), None);
        let ua = "Mozilla/5.0 (compatible; Googlebot/2.1)";
        assert_eq!(
            m(facts("1.2.3.4", Some(ua), None, NONE)).as_deref(),
            Some("crawler")
        );
        assert_eq!(m(facts("1.2.3.4", Some("googlebot/2.1"), None, NONE)), None);
        let good: &dyn Fn(&str) -> Option<&'static str> =
            &|h| (h == "x-anteroom-bypass").then_some("monitor-secret-0123456789");
        let bad: &dyn Fn(&str) -> Option<&'static str> =
            &|h| (h == "x-anteroom-bypass").then_some("monitor-secret-012345678");
        assert_eq!(
            m(facts("1.2.3.4", None, None, good)).as_deref(),
            Some("monitor")
        );
        assert_eq!(m(facts("1.2.3.4", None, None, bad)), None);
        assert_eq!(
            m(facts("1.2.3.4", None, Some("/static/app.css?v=3"), NONE)).as_deref(),
            Some("static")
        );
        // `*` stays within a segment; another prefix is not the rule's.
        assert_eq!(
            m(facts("1.2.3.4", None, Some("/static/a/b.css"), NONE)),
            None
        );
        assert_eq!(
            m(facts("1.2.3.4", None, Some("/checkout/static/x"), NONE)),
            None
        );
        assert_eq!(m(facts("1.2.3.4", Some("curl/8"), Some("/"), NONE)), None);
    }

    #[test]
    fn bad_rules_are_refused_with_the_reason() {
        let err = |r: BypassRule| Bypass::from_rules(&[r]).unwrap_err().to_string();
        assert!(err(rule("none")).contains("exactly one condition"));
        assert!(err(BypassRule {
            cidr: Some("10.0.0.0/8".into()),
            path: Some("/x".into()),
            ..rule("two")
        })
        .contains("exactly one condition"));
        assert!(err(BypassRule {
            cidr: Some("10.0.0.0/33".into()),
            ..rule("net")
        })
        .contains("cidr"));
        assert!(err(BypassRule {
            header: Some("X-Key".into()),
            ..rule("h")
        })
        .contains("together"));
        assert!(err(BypassRule {
            header: Some("X-Key".into()),
            value: Some(Secret::new("short")),
            ..rule("h")
        })
        .contains("16 characters"));
        assert!(err(BypassRule {
            path: Some("static/*".into()),
            ..rule("p")
        })
        .contains("start with '/'"));
        assert!(err(BypassRule {
            user_agent: Some("x".into()),
            ..rule("bad name")
        })
        .contains("name"));
        let twice = Bypass::from_rules(&[
            BypassRule {
                user_agent: Some("a".into()),
                ..rule("same")
            },
            BypassRule {
                user_agent: Some("b".into()),
                ..rule("same")
            },
        ]);
        assert!(twice.unwrap_err().to_string().contains("twice"));
    }
}
