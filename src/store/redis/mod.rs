//! Redis backend.
//!
//! ## Key layout
//! Every key starts with the configured `key_prefix`, and all keys of one room carry the
//! room id as a hash tag, so a room lives in one Cluster slot and every script touches
//! one slot only. The table of every key (type, contents, TTL) is in
//! `docs/design.md#redis-key-layout`, the one place it is described; the key-building
//! methods below (`rooms_key`, `room_key`, …) are the only code that names keys.
//!
//! ## Scripts
//! Each operation is one Lua file under `src/store/lua/`, embedded at compile time. The
//! room operations and `common.lua` form one Redis Functions library ([`RoomLibrary`]),
//! called with `FCALL` and loaded with `FUNCTION LOAD` when a node lacks it (after
//! `FUNCTION FLUSH`, a restart, or on a new node). The few scripts outside a room (rate
//! window, leases, socket counts) are plain scripts: [`redis::Script`] invokes them by SHA
//! and reloads them on `NOSCRIPT`.

mod cfg_hash;
mod codec;
mod connection;
mod library;
mod outflow;
#[cfg(test)]
mod tests;
mod webhook;

use std::sync::LazyLock;
use std::time::Duration;

use async_trait::async_trait;
use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, Pipeline, RedisFuture, Script, Value};

use futures_util::stream::{BoxStream, StreamExt};

use super::join_batch::Batcher;
use super::{
    sort_found, Admission, AdmittedEvent, EtaBasis, FoundVisitor, MinuteStats, PatchOutcome,
    ReapBatch, RoomPatch, RoomReport, RoomStats, RoomView, SessionsPage, SessionsQuery, Snapshot,
    SocketCount, StockChange, StoreError, StoreResult, VisitorState, WatchEntry, WindowDecision,
};
use super::{
    AdminStore, AdmissionStore, EventStore, FairnessStore, LeaseStore, LineStore, RecoveryStore,
    RevocationStore, RoomStore,
};
use super::{LineChange, LineCursor, Placed, RoomTick, TickRequest};
use super::{Released, RoomEvent, WebhookCounts, WebhookRetry, WebhookSettle};
use crate::config::StoreSettings;
use crate::room::RoomConfig;

use cfg_hash::*;
use codec::*;
use library::*;

pub use connection::Conn;
pub use library::{RoomFn, RoomLibrary};

/// The Redis store. Clones share one multiplexed connection.
#[derive(Clone)]
pub struct RedisStore {
    conn: Conn,
    prefix: String,
    /// For pub/sub on a single node.
    client: Option<redis::Client>,
    /// For pub/sub on Redis Cluster (a RESP3 connection with push messages).
    cluster_nodes: Option<Vec<String>>,
    connect_timeout: Duration,
    /// Joins taken together (`store.batch_joins`); None: one call per join. The batcher's
    /// calls go through a clone of this store without one (no reference cycle).
    joins: Option<Batcher<[String; 7], Snapshot>>,
}

/// The most joins one `join_many` call carries (so one call keeps Redis busy for well
/// under a millisecond: ~64 × 10 µs).
const JOIN_BATCH_MAX: usize = 64;

/// Calls for one room in flight at once from one instance (store/join_batch.rs): two, so
/// Redis has the next batch in hand when it finishes one.
const JOIN_CALLS: usize = 2;

#[async_trait]
impl RoomStore for RedisStore {
    async fn put_room(&self, cfg: &RoomConfig, create_only: bool) -> StoreResult<bool> {
        self.write_room(cfg, create_only, 0).await
    }

    async fn room_versioned(&self, room: &str) -> StoreResult<Option<(RoomConfig, u64)>> {
        let mut conn = self.conn.clone();
        // One HGETALL: the values and the version that counts them are read together.
        let h: std::collections::HashMap<String, String> = redis::cmd("HGETALL")
            .arg(self.room_key(room, "cfg"))
            .query_async(&mut conn)
            .await?;
        let version = h.get("version").and_then(|v| v.parse().ok()).unwrap_or(0);
        Ok((!h.is_empty()).then(|| (cfg_from_hash(room, &h), version)))
    }

    async fn rooms(&self) -> StoreResult<Vec<String>> {
        let mut conn = self.conn.clone();
        let mut ids: Vec<String> = redis::cmd("SMEMBERS")
            .arg(self.rooms_key())
            .query_async(&mut conn)
            .await?;
        ids.sort();
        Ok(ids)
    }

