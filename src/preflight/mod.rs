//! Start-up's check of the settings: what `config` read (its types, defaults and layers
//! know nothing above the room model) checked against the rest of Anteroom. Here the
//! language catalog is loaded (`i18n_dir`), the certificates read, the `[[bypass]]`
//! rules, trusted proxies and route hosts parsed, and every declared room put through
//! the domain's room check and its custom template read, so a bad value stops start-up
//! with an error naming the field. It sits above the domain, the store and `tls/`, which
//! import `config`'s types and never this.
//!
//! What the check parses, it keeps: [`Settings::check`] returns the [`Prepared`] values
//! (trusted proxies, bypass rules, loaded certificates) that start-up hands to the engine
//! and the TLS listeners (`Application::build_prepared`), so each is parsed once.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use crate::config::{sentinel_url, ConfigError, Settings};
use crate::domain::bypass::Bypass;
use crate::domain::entry::EntryKeys;
use crate::tls::ReloadingCert;

mod gateway;

/// The settings' values in the typed form start-up uses, parsed once by the check.
#[derive(Debug)]
pub struct Prepared {
    /// `trusted_proxies`, parsed (a plain address is a /32 or /128).
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// The `[[bypass]]` rules, parsed.
    pub bypass: Bypass,
    /// The main listener's certificate (`tls_cert`, `tls_key`), loaded; none without TLS.
    pub main_cert: Option<Arc<ReloadingCert>>,
    /// The gateway's certificate (`gateway.tls_cert`, `gateway.tls_key`), loaded.
    pub gateway_cert: Option<Arc<ReloadingCert>>,
    /// The declared rooms' entry keys, parsed by the room check (empty from
    /// [`Settings::prepare`]: the engine then parses each on its first token check).
    pub entry_keys: EntryKeys,
}

/// One listener's certificate, loaded now (errors name the setting).
fn load_cert(
    paths: Option<crate::tls::CertPaths>,
) -> Result<Option<Arc<ReloadingCert>>, ConfigError> {
    paths
        .map(|p| ReloadingCert::load(p).map(Arc::new))
        .transpose()
}

impl Settings {
    /// Loads defaults, then the TOML file (if any), then `ANTEROOM_*` variables
    /// ([`Settings::read`]), and checks the result ([`Settings::validate`]).
    pub fn load(config_path: Option<&Path>) -> Result<Self, ConfigError> {
        Self::load_prepared(config_path).map(|(settings, _)| settings)
    }

    /// [`Settings::load`], keeping what the check parsed ([`Settings::check`]) for
    /// start-up.
    pub fn load_prepared(config_path: Option<&Path>) -> Result<(Self, Prepared), ConfigError> {
        let settings = Settings::read(config_path)?;
        let prepared = settings.check()?;
        Ok((settings, prepared))
    }

