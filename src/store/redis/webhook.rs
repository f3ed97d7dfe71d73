//! The webhook part of the Redis store: the keys `P:room:{R}:wh:*` (codec's
//! [`WEBHOOK_PARTS`], docs/design.md): the cursor, the retries (ZSET) and their records
//! (HASH), the dead-letter count and the kept dead letters (LIST of JSON, newest first,
//! trimmed to [`MAX_DEAD_LETTERS_KEPT`]). One deliverer holds a room's lease at a time,
//! so the retries have one writer; an admin's replay moves letters with a script
//! (`webhook_replay.lua`) that moves each only if it removed it.

use super::*;
use crate::store::{WebhookDeadLetter, MAX_DEAD_LETTERS_KEPT};

impl RedisStore {
    /// Adds to `p` the commands that keep `letters` (and count them).
    fn bury(&self, p: &mut Pipeline, room: &str, letters: &[WebhookDeadLetter]) {
        if letters.is_empty() {
            return;
        }
        let key = self.room_key(room, "wh:letters");
        for l in letters {
            // unwrap: a struct of strings and numbers always serialises.
            p.cmd("LPUSH")
                .arg(&key)
                .arg(serde_json::to_string(l).unwrap())
                .ignore();
        }
        p.cmd("LTRIM")
            .arg(&key)
            .arg(0)
            .arg(MAX_DEAD_LETTERS_KEPT - 1)
            .ignore();
        p.cmd("INCRBY")
            .arg(self.room_key(room, "wh:dead"))
            .arg(letters.len())
            .ignore();
    }

    pub(super) async fn wh_advance(
        &self,
        room: &str,
        cursor: &str,
        retries: &[WebhookRetry],
        dead: &[WebhookDeadLetter],
    ) -> StoreResult<()> {
        // MULTI/EXEC: the keys share the room's hash tag (one slot in a Cluster).
        let mut p = redis::pipe();
        p.atomic();
        p.cmd("SET")
            .arg(self.room_key(room, "wh:cursor"))
            .arg(cursor)
            .ignore();
        for r in retries {
            park(
                &mut p,
                &self.room_key(room, "wh:retry"),
                &self.room_key(room, "wh:body"),
                r,
            );
        }
        self.bury(&mut p, room, dead);
        let mut conn = self.conn.clone();
        p.query_async::<()>(&mut conn).await?;
        Ok(())
    }

    pub(super) async fn wh_settle(
        &self,
        room: &str,
        event_id: &str,
        outcome: &WebhookSettle,
    ) -> StoreResult<()> {
        let (zkey, hkey) = (
            self.room_key(room, "wh:retry"),
            self.room_key(room, "wh:body"),
        );
        let mut conn = self.conn.clone();
        let mut p = redis::pipe();
        p.atomic();
        match outcome {
            WebhookSettle::Delivered => {
                p.cmd("ZREM").arg(&zkey).arg(event_id).ignore();
                p.cmd("HDEL").arg(&hkey).arg(event_id).ignore();
            }
            WebhookSettle::Retry { .. } | WebhookSettle::Dead { .. } => {
                // The record (its body) is read first; the deliverer holds the room's
                // lease, so nobody else settles it between this read and the write.
                let body: Option<String> = redis::cmd("HGET")
                    .arg(&hkey)
                    .arg(event_id)
                    .query_async(&mut conn)
                    .await?;
                let Some(mut r) = body.and_then(|b| serde_json::from_str::<WebhookRetry>(&b).ok())
                else {
                    // Not there (settled already): a dead letter is kept and counted once.
                    return Ok(());
                };
                match outcome {
                    WebhookSettle::Retry { attempts, due_ms } => {
                        r.attempts = *attempts;
                        r.due_ms = *due_ms;
                        park(&mut p, &zkey, &hkey, &r);
                    }
                    WebhookSettle::Dead {
                        attempts,
                        error,
                        at_ms,
                    } => {
                        p.cmd("ZREM").arg(&zkey).arg(event_id).ignore();
                        p.cmd("HDEL").arg(&hkey).arg(event_id).ignore();
                        let letter = WebhookDeadLetter {
                            event_id: r.event_id,
                            body: r.body,
                            attempts: *attempts,
                            error: error.clone(),
                            dead_at_ms: *at_ms,
                        };
                        self.bury(&mut p, room, std::slice::from_ref(&letter));
                    }
                    WebhookSettle::Delivered => unreachable!("matched above"),
                }
            }
        }
        p.query_async::<()>(&mut conn).await?;
        Ok(())
    }

    pub(super) async fn wh_counts(&self, room: &str) -> StoreResult<WebhookCounts> {
        let mut conn = self.conn.clone();
        let (pending, dead, kept): (u64, Option<u64>, u64) = redis::pipe()
            .cmd("ZCARD")
            .arg(self.room_key(room, "wh:retry"))
            .cmd("GET")
            .arg(self.room_key(room, "wh:dead"))
            .cmd("LLEN")
            .arg(self.room_key(room, "wh:letters"))
            .query_async(&mut conn)
            .await?;
        Ok(WebhookCounts {
            pending,
            dead_letters: dead.unwrap_or(0),
            dead_letters_kept: kept,
        })
    }

    /// The kept letters as stored (each with its LIST member, which a replay names).
    async fn wh_kept(&self, room: &str) -> StoreResult<Vec<(String, WebhookDeadLetter)>> {
        let mut conn = self.conn.clone();
        let raw: Vec<String> = redis::cmd("LRANGE")
            .arg(self.room_key(room, "wh:letters"))
            .arg(0)
            .arg(-1)
            .query_async(&mut conn)
            .await?;
        // A member that does not read (a hand-edited store) is left out, not an error.
        Ok(raw
            .into_iter()
            .filter_map(|m| serde_json::from_str(&m).ok().map(|l| (m, l)))
            .collect())
    }

    pub(super) async fn wh_dead_letters(&self, room: &str) -> StoreResult<Vec<WebhookDeadLetter>> {
        Ok(self
            .wh_kept(room)
            .await?
            .into_iter()
            .map(|(_, l)| l)
            .collect())
    }

    pub(super) async fn wh_replay(
        &self,
        room: &str,
        event_id: Option<&str>,
        due_ms: u64,
    ) -> StoreResult<Vec<String>> {
        let chosen: Vec<(String, WebhookDeadLetter)> = self
            .wh_kept(room)
            .await?
            .into_iter()
            .filter(|(_, l)| event_id.is_none_or(|id| l.event_id == id))
            .collect();
        if chosen.is_empty() {
            return Ok(Vec::new());
        }
        let mut call = WEBHOOK_REPLAY.prepare_invoke();
        call.key(self.room_key(room, "wh:letters"))
            .key(self.room_key(room, "wh:retry"))
            .key(self.room_key(room, "wh:body"))
            .arg(due_ms);
        // Oldest first, as the deliverer sends them.
        for (member, l) in chosen.into_iter().rev() {
            let record = WebhookRetry {
                event_id: l.event_id.clone(),
                body: l.body,
                attempts: 0,
                due_ms,
            };
            // unwrap: a struct of strings and numbers always serialises.
            call.arg(member)
                .arg(l.event_id)
                .arg(serde_json::to_string(&record).unwrap());
        }
        let mut conn = self.conn.clone();
        Ok(call.invoke_async(&mut conn).await?)
    }
}