    async fn delete_room(&self, room: &str) -> StoreResult<bool> {
        let mut conn = self.conn.clone();
        let mut del = redis::cmd("DEL");
        for (i, k) in self.room_keys(room).iter().enumerate() {
            if i != 8 {
                del.arg(k); // every key but the pub/sub channel
            }
        }
        // This half hour's per-minute statistics (they would expire on their own).
        let minute = crate::clock::wall_ms() / 60_000;
        del.arg(format!("{}:away", self.room_key(room, "st")));
        del.arg(format!("{}:hidden", self.room_key(room, "st")));
        del.arg(format!("{}:gone", self.room_key(room, "st")));
        del.arg(format!("{}:stream", self.room_key(room, "st")));
        del.arg(format!("{}:ends", self.room_key(room, "st")));
        del.arg(format!("{}:lane", self.room_key(room, "st")));
        del.arg(format!("{}:lanes", self.room_key(room, "st")));
        // No-shows' deadlines and marks (store/outflow.rs).
        del.arg(format!("{}:claim", self.room_key(room, "st")));
        del.arg(format!("{}:noshow", self.room_key(room, "st")));
        for part in WEBHOOK_PARTS {
            del.arg(self.room_key(room, part));
        }
        // Outflow reports lapse on their own; the sources and the decisions go now.
        del.arg(self.room_key(room, "of:src"));
        del.arg(self.room_key(room, "of:hist"));
        del.arg(format!("{}:pq", self.room_key(room, "st")));
        del.arg(format!("{}:pqd", self.room_key(room, "st")));
        for m in minute.saturating_sub(32)..=minute + 1 {
            del.arg(format!("{}:m:{m}", self.room_key(room, "st")));
        }
        let n: i64 = del.query_async(&mut conn).await?;
        let m: i64 = redis::cmd("SREM")
            .arg(self.rooms_key())
            .arg(room)
            .query_async(&mut conn)
            .await?;
        Ok(n > 0 || m > 0)
    }

    async fn patch_room_if(
        &self,
        room: &str,
        patch: &RoomPatch,
        expected: Option<u64>,
    ) -> StoreResult<PatchOutcome> {
        let mut args = vec![expected.map(|v| v.to_string()).unwrap_or_default()];
        args.extend(patch_fields(patch));
        let a = as_array(self.run_room(&PATCH_ROOM, room, &args).await?)?;
        if a.len() != 2 {
            return Err(protocol("patch arity"));
        }
        if matches!(&a[0], Value::BulkString(b) if b.as_slice() == b"stale") {
            return Ok(PatchOutcome::Stale { version: u(&a[1])? });
        }
        Ok(PatchOutcome::Applied {
            version: u(&a[1])?,
            admitted: as_strings(&a[0])?,
        })
    }

    async fn change_stock(
        &self,
        room: &str,
        change: StockChange,
    ) -> StoreResult<(Option<u64>, Option<u64>, Vec<String>)> {
        let (mode, n) = match change {
            StockChange::Set(n) => ("set", n),
            StockChange::Add(n) => ("add", n),
            StockChange::Unlimited => ("unlimited", 0),
        };
        let args = [
            mode.to_string(),
            n.to_string(),
            super::MAX_STOCK.to_string(),
        ];
        let a = as_array(self.run_room(&STOCK, room, &args).await?)?;
        if a.len() != 3 {
            return Err(protocol("stock arity"));
        }
        Ok((
            stock_of(as_int(&a[0])?),
            stock_of(as_int(&a[1])?),
            as_strings(&a[2])?,
        ))
    }

    async fn ping(&self) -> StoreResult<()> {
        let mut conn = self.conn.clone();
        redis::cmd("PING").query_async::<String>(&mut conn).await?;
        Ok(())
    }
}

#[async_trait]
impl AdmissionStore for RedisStore {
    async fn join_with(
        &self,
        room: &str,
        visitor: &str,
        opts: &super::JoinOptions,
    ) -> StoreResult<Snapshot> {
        let (group, max) = opts
            .limit
            .as_ref()
            .map_or((String::new(), 0), |l| (l.group.clone(), l.max));
        let lane = opts.lane.clone().unwrap_or_default();
        // A seed to keep if this join opens the room's pre-queue (HSETNX in the script).
        let seed = super::new_seed();
        let score = opts.score.map(|s| s.to_string()).unwrap_or_default();
        let args = [
            visitor.to_string(),
            group,
            max.to_string(),
            lane,
            seed,
            score,
            if opts.fresh { "1" } else { "" }.to_string(),
        ];
        match &self.joins {
            Some(batcher) => batcher.submit(room, args).await,
            None => parse_snapshot(self.run_room(&JOIN, room, &args).await?),
        }
    }

