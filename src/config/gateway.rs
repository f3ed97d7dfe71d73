//! The `[gateway]` section: Anteroom's own reverse proxy in front of a site
//! (`docs/gateway.md`). Its defaults are the `[gateway]` table of `default.toml`; it runs
//! only when `listen` is set.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::ConfigError;

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
    pub fn tls(&self) -> Result<Option<super::CertPaths>, ConfigError> {
        super::CertPaths::from_pair(
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
}
