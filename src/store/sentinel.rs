//! Redis Sentinel: a connection that follows the master through a failover.
//!
//! The redis crate's sentinel support finds the master (it asks the sentinels, then checks
//! that the node it names says it is a master); it does not follow a failover by itself.
//! [`SentinelConn`] keeps a [`ConnectionManager`] to the master it found and, when a
//! command fails in a way a failover produces (the connection refused, dropped or timed
//! out, or `READONLY` from a demoted master), asks the sentinels again (at most once per
//! [`RESOLVE_EVERY`]) and moves to the new master. The failed command itself is answered
//! with its error (the caller's 503 path: joins are idempotent and retried); the next one
//! goes to the new master.
//!
//! URL: `redis+sentinel://host:port,host:port,…/master-name` (the sentinels, then the
//! name they monitor the master under).

use std::sync::{Arc, Mutex as StdMutex};
use std::time::{Duration, Instant};

use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::sentinel::{SentinelClient, SentinelServerType};
use redis::{
    Cmd, ErrorKind, Pipeline, RedisError, RedisFuture, RedisResult, ServerErrorKind, Value,
};

/// The fewest time between two questions to the sentinels.
pub const RESOLVE_EVERY: Duration = Duration::from_millis(250);

pub use crate::config::sentinel_url::parse_url;

struct Current {
    /// The master's client (also for pub/sub) and a connection manager to it.
    client: redis::Client,
    manager: ConnectionManager,
}

struct Inner {
    sentinel: tokio::sync::Mutex<SentinelClient>,
    current: StdMutex<Option<Current>>,
    resolved_at: StdMutex<Option<Instant>>,
    /// Times this connection moved to another master (a failover).
    switches: std::sync::atomic::AtomicU64,
    cfg: ConnectionManagerConfig,
    timeout: Duration,
    name: String,
}

/// A connection to whichever node the sentinels name master; cheap to clone.
#[derive(Clone)]
pub struct SentinelConn {
    inner: Arc<Inner>,
}

impl SentinelConn {
    /// Builds the client and finds the master once: a start with no sentinel or no
    /// master reachable is an error (the process says so at start-up).
    pub async fn connect(
        url: &str,
        cfg: ConnectionManagerConfig,
        timeout: Duration,
    ) -> RedisResult<Self> {
        let (nodes, name) = parse_url(url).map_err(|m| {
            RedisError::from((ErrorKind::InvalidClientConfig, "bad sentinel URL", m))
        })?;
        let client = SentinelClient::build(nodes, name.clone(), None, SentinelServerType::Master)?;
        let conn = Self {
            inner: Arc::new(Inner {
                sentinel: tokio::sync::Mutex::new(client),
                current: StdMutex::new(None),
                resolved_at: StdMutex::new(None),
                switches: Default::default(),
                cfg,
                timeout,
                name,
            }),
        };
        conn.resolve(true).await?;
        Ok(conn)
    }

    /// How many times this connection moved to another master: each failover may have
    /// lost the writes the old master had not yet passed to the replica.
    pub fn failovers(&self) -> u64 {
        self.inner
            .switches
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// The master's client (pub/sub), found again if there is none yet.
    pub async fn master_client(&self) -> RedisResult<redis::Client> {
        self.with_current(|c| c.client.clone()).await
    }

    async fn manager(&self) -> RedisResult<ConnectionManager> {
        self.with_current(|c| c.manager.clone()).await
    }

    /// `f` of the master known now; one is found first if there is none yet.
    async fn with_current<T>(&self, f: impl Fn(&Current) -> T) -> RedisResult<T> {
        // unwrap: never poisoned (no panics while held).
        if let Some(v) = self.inner.current.lock().unwrap().as_ref().map(&f) {
            return Ok(v);
        }
        self.resolve(true).await?;
        self.inner
            .current
            .lock()
            .unwrap()
            .as_ref()
            .map(&f)
            .ok_or_else(|| RedisError::from((ErrorKind::Io, "no master known")))
    }

    /// Asks the sentinels for the master; moves to it when it is another node. Unless
    /// `force`, at most once per [`RESOLVE_EVERY`] (callers that fail together ask once).
    async fn resolve(&self, force: bool) -> RedisResult<()> {
        let mut sentinel = self.inner.sentinel.lock().await;
        {
            let mut at = self.inner.resolved_at.lock().unwrap();
            if !force && at.is_some_and(|t| t.elapsed() < RESOLVE_EVERY) {
                return Ok(());
            }
            *at = Some(Instant::now());
        }
        let client = tokio::time::timeout(self.inner.timeout, sentinel.async_get_client())
            .await
            .map_err(|_| {
                RedisError::from((ErrorKind::Io, "sentinel: finding the master timed out"))
            })??;
        let addr = client.get_connection_info().addr().to_string();
        let mut current = self.inner.current.lock().unwrap();
        let same = current
            .as_ref()
            .is_some_and(|c| c.client.get_connection_info().addr().to_string() == addr);
        if !same {
            if current.is_some() {
                tracing::warn!(master = %self.inner.name, %addr, "Redis Sentinel: following the master to a new node");
                self.inner
                    .switches
                    .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            let manager =
                ConnectionManager::new_lazy_with_config(client.clone(), self.inner.cfg.clone())?;
            *current = Some(Current { client, manager });
        }
        Ok(())
    }

    /// After a failed command: a failover makes these errors, so ask the sentinels.
    async fn after(&self, e: &RedisError) {
        let failover = e.is_io_error()
            || e.is_connection_refusal()
            || e.is_connection_dropped()
            || e.is_timeout()
            || e.kind() == ErrorKind::Server(ServerErrorKind::ReadOnly);
        if failover {
            if let Err(err) = self.resolve(false).await {
                tracing::debug!(error = %err, "Redis Sentinel: no master found yet");
            }
        }
    }
}

impl ConnectionLike for SentinelConn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        Box::pin(async move {
            let mut m = self.manager().await?;
            let r = m.req_packed_command(cmd).await;
            if let Err(e) = &r {
                self.after(e).await;
            }
            r
        })
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        Box::pin(async move {
            let mut m = self.manager().await?;
            let r = m.req_packed_commands(pipeline, offset, count).await;
            if let Err(e) = &r {
                self.after(e).await;
            }
            r
        })
    }

    fn get_db(&self) -> i64 {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::parse_url;

    #[test]
    fn urls_name_the_sentinels_and_the_master() {
        assert_eq!(
            parse_url("redis+sentinel://10.0.0.1:26379,10.0.0.2:26379/mymaster").unwrap(),
            (
                vec![
                    "redis://10.0.0.1:26379".into(),
                    "redis://10.0.0.2:26379".into()
                ],
                "mymaster".into()
            )
        );
        for bad in [
            "redis+sentinel://10.0.0.1:26379",
            "redis+sentinel://10.0.0.1:26379/",
            "redis+sentinel:///m",
            "redis://10.0.0.1/m",
        ] {
            assert!(parse_url(bad).is_err(), "{bad}");
        }
    }
}
