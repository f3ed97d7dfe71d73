//! A string that never shows: room keys (`entry_secret`) and the process's own secrets
//! (`secret_key`, `signing_key`, `metrics_token`) are read into it.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::redact;

/// A string that must never appear in logs, responses or `Debug` output: it serialises
/// as [`redact::SET`] (so a room's `entry_secret` reads `"[set]"` in the admin API, the
/// audit log and the log line each change writes) and debugs as `Secret([redacted])`.
/// Read it with [`Secret::expose`], only where it is used.
#[derive(Clone, Default, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(transparent)]
pub struct Secret(String);

impl Serialize for Secret {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(redact::SET)
    }
}

impl Secret {
    pub fn new(s: impl Into<String>) -> Self {
        Self(s.into())
    }
    pub fn expose(&self) -> &str {
        &self.0
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([redacted])")
    }
}
