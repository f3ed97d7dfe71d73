//! The LeaseStore role of the store (see [`super::Store`]).

use async_trait::async_trait;

use super::StoreResult;

/// Named leases (`<room>/<purpose>`), so one instance runs each room's background job at
/// a time: the reaper, the drops task, the outflow controller and the webhook deliverer.
#[async_trait]
pub trait LeaseStore: Send + Sync {
    /// Takes the named lease if free (`SET NX PX`) or renews it if `token` holds it.
    /// Lease names are `<room>/<purpose>`.
    async fn acquire_lease(&self, name: &str, token: &str, ttl_ms: u64) -> StoreResult<bool>;
    /// Releases the lease only if `token` still holds it (compare-and-delete).
    async fn release_lease(&self, name: &str, token: &str) -> StoreResult<bool>;
}
