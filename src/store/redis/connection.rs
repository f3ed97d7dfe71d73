//! The connection (single node, Cluster or Sentinel), connecting, the key names, and
//! running the room functions (loading the library when a node lacks it).

use super::*;

/// A connection to a single Redis or to a Redis Cluster; cheap to clone (multiplexed).
#[derive(Clone)]
pub enum Conn {
    Single(ConnectionManager),
    Cluster(ClusterConnection),
    /// The master a set of Redis Sentinels names, followed through failovers.
    Sentinel(crate::store::sentinel::SentinelConn),
}

impl ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Conn::Single(c) => c.req_packed_command(cmd),
            Conn::Cluster(c) => c.req_packed_command(cmd),
            Conn::Sentinel(c) => c.req_packed_command(cmd),
        }
    }
    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Conn::Single(c) => c.req_packed_commands(pipeline, offset, count),
            Conn::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
            Conn::Sentinel(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }
    fn get_db(&self) -> i64 {
        match self {
            Conn::Single(c) => c.get_db(),
            Conn::Cluster(c) => c.get_db(),
            Conn::Sentinel(c) => c.get_db(),
        }
    }
}

impl RedisStore {
    /// A single node is connected lazily: the process starts even while Redis is down
    /// (readiness says so). A cluster is connected at start (its slot map is needed), and
    /// so is Sentinel (the master must be found once).
    /// Every command is bounded by the configured timeouts.
    pub async fn connect(url: &str, prefix: &str, t: &StoreSettings) -> StoreResult<Self> {
        let connect = Duration::from_millis(t.connect_timeout_ms);
        let response = Duration::from_millis(t.response_timeout_ms);
        let mut pubsub_client = None;
        let mut cluster_nodes = None;
        let conn = if let Some(rest) = url.strip_prefix("redis+cluster://") {
            let nodes: Vec<String> = rest
                .split(',')
                .map(|n| format!("redis://{}", n.trim_end_matches('/')))
                .collect();
            cluster_nodes = Some(nodes.clone());
            let client = redis::cluster::ClusterClientBuilder::new(nodes)
                .connection_timeout(connect)
                .response_timeout(response)
                .build()?;
            Conn::Cluster(client.get_async_connection().await?)
        } else {
            let cfg = ConnectionManagerConfig::new()
                .set_connection_timeout(Some(connect))
                .set_response_timeout(Some(response))
                .set_number_of_retries(2)
                .set_max_delay(Duration::from_millis(500));
            if url.starts_with("redis+sentinel://") {
                Conn::Sentinel(
                    crate::store::sentinel::SentinelConn::connect(url, cfg, connect + response)
                        .await?,
                )
            } else {
                let client = redis::Client::open(url)?;
                pubsub_client = Some(client.clone());
                Conn::Single(ConnectionManager::new_lazy_with_config(client, cfg)?)
            }
        };
        let mut store = Self {
            conn,
            prefix: prefix.to_string(),
            client: pubsub_client,
            cluster_nodes,
            connect_timeout: connect,
            joins: None,
        };
        if t.batch_joins {
            let core = store.clone();
            store.joins = Some(Batcher::new(
                JOIN_BATCH_MAX,
                JOIN_CALLS,
                move |room, items| {
                    let core = core.clone();
                    Box::pin(async move { core.join_batch(&room, items).await })
                },
            ));
        }
        Ok(store)
    }

    /// One call for a batch of joins to `room` (each item join's seven arguments): `join`
    /// for one, `join_many` for more. `Err` only when the call itself failed; a join's
    /// own refusal (too many places, held, no room) is its item's result.
    pub(super) async fn join_batch(
        &self,
        room: &str,
        items: Vec<[String; 7]>,
    ) -> StoreResult<Vec<StoreResult<Snapshot>>> {
        let n = items.len();
        let reply = if n == 1 {
            self.run_room(&JOIN, room, &items[0]).await
        } else {
            let mut args = Vec::with_capacity(1 + 7 * n);
            args.push(n.to_string());
            args.extend(items.into_iter().flatten());
            self.run_room(&JOIN_MANY, room, &args).await
        };
        match reply {
            Err(e @ StoreError::Unavailable(_)) => Err(e),
            Err(e) => Ok(vec![Err(e); n]),
            Ok(v) if n == 1 => Ok(vec![parse_snapshot(v)]),
            Ok(v) => parse_join_batch(v, n),
        }
    }

    /// The connection, for tests and tools that inspect keys.
    pub fn conn(&self) -> Conn {
        self.conn.clone()
    }

    /// `P:rooms`: the set of room ids.
    pub(super) fn rooms_key(&self) -> String {
        format!("{}:rooms", self.prefix)
    }

    /// `P:room:{R}:<part>`: one of a room's keys (hash-tagged by room).
    pub(super) fn room_key(&self, room: &str, part: &str) -> String {
        format!("{}:room:{{{}}}:{}", self.prefix, room, part)
    }

    /// A room's keys, in the order `common.lua`'s bind() derives them from the cfg key (the
    /// ninth is the room's pub/sub channel, hash-tagged like the keys).
    pub(super) fn room_keys(&self, room: &str) -> [String; 10] {
        [
            "cfg", "q", "hb", "act", "sess", "st", "win", "units", "events", "jt",
        ]
        .map(|p| self.room_key(room, p))
    }

