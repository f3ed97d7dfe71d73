//! One suite, two stores: every rule of the admission engine, run against the memory
//! store and against a real Redis started for the test. If both pass, they agree.

use std::sync::Arc;
use std::time::Duration;

use crate::helpers::{redis_store, room, wait_until, RedisCluster, RedisServer};
use anteroom::room::RoomConfig;
use anteroom::store::{
    heartbeat_step, PatchOutcome, RoomPatch, StockChange, Store, StoreError, VisitorState,
    WatchEntry,
};
use futures_util::future::join_all;
use futures_util::StreamExt;

mod admission;
mod caps;
mod drops;
mod events;
mod lanes;
mod line;
mod modes;
mod noshow;
mod recovery;
mod rooms;
mod webhooks;
use admission::*;
use caps::*;
use drops::*;
use events::*;
use lanes::*;
use line::*;
use modes::*;
use noshow::*;
use recovery::*;
use rooms::*;
use webhooks::*;

/// A store under test, keeping its Redis (if any) alive.
struct Backend {
    store: Arc<dyn Store>,
    _redis: Option<RedisServer>,
}

impl Backend {
    async fn memory() -> Self {
        Self {
            store: Arc::new(anteroom::store::memory::MemoryStore::new()),
            _redis: None,
        }
    }
    async fn redis() -> Self {
        let r = RedisServer::start();
        let store = redis_store(&r.url(), &crate::helpers::prefix()).await;
        Self {
            store: Arc::new(store),
            _redis: Some(r),
        }
    }
    async fn cluster(c: &RedisCluster) -> Self {
        Self {
            store: Arc::new(redis_store(&c.url(), &crate::helpers::prefix()).await),
            _redis: None,
        }
    }
    async fn with_room(self, cfg: RoomConfig) -> Self {
        assert!(self.store.put_room(&cfg, true).await.unwrap());
        self
    }
}

fn v(i: usize) -> String {
    format!("{i:032x}")
}

const DEADLINE: Duration = Duration::from_secs(10);

/// `cfg` with a 1 s heartbeat timeout: its queued visitors are dropped after 1 s of silence.
fn quiet_after_1s(cfg: RoomConfig) -> RoomConfig {
    RoomConfig {
        heartbeat_timeout_secs: 1,
        ..cfg
    }
}

/// The store's clock now (ms): Redis `TIME`, or the memory store's clock.
async fn store_now(s: &dyn Store, room: &str) -> u64 {
    s.fairness(room).await.unwrap().now_ms
}

/// Waits until the store's clock reaches `at` (ms).
async fn until_store_time(s: &dyn Store, room: &str, at: u64) {
    wait_until(DEADLINE, "the store's clock to reach the time", || async {
        (store_now(s, room).await >= at).then_some(())
    })
    .await
}

/// Waits until `ms` have passed on the store's clock (a timeout that must run out).
async fn store_time_passes(s: &dyn Store, room: &str, ms: u64) {
    let at = store_now(s, room).await + ms;
    until_store_time(s, room, at).await
}

