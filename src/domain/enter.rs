//! Joining a room's line, whichever door the visitor comes through: the JSON API
//! (`POST /api/rooms/{room}/join`), the queue page (`GET /r/{room}`) and the socket's
//! handshake (`GET /r/{room}/ws`). Each door reads its request into an [`EnterRequest`],
//! calls [`Engine::enter`] (the socket: [`Engine::check_entry`], its handshake, then
//! [`Engine::take_place`], so a plain `GET` changes nothing) and translates the one
//! [`EnterOutcome`] into JSON, a page or a `101`. The per-IP limiter stays in the doors:
//! it runs before a body is read.
//!
//! The checks, in order (docs/http-api.md#routes):
//!
//! 1. a place receipt, if one came: after the store lost its data, the place it names is
//!    put back (the per-visitor limit is counted first);
//! 2. the room's configuration, read at most once per
//!    [`ROOM_CACHE_TTL`](super::admission::ROOM_CACHE_TTL) (with `store.fail_open`, a
//!    declared room's stands in while the store is unreachable);
//! 3. who joins: an enqueue token's person, in the token's lane; otherwise the visitor
//!    presented (a new one when none), and in an `entry = "token"` room only one who
//!    already holds a place or a session;
//! 4. the proof of work of a `challenge = "pow"` room (none for a visitor who holds a
//!    place or a session);
//! 5. the per-visitor limit (unless counted at 1, or by the door);
//! 6. the join, a new place counting against the room's per-network cap
//!    (`max_places_per_ip`).
//!
//! **A store failure is decided here, once.** Whichever step the store did not answer
//! at, nothing was joined and the outcome is [`EnterOutcome::StoreDown`] with the
//! identity the join was being made under: every door hands it back (the API's
//! `visitor_token` and cookie, the page's cookie), so the retry finds the same place.
//! A store that is restoring after a data loss stays an error (`store_restoring`).

use std::net::IpAddr;
use std::sync::Arc;

use super::admission::{resolve_return, Engine, Entrant, VisitorView};
use super::identity::{ReceiptError, VisitorId};
use super::pow::{Challenge, PowError};
use super::ratelimit::LimitedAction;
use crate::domain::error::DomainError;
use crate::room::RoomConfig;
use crate::store::JoinOptions;

/// What a door read from its request.
#[derive(Debug, Clone, Copy)]
pub struct EnterRequest<'a> {
    /// The room (its id already checked).
    pub room: &'a str,
    /// The identity presented (token or cookie, signature checked); `None`: a newcomer.
    pub visitor: Option<&'a VisitorId>,
    /// An enqueue token the site signed (one place per person, maybe in a lane).
    pub enqueue_token: Option<&'a str>,
    /// A proof-of-work solution (ALTCHA payload, base64).
    pub pow_solution: Option<&'a str>,
    /// The place receipt of an earlier answer (puts a place back after a data loss).
    pub place_receipt: Option<&'a str>,
    /// The client's address: a new place counts against its network's cap.
    pub ip: IpAddr,
    /// The visitor's `?return=`: where an admitted visitor goes, if it stays on the
    /// room's target's origin ([`resolve_return`]).
    pub return_to: Option<&'a str>,
    /// The per-visitor limit to count this join under; `None` when the door counted it
    /// already (the socket a queue page opens with its grant).
    pub count_as: Option<LimitedAction>,
    /// The visitor chose to join (the join route, the page's "Join the line"). `false`
    /// for a page load or a socket: a no-show (docs/outflow.md#no-shows) who comes back
    /// that way is told so (`state: "no_show"`) instead of being queued behind their back.
    pub rejoin: bool,
}

/// How a join ended.
#[derive(Debug)]
pub enum EnterOutcome {
    /// Where the visitor stands now: in line, let in, or told that the room is closed,
    /// sold out, not admitting…
    Joined {
        /// Who joined (an enqueue token's person, or the visitor presented).
        visitor: VisitorId,
        view: Box<VisitorView>,
        cfg: Arc<RoomConfig>,
    },
    /// A place put back from a place receipt after the store lost its data (decided
    /// before the room's configuration is read).
    Restored { view: Box<VisitorView> },
    /// No place yet, and the room asks a proof of work first (none came, or it was
    /// refused). A client is told [`DomainError::Challenge`] with the fresh challenge
    /// ([`Self::into_refusal`]); the queue page shows `visitor` a page that solves it.
    ProofNeeded {
        visitor: VisitorId,
        cfg: Arc<RoomConfig>,
        error: PowError,
        fresh: Box<Challenge>,
    },
    /// The store did not answer: nothing was joined. Hand `visitor` back (the identity
    /// the join was made under) so the retry finds the same place.
    StoreDown { visitor: VisitorId },
}

impl EnterOutcome {
    /// The refusal a client is told for [`Self::ProofNeeded`] and [`Self::StoreDown`];
    /// the view otherwise.
    pub fn into_refusal(self) -> Result<Box<VisitorView>, DomainError> {
        match self {
            Self::Joined { view, .. } | Self::Restored { view } => Ok(view),
            Self::ProofNeeded { error, fresh, .. } => Err(DomainError::Challenge { error, fresh }),
            Self::StoreDown { .. } => Err(DomainError::Unavailable),
        }
    }
}

/// A join whose checks all passed: [`Engine::take_place`] takes the place.
#[derive(Debug)]
pub struct Cleared {
    room: String,
    visitor: VisitorId,
    cfg: Arc<RoomConfig>,
    redirect_base: Option<String>,
    opts: JoinOptions,
    /// Look for a no-show before joining (a known visitor who did not choose to join).
    told_first: bool,
}