    /// Pattern matching every room's event channel.
    pub(super) fn events_pattern(&self) -> String {
        format!("{}:room:*:events", self.prefix)
    }

    /// `P:rl:{V}`: a fixed-window counter.
    pub(super) fn window_key(&self, key: &str) -> String {
        format!("{}:rl:{{{}}}", self.prefix, key)
    }

    /// Calls a room function (`FCALL`); on a node without the library (a restart, a
    /// `FUNCTION FLUSH`, a new node) loads it and calls again, once.
    pub(super) async fn run_room(
        &self,
        f: &RoomFn,
        room: &str,
        args: &[String],
    ) -> StoreResult<Value> {
        let lib = RoomLibrary::get();
        let mut call = redis::cmd("FCALL");
        // One key, the room's config hash: the functions derive the others from it
        // (bind in common.lua; ten keys cost ~0.45 µs more a call, and deriving them
        // each call another ~0.5 µs).
        call.arg(lib.function(f))
            .arg(1)
            .arg(self.room_key(room, "cfg"));
        for a in args {
            call.arg(a);
        }
        let mut conn = self.conn.clone();
        let v: Value = match call.query_async(&mut conn).await {
            Err(e) if is_missing_function(&e) => {
                self.load_library().await?;
                call.query_async(&mut conn).await?
            }
            r => r?,
        };
        match refusal(&v) {
            Some(e) => Err(e),
            None => Ok(v),
        }
    }

    /// `put_room`, with `hold_ms` > 0 holding admissions and new places that long
    /// (`recreate_room`).
    pub(super) async fn write_room(
        &self,
        cfg: &RoomConfig,
        create_only: bool,
        hold_ms: u64,
    ) -> StoreResult<bool> {
        let mut args = vec![
            if create_only { "1" } else { "0" }.to_string(),
            hold_ms.to_string(),
        ];
        args.extend(cfg_fields(cfg));

        let written = as_int(&self.run_room(&PUT_ROOM, &cfg.id, &args).await?)? == 1;
        // The room set lives in another slot, so it is written separately; it is only
        // an index (a room exists when its cfg hash does).
        let mut conn = self.conn.clone();
        redis::cmd("SADD")
            .arg(self.rooms_key())
            .arg(&cfg.id)
            .query_async::<()>(&mut conn)
            .await?;
        Ok(written)
    }

    /// `FUNCTION LOAD REPLACE` of the room library (on every primary of a Cluster).
    pub async fn load_library(&self) -> StoreResult<()> {
        let mut conn = self.conn.clone();
        let _: Value = redis::cmd("FUNCTION")
            .arg("LOAD")
            .arg("REPLACE")
            .arg(&RoomLibrary::get().source)
            .query_async(&mut conn)
            .await?;
        Ok(())
    }
}

impl RedisStore {
    /// Cluster pub/sub: scripts `PUBLISH` on their shard and the cluster bus carries it to
    /// every node, so one RESP3 connection subscribed to the pattern hears all rooms.
    pub(super) async fn subscribe_cluster(
        &self,
        nodes: Vec<String>,
    ) -> StoreResult<BoxStream<'static, AdmittedEvent>> {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<redis::PushInfo>();
        let client = redis::cluster::ClusterClientBuilder::new(nodes)
            .connection_timeout(self.connect_timeout)
            .use_protocol(redis::ProtocolVersion::RESP3)
            .push_sender(tx)
            .build()?;
        let mut conn = tokio::time::timeout(self.connect_timeout, client.get_async_connection())
            .await
            .map_err(|_| StoreError::Unavailable("cluster pub/sub connect timed out".into()))??;
        conn.psubscribe(self.events_pattern()).await?;
        // The connection lives inside the stream; when it drops, so does the stream.
        let stream = futures_util::stream::unfold((rx, conn), |(mut rx, conn)| async move {
            loop {
                let push = rx.recv().await?;
                match push.kind {
                    redis::PushKind::PMessage if push.data.len() == 3 => {
                        let channel = as_string(&push.data[1]).unwrap_or_default();
                        let payload = match &push.data[2] {
                            Value::BulkString(b) => b.clone(),
                            _ => continue,
                        };
                        return Some((parse_events(&channel, &payload), (rx, conn)));
                    }
                    redis::PushKind::Disconnection => return None,
                    _ => continue,
                }
            }
        })
        .flat_map(futures_util::stream::iter);
        Ok(stream.boxed())
    }

    /// `P:revoked:{rv}:<part>`: the revocation log (`log`, `exp`, `seq`), one hash tag so
    /// its scripts touch one Cluster slot.
    pub(super) fn revoked_key(&self, part: &str) -> String {
        format!("{}:revoked:{{rv}}:{}", self.prefix, part)
    }

    /// `P:room:{R}:lease:N` for room leases (name `R` or `R/N`), `P:lease:N` otherwise.
    pub(super) fn lease_key(&self, name: &str) -> String {
        match name.split_once('/') {
            Some((room, n)) => self.room_key(room, &format!("lease:{n}")),
            None => format!("{}:lease:{}", self.prefix, name),
        }
    }
}