macro_rules! conformance {
    ($($name:ident),* $(,)?) => {
        mod memory {
            $(#[tokio::test] async fn $name() { super::$name(super::Backend::memory().await).await })*
        }
        mod redis {
            $(#[tokio::test] async fn $name() { super::$name(super::Backend::redis().await).await })*
        }
        /// Every case again on a local three-master Redis Cluster (one cluster, cases in
        /// turn, each under its own key prefix).
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn redis_cluster_passes_every_case() {
            let cluster = RedisCluster::start();
            $( $name(Backend::cluster(&cluster).await).await; )*
        }
    };
}

conformance!(
    a_room_written_again_is_read_afresh,
    a_hub_counts_every_position_from_the_line_log,
    a_held_visitor_is_kept_until_its_hub_lets_go_or_its_lease_lapses,
    a_flush_starts_a_new_line_log_epoch,
    fifo_order,
    join_is_idempotent,
    joins_sent_together_take_one_place_each_in_the_order_sent,
    fresh_visitors_sent_together_are_each_admitted_counted_and_published,
    capacity_is_never_exceeded,
    release_and_expiry_admit_the_next,
    stock_is_never_oversold,
    stock_unit_is_taken_once_per_visitor,
    rate_cap_is_honoured,
    silent_visitors_are_reaped,
    a_heartbeat_holds_for_the_timeout_and_at_most_a_step_more,
    a_queued_reply_carries_its_heartbeat_and_the_line_cursor,
    expired_sessions_are_pruned_in_batches,
    pause_stops_admissions_but_not_the_queue,
    a_newcomer_never_walks_in_past_a_waiting_visitor,
    the_epoch_is_written_once_and_then_read,
    capacity_changes_apply_live,
    rooms_are_independent,
    closed_room_turns_newcomers_away_and_tells_the_queue,
    unknown_rooms_are_reported,
    session_liveness_follows_release,
    room_config_round_trips,
    leases_exclude_renew_and_expire,
    fixed_window_limits_and_resets,
    figures_stay_exact_through_the_admissions_a_call_makes,
    unclaimed_sessions_are_quiet_and_not_stays,
    places_per_group_are_capped_and_free_up,
    the_places_per_group_cap_agrees_with_an_exact_count,
    watch_reports_each_visitor_in_one_call,
    admissions_are_published,
    patches_change_only_named_fields_and_promote,
    stock_changes_are_atomic_and_promote,
    flush_empties_the_queue_but_keeps_sessions,
    reports_keep_a_per_minute_history,
    socket_counts_and_audit_are_kept,
    config_versions_count_changes_and_refuse_stale_patches,
    visitors_are_found_by_id_prefix,
    lanes_get_their_shares_fifo_inside_and_positions_are_the_real_order,
    an_idle_lane_banks_no_credit_and_counts_follow_the_line,
    reaped_lane_visitors_leave_its_count,
    restored_places_keep_their_original_order,
    restored_sessions_count_again,
    a_recreated_room_holds_admissions_while_places_come_back,
    live_sessions_are_listed_with_their_admissions,
    a_hidden_page_keeps_its_place_past_the_heartbeat_timeout,
    a_hidden_page_is_held_a_grace_from_its_first_hide_however_often_it_says_so,
    every_change_adds_its_event_to_the_rooms_stream,
    admissions_from_the_line_carry_their_ticket,
    revocations_are_read_in_order_from_a_cursor,
    release_reports_the_live_session_it_ended,
    a_live_session_is_extended_up_to_its_cap,
    passthrough_lets_everyone_in_past_capacity_and_the_rate_cap,
    passthrough_still_keeps_stock,
    switching_to_passthrough_lets_the_whole_line_in,
    reject_gives_no_place_admits_nobody_and_keeps_places,
    queue_all_queues_every_newcomer_and_admits_nobody,
    queue_all_overrides_passthrough_and_reject,
    back_from_passthrough_the_rate_cap_counts_its_admissions,
    webhook_retries_cursor_and_dead_letters_are_kept,
    dead_letters_are_kept_with_their_reason_and_replayed_as_fresh_retries,
    only_the_newest_dead_letters_are_kept,
    a_prequeue_is_shuffled_once_in_the_published_order,
    a_scheduled_room_takes_no_place_and_an_ended_event_closes,
    event_overrides_apply_only_inside_the_window,
    random_mode_admits_in_the_seeds_hmac_order,
    leaving_random_mode_queues_newcomers_behind_the_draw,
    a_scheduled_opening_and_end_go_into_the_stream_once,
    an_open_socket_is_enrolled_in_the_prequeue,
    the_prequeue_counts_against_the_places_per_group_cap,
    a_pass_not_presented_in_time_is_a_no_show_and_frees_the_slot,
    a_presented_pass_keeps_its_session_past_the_claim_timeout,
    a_no_show_rejoins_at_the_back,
    without_a_claim_timeout_or_after_a_release_nothing_is_taken_back,
    a_quiet_session_ends_at_its_no_show_deadline_for_the_eta,
);