    async fn status(&self, room: &str, visitor: &str) -> StoreResult<Snapshot> {
        parse_snapshot(self.run_room(&STATUS, room, &[visitor.to_string()]).await?)
    }

    async fn status_placed(&self, room: &str, visitor: &str) -> StoreResult<Snapshot> {
        parse_snapshot(
            self.run_room(&STATUS, room, &[visitor.to_string(), "1".into()])
                .await?,
        )
    }

    async fn release_ended(&self, room: &str, visitor: &str) -> StoreResult<Released> {
        let a = as_array(
            self.run_room(
                &RELEASE,
                room,
                &[visitor.to_string(), super::PROMOTE_LIMIT.to_string()],
            )
            .await?,
        )?;
        if a.len() != 5 {
            return Err(protocol("release arity"));
        }
        // Serial 0: no live session ended (serials start at 1).
        let session = match u(&a[2])? {
            0 => None,
            serial => Some(Admission {
                serial,
                issued_at_ms: u(&a[3])?,
                expires_at_ms: u(&a[4])?,
            }),
        };
        Ok(Released {
            held: as_int(&a[0])? == 1,
            session,
            admitted: as_strings(&a[1])?,
        })
    }

    async fn promote(&self, room: &str, limit: u32) -> StoreResult<Vec<String>> {
        let a = as_array(self.run_room(&PROMOTE, room, &[limit.to_string()]).await?)?;
        as_strings(a.first().ok_or_else(|| protocol("promote arity"))?)
    }

    async fn session_live(&self, room: &str, visitor: &str, serial: u64) -> StoreResult<bool> {
        let v = self
            .run_room(&SESSION, room, &[visitor.to_string(), serial.to_string()])
            .await?;
        Ok(as_int(&v)? == 1)
    }

    async fn hold_away(&self, room: &str, visitor: &str, grace_ms: u64) -> StoreResult<bool> {
        let v = self
            .run_room(&AWAY, room, &[visitor.to_string(), grace_ms.to_string()])
            .await?;
        Ok(as_int(&v)? == 1)
    }

    async fn extend_session(
        &self,
        room: &str,
        visitor: &str,
        serial: u64,
        ttl_ms: u64,
        cap_ms: u64,
    ) -> StoreResult<Option<Admission>> {
        let a = as_array(
            self.run_room(
                &EXTEND_SESSION,
                room,
                &[
                    visitor.to_string(),
                    serial.to_string(),
                    ttl_ms.to_string(),
                    cap_ms.to_string(),
                ],
            )
            .await?,
        )?;
        match a.as_slice() {
            [] => Ok(None),
            [s, i, e] => Ok(Some(Admission {
                serial: u(s)?,
                issued_at_ms: u(i)?,
                expires_at_ms: u(e)?,
            })),
            _ => Err(protocol("extend_session arity")),
        }
    }

    async fn reap(&self, room: &str, batch: u32) -> StoreResult<ReapBatch> {
        let a = as_array(
            self.run_room(
                &REAP,
                room,
                &[batch.to_string(), super::AWAY_KEEP_MS.to_string()],
            )
            .await?,
        )?;
        if a.len() != 3 {
            return Err(protocol("reap arity"));
        }
        Ok(ReapBatch {
            dropped: u(&a[0])?,
            expired: u(&a[1])?,
            vouched: u(&a[2])?,
        })
    }

    async fn hit_window(
        &self,
        key: &str,
        limit: u64,
        window_ms: u64,
    ) -> StoreResult<WindowDecision> {
        // Three plain commands in one round trip, no script: the count, the window's
        // expiry set only if the counter has none (`NX`, Redis >= 7: so a counter left
        // without one, however it came about, gets it on its next hit), and the time left.
        // Measured against the script this replaces (window.lua: the same three and a
        // branch): Redis CPU 12.2-12.4 against 13.7-14.0 µs per join+status decision with
        // the limiter on; a lone `INCR` a hit (the expiry set by a second round trip, the
        // time left read only for a refusal) measured no better, 13.0-13.2, nor did hits
        // taken together in one script (12.6): in that benchmark the cost is the counters
        // themselves, one new key with an expiry per visitor
        // (docs/design.md#the-per-visitor-limiter).
        let k = self.window_key(key);
        let mut conn = self.conn.clone();
        let (count, ttl): (u64, i64) = redis::pipe()
            .cmd("INCR")
            .arg(&k)
            .cmd("PEXPIRE")
            .arg(&k)
            .arg(window_ms)
            .arg("NX")
            .ignore()
            .cmd("PTTL")
            .arg(&k)
            .query_async(&mut conn)
            .await?;
        Ok(WindowDecision {
            allowed: count <= limit,
            count,
            // -2: the window ended between the commands; a new one starts with the next hit.
            reset_ms: if ttl < 0 { window_ms } else { ttl as u64 },
        })
    }

