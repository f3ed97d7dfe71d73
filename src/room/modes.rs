//! A room's modes: how it lets visitors in (`mode`), who may join (`entry`) and what a
//! newcomer must do first (`challenge`). Each is a lowercase word in a file, the admin
//! API and the store's config hash.

use serde::{Deserialize, Serialize};

/// A room's `challenge`.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ChallengeMode {
    #[default]
    Off,
    /// Proof of work before a new place.
    Pow,
}

impl ChallengeMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Pow => "pow",
        }
    }
}

/// A room's `mode`: how it lets visitors in.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum QueueMode {
    /// A line in order of arrival (with the room's lanes), capacity and the rate cap
    /// deciding when the next visitor goes in.
    #[default]
    Fifo,
    /// No line: every join is let in at once, capacity and the rate cap ignored (stock is
    /// still kept, so a sale never oversells). Sessions are recorded as ever.
    Passthrough,
    /// Nobody is let in and no new place is given (join answers `rejected`); visitors
    /// already in line keep their places for when the room admits again.
    Reject,
    /// Each admission draws uniformly among those waiting: a visitor's place in line is
    /// `HMAC-SHA256(seed, visitor id)`, the seed revealed when the room closes or its
    /// event ends (`GET /api/rooms/{room}/fairness`).
    Random,
}

impl QueueMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fifo => "fifo",
            Self::Passthrough => "passthrough",
            Self::Reject => "reject",
            Self::Random => "random",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "fifo" => Self::Fifo,
            "passthrough" => Self::Passthrough,
            "reject" => Self::Reject,
            "random" => Self::Random,
            _ => return None,
        })
    }
}

/// A room's `entry`.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum EntryMode {
    /// Anyone may join (a token, when presented, still gives one place per `sub`).
    #[default]
    Open,
    /// A join that needs a new place must present a valid enqueue token.
    Token,
}

impl EntryMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Token => "token",
        }
    }
}