    /// Checks every range; the error names the offending field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.check().map(drop)
    }

    /// Parses only the values start-up uses ([`Prepared`]), without the rest of the
    /// check: for settings built in code and not put through [`Settings::check`]
    /// (`Application::build`). The errors are the check's.
    pub fn prepare(&self) -> Result<Prepared, ConfigError> {
        let trusted_proxies = self.trusted_proxy_nets()?;
        let bypass = Bypass::from_rules(&self.bypass)?;
        let (main_paths, gateway_paths) = (self.tls()?, self.gateway.tls()?);
        Ok(Prepared {
            trusted_proxies,
            bypass,
            main_cert: load_cert(main_paths)?,
            gateway_cert: load_cert(gateway_paths)?,
            entry_keys: EntryKeys::default(),
        })
    }

    /// [`Settings::validate`], returning the values it parsed: the trusted proxies, the
    /// bypass rules and the certificates, each parsed here and nowhere after.
    pub fn check(&self) -> Result<Prepared, ConfigError> {
        let invalid = |field: &str, message: &str| ConfigError::Invalid {
            field: field.into(),
            message: message.into(),
        };
        if self.listen.parse::<SocketAddr>().is_err() {
            return Err(invalid("listen", "must be an address like 127.0.0.1:8080"));
        }
        // The languages first: the rooms' `languages` are checked against them.
        if let Some(dir) = &self.i18n_dir {
            let catalog = crate::domain::i18n::catalog::Catalog::load(Some(dir))
                .map_err(|e| invalid("i18n_dir", &e.to_string()))?;
            crate::domain::i18n::catalog::install(catalog);
        }
        if let Some(url) = &self.redis_url {
            let ok = [
                "redis://",
                "redis+cluster://",
                "redis+unix://",
                "redis+sentinel://",
            ]
            .iter()
            .any(|p| url.starts_with(p));
            if !ok {
                return Err(invalid(
                    "redis_url",
                    "must start with redis://, redis+cluster://, redis+sentinel:// or redis+unix:// (TLS is not built in; terminate it with a local proxy such as stunnel)",
                ));
            }
            if url.starts_with("redis+sentinel://") {
                sentinel_url::parse_url(url).map_err(|m| invalid("redis_url", &m))?;
            }
        }
        let trusted_proxies = self.trusted_proxy_nets()?;
        let bypass = Bypass::from_rules(&self.bypass)?;
        self.gateway.validate(&self.listen)?;
        self.webhooks.validate()?;
        // The certificates are loaded here, so a bad file stops start-up naming it; the
        // listeners serve these (and SIGHUP reloads them).
        let (main_paths, gateway_paths) = (self.tls()?, self.gateway.tls()?);
        let main_cert = load_cert(main_paths)?;
        let gateway_cert = load_cert(gateway_paths)?;
        let prepared = Prepared {
            trusted_proxies,
            bypass,
            main_cert,
            gateway_cert,
            entry_keys: EntryKeys::default(),
        };
        if self.key_prefix.is_empty() || self.key_prefix.contains(['{', '}', ' ']) {
            return Err(invalid(
                "key_prefix",
                "must be non-empty, without braces or spaces",
            ));
        }
        if let Some(url) = &self.public_url {
            if url::Url::parse(url).is_err() {
                return Err(invalid("public_url", "must be an absolute URL"));
            }
        }
        if self.rate_limit.visitor_window_secs == 0 {
            return Err(invalid(
                "rate_limit.visitor_window_secs",
                "must be at least 1",
            ));
        }
        // Lua's unpack() is bounded by its C stack (~8000 values), so batches stay small.
        if self.reaper.batch_size == 0 || self.reaper.batch_size > 5000 {
            return Err(invalid("reaper.batch_size", "must be between 1 and 5000"));
        }
        if self.reaper.interval_ms < 10 {
            return Err(invalid("reaper.interval_ms", "must be at least 10"));
        }
        if self.reaper.keeper_interval_ms < 10 {
            return Err(invalid("reaper.keeper_interval_ms", "must be at least 10"));
        }
        if self.reaper.hidden_grace_secs > 86_400 {
            return Err(invalid("reaper.hidden_grace_secs", "must be at most 86400"));
        }
        if self.reaper.promote_interval_ms < 10 {
            return Err(invalid("reaper.promote_interval_ms", "must be at least 10"));
        }
        if self.store.response_timeout_ms == 0 {
            return Err(invalid("store.response_timeout_ms", "must be at least 1"));
        }
        if self.store.restore_hold_ms > 60_000 {
            return Err(invalid("store.restore_hold_ms", "must be at most 60000"));
        }
        if self.store.fail_open_pass_secs == 0 || self.store.fail_open_pass_secs > 3600 {
            return Err(invalid(
                "store.fail_open_pass_secs",
                "must be between 1 and 3600",
            ));
        }
        if self.store.connect_timeout_ms == 0 {
            return Err(invalid("store.connect_timeout_ms", "must be at least 1"));
        }
        self.admin.validate()?;
        let mut seen = std::collections::HashSet::new();
        for (i, room) in self.rooms.iter().enumerate() {
            if !seen.insert(room.id.as_str()) {
                return Err(invalid(&format!("rooms[{i}].id"), "is a duplicate"));
            }
            // The demo room's target is filled in at start.
            if room.target_url.is_empty() && self.demo && room.id == "demo" {
                continue;
            }
            crate::domain::room_check::check_keeping(room, &prepared.entry_keys).map_err(
                |(field, message)| ConfigError::Invalid {
                    field: format!("rooms[{i}].{field}"),
                    message,
                },
            )?;
            // A custom template is read and parsed now: a syntax error stops start-up
            // naming the file and line.
            crate::domain::custom_page::check_room(self, room).map_err(|message| {
                ConfigError::Invalid {
                    field: format!("rooms[{i}].template"),
                    message,
                }
            })?;
        }
        Ok(prepared)
    }
}