    async fn eta_basis(&self, room: &str) -> StoreResult<EtaBasis> {
        let a = as_array(self.run_room(&ETA_BASIS, room, &[]).await?)?;
        if a.len() != 18 {
            return Err(protocol("eta_basis arity"));
        }
        let n = |i: usize| u(&a[i]);
        let list =
            |i: usize| -> StoreResult<Vec<u64>> { as_array(a[i].clone())?.iter().map(u).collect() };
        let pairs = |v: Vec<u64>| v.chunks(2).map(|c| (c[0], c[1])).collect();
        let ends = as_array(a[10].clone())?
            .iter()
            .filter_map(|v| {
                let s: String = redis::from_redis_value(v.clone()).ok()?;
                let (e, d) = s.split_once(':')?;
                Some((e.parse().ok()?, d.parse().ok()?))
            })
            .collect();
        Ok(EtaBasis {
            now_ms: n(0)?,
            lanes: n(17)? == 1,
            capacity: n(1)?,
            session_ttl_ms: n(2)?,
            rate_cap_per_minute: n(3)?,
            stock: stock_of(as_int(&a[4])?),
            paused: n(5)? == 1,
            closed: n(6)? == 1,
            queue_length: n(7)?,
            active: n(8)?,
            sessions: pairs(list(9)?),
            ends,
            window: list(11)?,
            admitted_recent: n(12)?,
            reaped_recent: n(13)?,
            silent: n(14)?,
            admits: n(15)?,
            quiet: list(16)?,
        })
    }
}

#[async_trait]
impl LineStore for RedisStore {
    async fn watch(
        &self,
        room: &str,
        visitors: &[String],
    ) -> StoreResult<(RoomView, Vec<WatchEntry>)> {
        let a = as_array(self.run_room(&WATCH, room, visitors).await?)?;
        if a.len() != 2 {
            return Err(protocol("watch arity"));
        }
        let mut a = a.into_iter();
        let view = parse_room_view(a.next().unwrap_or(Value::Nil))?;
        let flat = as_array(a.next().unwrap_or(Value::Nil))?;
        if flat.len() != visitors.len() * 4 {
            return Err(protocol("watch entries"));
        }
        Ok((view, parse_places(&flat)?))
    }

    async fn tick(&self, room: &str, req: &TickRequest<'_>) -> StoreResult<RoomTick> {
        let mut args = Vec::with_capacity(4 + req.hold.len() + req.unhold.len());
        args.push(req.instance.to_string());
        args.push(req.since.map(|c| c.epoch.clone()).unwrap_or_default());
        args.push(req.since.map_or(0, |c| c.seq).to_string());
        args.push(req.hold.len().to_string());
        args.extend(req.hold.iter().cloned());
        args.extend(req.unhold.iter().cloned());
        parse_tick(self.run_room(&TICK, room, &args).await?, req.hold.len())
    }

    async fn places(
        &self,
        room: &str,
        visitors: &[String],
    ) -> StoreResult<(RoomView, Vec<Placed>, LineCursor)> {
        let a = as_array(self.run_room(&PLACES, room, visitors).await?)?;
        if a.len() != 4 {
            return Err(protocol("places arity"));
        }
        let cursor = LineCursor {
            epoch: as_string(&a[2])?,
            seq: u(&a[3])?,
        };
        let mut a = a.into_iter();
        let view = parse_room_view(a.next().unwrap_or(Value::Nil))?;
        let flat = as_array(a.next().unwrap_or(Value::Nil))?;
        if flat.len() != visitors.len() * 4 {
            return Err(protocol("places entries"));
        }
        Ok((view, parse_placed(&flat)?, cursor))
    }