impl Cleared {
    /// Who joins (an enqueue token's person, or the visitor presented).
    pub fn visitor(&self) -> &VisitorId {
        &self.visitor
    }

    /// Where an admitted visitor is sent instead of the room's target (a validated
    /// `?return=`).
    pub fn redirect_base(&self) -> Option<&str> {
        self.redirect_base.as_deref()
    }
}

/// What [`Engine::check_entry`] found: the join may go ahead, or it is already answered.
#[derive(Debug)]
pub enum Checked {
    Cleared(Box<Cleared>),
    Answered(EnterOutcome),
}

impl Engine {
    /// Joins `req.room`'s line (idempotent per visitor): the checks of the module doc,
    /// then the join.
    pub async fn enter(&self, req: EnterRequest<'_>) -> Result<EnterOutcome, DomainError> {
        match self.check_entry(req).await? {
            Checked::Cleared(c) => self.take_place(*c).await,
            Checked::Answered(outcome) => Ok(outcome),
        }
    }

    /// Steps 1–5 of the module doc, without taking a new place.
    pub async fn check_entry(&self, req: EnterRequest<'_>) -> Result<Checked, DomainError> {
        // Until the entry is known, a failure keeps the identity presented (or a new
        // one, which the retry then brings).
        let presented = || req.visitor.cloned().unwrap_or_else(VisitorId::random);
        let mut counted = false;
        if let Some(receipt) = req.place_receipt {
            let Some(v) = req.visitor else {
                return Err(ReceiptError::Foreign.into());
            };
            if let Some(action) = req.count_as {
                self.check_visitor_limit(v, action).await?;
            }
            counted = true;
            match stood(self.join_with_receipt(req.room, v, receipt).await, v)? {
                Stood::Ok(Some(view)) => {
                    return Ok(Checked::Answered(EnterOutcome::Restored {
                        view: Box::new(view),
                    }))
                }
                Stood::Ok(None) => {}
                Stood::Down(o) => return Ok(Checked::Answered(o)),
            }
        }
        let cfg = match self.room_config_cached(req.room).await {
            Ok(cfg) => cfg,
            Err(DomainError::Unavailable) => {
                return Ok(Checked::Answered(EnterOutcome::StoreDown {
                    visitor: presented(),
                }))
            }
            Err(e) => return Err(e),
        };
        let entrant = self
            .entry_visitor(&cfg, req.enqueue_token, req.visitor.cloned())
            .await;
        let Entrant { visitor, lane } = match entrant {
            Ok(e) => e,
            Err(DomainError::Unavailable) => {
                return Ok(Checked::Answered(EnterOutcome::StoreDown {
                    visitor: presented(),
                }))
            }
            Err(e) => return Err(e),
        };
        match self.check_pow(&cfg, &visitor, req.pow_solution).await {
            Ok(()) => {}
            Err(DomainError::Challenge { error, fresh }) => {
                return Ok(Checked::Answered(EnterOutcome::ProofNeeded {
                    visitor,
                    cfg,
                    error,
                    fresh,
                }))
            }
            Err(DomainError::Unavailable) => {
                return Ok(Checked::Answered(EnterOutcome::StoreDown { visitor }))
            }
            Err(e) => return Err(e),
        }
        if let (false, Some(action)) = (counted, req.count_as) {
            // Fails open: never `Unavailable`.
            self.check_visitor_limit(&visitor, action).await?;
        }
        let told_first = !req.rejoin && req.visitor.is_some() && cfg.claim_timeout_secs > 0;
        Ok(Checked::Cleared(Box::new(Cleared {
            told_first,
            room: req.room.to_string(),
            redirect_base: resolve_return(&cfg.target_url, req.return_to),
            opts: JoinOptions {
                limit: Engine::place_limit(&cfg, req.ip),
                lane,
                score: None,
                // No identity presented and no enqueue token: entry_visitor drew one.
                fresh: req.visitor.is_none() && req.enqueue_token.is_none(),
            },
            visitor,
            cfg,
        })))
    }

    /// Step 6: the join of a [`Cleared`] visitor (with `store.fail_open`, an unreachable
    /// store lets a declared room's visitors in, as [`Engine::join_from`] says).
    pub async fn take_place(&self, c: Cleared) -> Result<EnterOutcome, DomainError> {
        // A no-show back by a page load or a socket is told so; joining again is their
        // choice (one status read more, only in rooms with a claim timeout). A failing
        // read just joins.
        if c.told_first {
            if let Ok(view) = self.status(&c.room, &c.visitor).await {
                if view.state == crate::store::VisitorState::NoShow {
                    return Ok(EnterOutcome::Joined {
                        visitor: c.visitor,
                        view: Box::new(view),
                        cfg: c.cfg,
                    });
                }
            }
        }
        let joined = self
            .join_from(&c.room, &c.visitor, c.redirect_base.as_deref(), c.opts)
            .await;
        Ok(match stood(joined, &c.visitor)? {
            Stood::Ok(view) => EnterOutcome::Joined {
                visitor: c.visitor,
                view: Box::new(view),
                cfg: c.cfg,
            },
            Stood::Down(o) => o,
        })
    }
}

/// A store call's answer, with `Unavailable` turned into [`EnterOutcome::StoreDown`].
enum Stood<T> {
    Ok(T),
    Down(EnterOutcome),
}

fn stood<T>(r: Result<T, DomainError>, visitor: &VisitorId) -> Result<Stood<T>, DomainError> {
    match r {
        Ok(t) => Ok(Stood::Ok(t)),
        Err(DomainError::Unavailable) => Ok(Stood::Down(EnterOutcome::StoreDown {
            visitor: visitor.clone(),
        })),
        Err(e) => Err(e),
    }
}
