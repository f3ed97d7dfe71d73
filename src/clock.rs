//! The instance's wall clock. Admission decisions use the store's clock (Redis `TIME`,
//! or the memory store's [`crate::store::memory::Clock`], which tests control); this one
//! is for what the instance itself stamps: page grants, audit entries, fail-open passes,
//! the demo origin.

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub fn wall_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