    async fn subscribe(&self) -> StoreResult<BoxStream<'static, AdmittedEvent>> {
        if let Some(nodes) = &self.cluster_nodes {
            return self.subscribe_cluster(nodes.clone()).await;
        }
        let client = match (&self.client, &self.conn) {
            (Some(c), _) => c.clone(),
            (None, Conn::Sentinel(s)) => s.master_client().await?,
            (None, _) => return Err(StoreError::Unavailable("no pub/sub client".into())),
        };
        let mut pubsub = tokio::time::timeout(self.connect_timeout, client.get_async_pubsub())
            .await
            .map_err(|_| StoreError::Unavailable("pub/sub connect timed out".into()))??;
        pubsub.psubscribe(self.events_pattern()).await?;
        let stream = pubsub.into_on_message().flat_map(|msg| {
            let events = parse_events(msg.get_channel_name(), msg.get_payload_bytes());
            futures_util::stream::iter(events)
        });
        Ok(stream.boxed())
    }

    async fn report_sockets(&self, instance: &str, counts: &[(String, u64)]) -> StoreResult<()> {
        if counts.is_empty() {
            return Ok(());
        }
        let mut inv = SOCKETS_REPORT.prepare_invoke();
        inv.key(format!("{}:sockets", self.prefix)).arg(instance);
        for (room, n) in counts {
            inv.arg(room).arg(n);
        }
        let mut conn = self.conn.clone();
        inv.invoke_async::<()>(&mut conn).await?;
        Ok(())
    }

    async fn sockets(&self) -> StoreResult<Vec<SocketCount>> {
        let mut conn = self.conn.clone();
        let v: Value = SOCKETS_READ
            .key(format!("{}:sockets", self.prefix))
            .arg(60_000)
            .invoke_async(&mut conn)
            .await?;
        as_array(v)?
            .chunks(3)
            .map(|c| {
                let field = as_string(&c[0])?;
                let (instance, room) = field.split_once('|').unwrap_or((&field, ""));
                Ok(SocketCount {
                    instance: instance.to_string(),
                    room: room.to_string(),
                    count: u(&c[1])?,
                    age_ms: u(&c[2])?,
                })
            })
            .collect()
    }
}

#[async_trait]
impl AdminStore for RedisStore {
    async fn stats(&self, room: &str) -> StoreResult<RoomStats> {
        let a = as_array(self.run_room(&STATS, room, &[]).await?)?;
        if a.len() != 8 {
            return Err(protocol("stats arity"));
        }
        Ok(RoomStats {
            queue_length: u(&a[0])?,
            active: u(&a[1])?,
            capacity: u(&a[2])?,
            paused: as_int(&a[3])? == 1,
            closed: as_int(&a[4])? == 1,
            stock: stock_of(as_int(&a[5])?),
            admitted_total: u(&a[6])?,
            reaped_total: u(&a[7])?,
        })
    }

    async fn find_visitors(
        &self,
        room: &str,
        id_prefix: &str,
        limit: usize,
    ) -> StoreResult<Vec<FoundVisitor>> {
        // Candidates by ZSCAN over the queue and the sessions, a bounded step per call, so
        // a queue of a million never blocks Redis the way one script scanning it would.
        // Where each stands is then read in one script, consistently.
        let mut conn = self.conn.clone();
        let pattern = prefix_pattern(id_prefix);
        let mut ids: Vec<String> = Vec::new();
        for part in ["act", "q"] {
            let key = self.room_key(room, part);
            let mut cursor: u64 = 0;
            loop {
                let (next, pairs): (u64, Vec<String>) = redis::cmd("ZSCAN")
                    .arg(&key)
                    .arg(cursor)
                    .arg("MATCH")
                    .arg(&pattern)
                    .arg("COUNT")
                    .arg(1000)
                    .query_async(&mut conn)
                    .await?;
                // Member, score, member, score…
                for member in pairs.into_iter().step_by(2) {
                    if !ids.contains(&member) {
                        ids.push(member);
                    }
                }
                if next == 0 || ids.len() >= limit {
                    break;
                }
                cursor = next;
            }
        }
        let flat = as_array(self.run_room(&FIND, room, &ids).await?)?;
        if flat.len() != ids.len() * 4 {
            return Err(protocol("find entries"));
        }
        let mut found: Vec<FoundVisitor> = ids
            .into_iter()
            .zip(parse_places(&flat)?)
            .filter(|(_, place)| *place != WatchEntry::Gone)
            .map(|(visitor, place)| FoundVisitor { visitor, place })
            .collect();
        sort_found(&mut found);
        found.truncate(limit);
        Ok(found)
    }

    async fn flush(&self, room: &str) -> StoreResult<u64> {
        u(&self.run_room(&FLUSH, room, &[]).await?)
    }

    async fn report(&self, room: &str, minutes: u32) -> StoreResult<RoomReport> {
        let a = as_array(self.run_room(&REPORT, room, &[minutes.to_string()]).await?)?;
        if a.len() != 5 {
            return Err(protocol("report arity"));
        }
        let mut it = a.into_iter();
        let view = parse_room_view(it.next().unwrap_or(Value::Nil))?;
        let admitted_total = u(&it.next().unwrap_or(Value::Nil))?;
        let reaped_total = u(&it.next().unwrap_or(Value::Nil))?;
        let flat = as_array(it.next().unwrap_or(Value::Nil))?;
        let minutes = flat
            .chunks(2)
            .map(|c| parse_minute(u(&c[0])?, &c[1]))
            .collect::<StoreResult<Vec<_>>>()?;
        let lanes = as_array(it.next().unwrap_or(Value::Nil))?
            .chunks(3)
            .map(|c| {
                Ok(super::LaneCount {
                    lane: as_string(&c[0])?,
                    waiting: u(&c[1])?,
                    admitted: u(&c[2])?,
                })
            })
            .collect::<StoreResult<Vec<_>>>()?;
        Ok(RoomReport {
            view,
            admitted_total,
            reaped_total,
            minutes,
            lanes,
        })
    }

