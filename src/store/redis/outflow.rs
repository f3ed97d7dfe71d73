//! The Redis store's outflow keys ([`crate::store::outflow`] has the layout): plain
//! commands, no script. Each key carries the room's hash tag, so a pipeline's keys share
//! a Cluster slot and MULTI/EXEC holds.

use super::*;
use crate::store::outflow::{OutflowStore, POINTS_KEEP};

impl RedisStore {
    fn report_key(&self, room: &str, source: &str) -> String {
        self.room_key(room, &format!("of:rep:{source}"))
    }
}

#[async_trait]
impl OutflowStore for RedisStore {
    async fn put_origin_report(
        &self,
        room: &str,
        source: &str,
        report: &str,
        ttl_ms: u64,
    ) -> StoreResult<()> {
        let mut conn = self.conn.clone();
        let src = self.room_key(room, "of:src");
        redis::pipe()
            .atomic()
            .cmd("SET")
            .arg(self.report_key(room, source))
            .arg(report)
            .arg("PX")
            .arg(ttl_ms.max(1))
            .ignore()
            .cmd("SADD")
            .arg(&src)
            .arg(source)
            .ignore()
            // The set outlives its members by a day at most (a room left alone).
            .cmd("PEXPIRE")
            .arg(&src)
            .arg(86_400_000u64)
            .ignore()
            .query_async::<()>(&mut conn)
            .await?;
        Ok(())
    }

    async fn origin_reports(&self, room: &str) -> StoreResult<Vec<String>> {
        let mut conn = self.conn.clone();
        let src = self.room_key(room, "of:src");
        let sources: Vec<String> = redis::cmd("SMEMBERS")
            .arg(&src)
            .query_async(&mut conn)
            .await?;
        if sources.is_empty() {
            return Ok(Vec::new());
        }
        let keys: Vec<String> = sources.iter().map(|s| self.report_key(room, s)).collect();
        let values: Vec<Option<String>> =
            redis::cmd("MGET").arg(&keys).query_async(&mut conn).await?;
        let lapsed: Vec<&String> = sources
            .iter()
            .zip(&values)
            .filter(|(_, v)| v.is_none())
            .map(|(s, _)| s)
            .collect();
        if !lapsed.is_empty() {
            redis::cmd("SREM")
                .arg(&src)
                .arg(lapsed)
                .query_async::<i64>(&mut conn)
                .await?;
        }
        Ok(values.into_iter().flatten().collect())
    }

    async fn push_outflow_point(&self, room: &str, point: &str) -> StoreResult<()> {
        let mut conn = self.conn.clone();
        let key = self.room_key(room, "of:hist");
        redis::pipe()
            .atomic()
            .cmd("LPUSH")
            .arg(&key)
            .arg(point)
            .ignore()
            .cmd("LTRIM")
            .arg(&key)
            .arg(0)
            .arg(POINTS_KEEP - 1)
            .ignore()
            .query_async::<()>(&mut conn)
            .await?;
        Ok(())
    }

    async fn outflow_points(&self, room: &str, n: u64) -> StoreResult<Vec<String>> {
        let mut conn = self.conn.clone();
        Ok(redis::cmd("LRANGE")
            .arg(self.room_key(room, "of:hist"))
            .arg(0)
            .arg(n.saturating_sub(1))
            .query_async(&mut conn)
            .await?)
    }

    async fn present(&self, room: &str, visitor: &str, serial: u64) -> StoreResult<bool> {
        let v = self
            .run_room(
                &super::library::SESSION,
                room,
                &[visitor.to_string(), serial.to_string(), "1".into()],
            )
            .await?;
        Ok(as_int(&v)? == 1)
    }

    async fn reap_no_shows(&self, room: &str, batch: u32) -> StoreResult<Vec<(String, Admission)>> {
        let a = as_array(
            self.run_room(&super::library::NOSHOW_REAP, room, &[batch.to_string()])
                .await?,
        )?;
        let flat = as_array(
            a.get(1)
                .cloned()
                .ok_or_else(|| protocol("noshow_reap arity"))?,
        )?;
        flat.chunks(4)
            .map(|c| match c {
                [v, serial, issued, exp] => Ok((
                    as_string(v)?,
                    Admission {
                        serial: u(serial)?,
                        issued_at_ms: u(issued)?,
                        expires_at_ms: u(exp)?,
                    },
                )),
                _ => Err(protocol("noshow_reap entry")),
            })
            .collect()
    }

    async fn no_shows(&self, room: &str) -> StoreResult<u64> {
        let a = as_array(
            self.run_room(&super::library::NOSHOW_REAP, room, &["0".to_string()])
                .await?,
        )?;
        u(a.first().ok_or_else(|| protocol("noshow_reap arity"))?)
    }
}