    async fn audit_push(&self, entry: &str, keep: u32) -> StoreResult<()> {
        let key = format!("{}:audit", self.prefix);
        let mut conn = self.conn.clone();
        redis::pipe()
            .atomic()
            .cmd("LPUSH")
            .arg(&key)
            .arg(entry)
            .ignore()
            .cmd("LTRIM")
            .arg(&key)
            .arg(0)
            .arg(keep.saturating_sub(1))
            .ignore()
            .query_async::<()>(&mut conn)
            .await?;
        Ok(())
    }

    async fn audit(&self, limit: u32) -> StoreResult<Vec<String>> {
        let mut conn = self.conn.clone();
        Ok(redis::cmd("LRANGE")
            .arg(format!("{}:audit", self.prefix))
            .arg(0)
            .arg(limit.saturating_sub(1))
            .query_async(&mut conn)
            .await?)
    }
}

#[async_trait]
impl RecoveryStore for RedisStore {
    fn failovers(&self) -> u64 {
        match &self.conn {
            Conn::Sentinel(c) => c.failovers(),
            _ => 0,
        }
    }

    async fn recreate_room(&self, cfg: &RoomConfig, hold_ms: u64) -> StoreResult<bool> {
        self.write_room(cfg, true, hold_ms).await
    }

    async fn restore_place(
        &self,
        room: &str,
        visitor: &str,
        ticket: u64,
        joined_at_ms: u64,
    ) -> StoreResult<Snapshot> {
        parse_snapshot(
            self.run_room(
                &RESTORE_PLACE,
                room,
                &[
                    visitor.to_string(),
                    ticket.to_string(),
                    joined_at_ms.to_string(),
                ],
            )
            .await?,
        )
    }

    async fn sessions(&self, room: &str, q: &SessionsQuery) -> StoreResult<SessionsPage> {
        let args = [
            q.expires_from.to_string(),
            q.gone_after.map(|g| g.to_string()).unwrap_or_default(),
            q.limit.to_string(),
        ];
        let a = as_array(self.run_room(&SESSIONS, room, &args).await?)?;
        let [now, list, gone, flushed] = a.as_slice() else {
            return Err(protocol("sessions arity"));
        };
        let flushed_at_ms = match flushed {
            redis::Value::Nil => None,
            v => Some(u(v)?),
        };
        let list = as_array(list.clone())?;
        let gone = as_array(gone.clone())?;
        if list.len() % 4 != 0 || gone.len() % 2 != 0 {
            return Err(protocol("sessions arity"));
        }
        let sessions = list
            .chunks(4)
            .map(|c| {
                Ok((
                    as_string(&c[0])?,
                    Admission {
                        serial: u(&c[1])?,
                        issued_at_ms: u(&c[2])?,
                        expires_at_ms: u(&c[3])?,
                    },
                ))
            })
            .collect::<StoreResult<_>>()?;
        let gone = gone
            .chunks(2)
            .map(|c| {
                let at = as_string(&c[1])?
                    .parse::<f64>()
                    .map_err(|_| protocol("a release time"))?;
                Ok((as_string(&c[0])?, at as u64))
            })
            .collect::<StoreResult<_>>()?;
        Ok(SessionsPage {
            now_ms: u(now)?,
            sessions,
            gone,
            flushed_at_ms,
        })
    }

    async fn restore_session(
        &self,
        room: &str,
        visitor: &str,
        admission: &Admission,
    ) -> StoreResult<bool> {
        let v = self
            .run_room(
                &RESTORE_SESSION,
                room,
                &[
                    visitor.to_string(),
                    admission.serial.to_string(),
                    admission.issued_at_ms.to_string(),
                    admission.expires_at_ms.to_string(),
                ],
            )
            .await?;
        Ok(as_int(&v)? == 1)
    }

    async fn epoch(&self, candidate: &str) -> StoreResult<String> {
        let mut conn = self.conn.clone();
        let key = format!("{}:epoch", self.prefix);
        // SET NX, then GET (two commands rather than SET … NX GET, which needs Redis 7):
        // whoever wrote first, every instance reads the same value.
        let _: Option<String> = redis::cmd("SET")
            .arg(&key)
            .arg(candidate)
            .arg("NX")
            .query_async(&mut conn)
            .await?;
        let now: Option<String> = redis::cmd("GET").arg(&key).query_async(&mut conn).await?;
        Ok(now.unwrap_or_else(|| candidate.to_string()))
    }
}

#[async_trait]
impl EventStore for RedisStore {
    async fn events(&self, room: &str, after: &str, count: u32) -> StoreResult<Vec<RoomEvent>> {
        // A plain XRANGE: reading needs no script (the room's key, outside a function).
        let mut conn = self.conn.clone();
        let start = if after.is_empty() || after == "0" {
            "-".to_string()
        } else {
            format!("({after}")
        };
        let entries: Vec<(String, Vec<(String, String)>)> = redis::cmd("XRANGE")
            .arg(format!("{}:stream", self.room_key(room, "st")))
            .arg(start)
            .arg("+")
            .arg("COUNT")
            .arg(count)
            .query_async(&mut conn)
            .await?;
        Ok(entries
            .into_iter()
            .map(|(id, fields)| {
                let get = |k: &str| fields.iter().find(|(f, _)| f == k).map(|(_, v)| v.clone());
                RoomEvent {
                    id,
                    kind: get("type").unwrap_or_default(),
                    visitor: get("visitor"),
                    serial: get("serial").and_then(|s| s.parse().ok()),
                    ticket: get("ticket").and_then(|s| s.parse().ok()),
                }
            })
            .collect())
    }

    async fn webhook_cursor(&self, room: &str) -> StoreResult<String> {
        let mut conn = self.conn.clone();
        let c: Option<String> = redis::cmd("GET")
            .arg(self.room_key(room, "wh:cursor"))
            .query_async(&mut conn)
            .await?;
        Ok(c.unwrap_or_default())
    }

    async fn webhook_advance(
        &self,
        room: &str,
        cursor: &str,
        retries: &[WebhookRetry],
        dead: &[super::WebhookDeadLetter],
    ) -> StoreResult<()> {
        self.wh_advance(room, cursor, retries, dead).await
    }

    async fn webhook_due(
        &self,
        room: &str,
        now_ms: u64,
        limit: u32,
    ) -> StoreResult<Vec<WebhookRetry>> {
        let mut conn = self.conn.clone();
        let ids: Vec<String> = redis::cmd("ZRANGE")
            .arg(self.room_key(room, "wh:retry"))
            .arg("-inf")
            .arg(now_ms)
            .arg("BYSCORE")
            .arg("LIMIT")
            .arg(0)
            .arg(limit)
            .query_async(&mut conn)
            .await?;
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let bodies: Vec<Option<String>> = redis::cmd("HMGET")
            .arg(self.room_key(room, "wh:body"))
            .arg(&ids)
            .query_async(&mut conn)
            .await?;
        // A record without its body (never written apart, but a hand-edited store) is
        // skipped rather than sent empty.
        Ok(bodies
            .into_iter()
            .flatten()
            .filter_map(|b| serde_json::from_str(&b).ok())
            .collect())
    }

    async fn webhook_settle(
        &self,
        room: &str,
        event_id: &str,
        outcome: &WebhookSettle,
    ) -> StoreResult<()> {
        self.wh_settle(room, event_id, outcome).await
    }

    async fn webhook_counts(&self, room: &str) -> StoreResult<WebhookCounts> {
        self.wh_counts(room).await
    }

    async fn webhook_dead_letters(&self, room: &str) -> StoreResult<Vec<super::WebhookDeadLetter>> {
        self.wh_dead_letters(room).await
    }

    async fn webhook_replay(
        &self,
        room: &str,
        event_id: Option<&str>,
        due_ms: u64,
    ) -> StoreResult<Vec<String>> {
        self.wh_replay(room, event_id, due_ms).await
    }
}

#[async_trait]
impl LeaseStore for RedisStore {
    async fn acquire_lease(&self, name: &str, token: &str, ttl_ms: u64) -> StoreResult<bool> {
        let mut conn = self.conn.clone();
        let n: i64 = LEASE_ACQUIRE
            .key(self.lease_key(name))
            .arg(token)
            .arg(ttl_ms)
            .invoke_async(&mut conn)
            .await?;
        Ok(n == 1)
    }

    async fn release_lease(&self, name: &str, token: &str) -> StoreResult<bool> {
        let mut conn = self.conn.clone();
        let n: i64 = LEASE_RELEASE
            .key(self.lease_key(name))
            .arg(token)
            .invoke_async(&mut conn)
            .await?;
        Ok(n == 1)
    }
}

#[async_trait]
impl FairnessStore for RedisStore {
    async fn event_seed(&self, room: &str, candidate: &str) -> StoreResult<String> {
        as_string(
            &self
                .run_room(&EVENT_SEED, room, &[candidate.to_string()])
                .await?,
        )
    }

    async fn fairness(&self, room: &str) -> StoreResult<super::Fairness> {
        let a = as_array(self.run_room(&FAIRNESS, room, &[]).await?)?;
        if a.len() != 11 {
            return Err(protocol("fairness arity"));
        }
        let time = |v: &Value| -> StoreResult<Option<u64>> { Ok(as_string(v)?.parse().ok()) };
        let seed = as_string(&a[4])?;
        let mode = crate::room::QueueMode::parse(&as_string(&a[3])?).unwrap_or_default();
        let shuffled = as_int(&a[5])? == 1;
        Ok(super::Fairness::from_parts(
            mode,
            [time(&a[0])?, time(&a[1])?, time(&a[2])?],
            seed,
            shuffled,
            u(&a[6])?,
            u(&a[7])?,
            u(&a[8])?,
            (as_int(&a[9])? == 1, as_int(&a[10])? == 1),
        ))
    }

    async fn prequeue_page(&self, room: &str, offset: u64, count: u32) -> StoreResult<Vec<String>> {
        if count == 0 {
            return Ok(Vec::new());
        }
        let mut conn = self.conn.clone();
        let v: Vec<String> = redis::cmd("ZRANGE")
            .arg(self.room_key(room, "st:pq"))
            .arg(offset)
            .arg(offset + u64::from(count) - 1)
            .query_async(&mut conn)
            .await?;
        Ok(v)
    }

    async fn shuffle_step(
        &self,
        room: &str,
        seed: &str,
        first_rank: u64,
        visitors: &[String],
        last: bool,
    ) -> StoreResult<super::ShuffleStep> {
        let mut args = vec![
            seed.to_string(),
            first_rank.to_string(),
            if last { "1" } else { "0" }.to_string(),
        ];
        args.extend(visitors.iter().cloned());
        let a = as_array(self.run_room(&SHUFFLE, room, &args).await?)?;
        let kind = as_string(a.first().ok_or_else(|| protocol("shuffle arity"))?)?;
        Ok(match kind.as_str() {
            "placed" => super::ShuffleStep::Placed(u(a.get(1).unwrap_or(&Value::Nil))?),
            "done" => super::ShuffleStep::AlreadyDone,
            "wrong_seed" => super::ShuffleStep::WrongSeed,
            _ => super::ShuffleStep::NotDue,
        })
    }
}

#[async_trait]
impl RevocationStore for RedisStore {
    async fn revoke(&self, r: &super::Revocation) -> StoreResult<()> {
        let mut conn = self.conn.clone();
        REVOKE
            .key(self.revoked_key("log"))
            .key(self.revoked_key("exp"))
            .key(self.revoked_key("seq"))
            .arg(r.encode())
            .arg(r.expires_at_ms)
            .arg(super::revocation::SWEEP_BATCH)
            .invoke_async::<i64>(&mut conn)
            .await?;
        Ok(())
    }

    async fn revocations_since(
        &self,
        cursor: u64,
        limit: usize,
    ) -> StoreResult<super::RevocationPage> {
        let mut conn = self.conn.clone();
        let v: Value = REVOCATIONS
            .key(self.revoked_key("log"))
            .key(self.revoked_key("seq"))
            .arg(cursor)
            .arg(limit)
            .invoke_async(&mut conn)
            .await?;
        let rows = as_array(v)?;
        let (first, rest) = rows
            .split_first()
            .ok_or_else(|| protocol("revocations: empty reply"))?;
        let mut page = super::RevocationPage {
            cursor: u(first)?,
            ..Default::default()
        };
        for pair in rest.chunks(2) {
            if page.entries.len() == limit {
                page.more = true;
                break;
            }
            let [member, score] = pair else {
                return Err(protocol("revocations: odd reply"));
            };
            let entry = super::Revocation::decode(&as_string(member)?)
                .ok_or_else(|| protocol("revocations: bad member"))?;
            // Scores come back as text ("12") or, over RESP3, as doubles.
            page.cursor = match score {
                Value::Double(d) => *d as u64,
                other => as_string(other)?
                    .parse::<f64>()
                    .map_err(|_| protocol("revocations: bad score"))?
                    as u64,
            };
            page.entries.push(entry);
        }
        Ok(page)
    }
}
