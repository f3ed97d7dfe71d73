//! The `redis+sentinel://host:port,…/master-name` URL (`store.redis_url`), read here
//! so the settings are checked without the store (which connects with it:
//! `store::sentinel`).

/// The sentinels and the master's name from a `redis+sentinel://` URL.
pub fn parse_url(url: &str) -> Result<(Vec<String>, String), String> {
    let rest = url
        .strip_prefix("redis+sentinel://")
        .ok_or("must start with redis+sentinel://")?;
    let (hosts, name) = rest.split_once('/').ok_or(
        "must name the master after the sentinels: redis+sentinel://host:port,…/master-name",
    )?;
    let name = name.trim_end_matches('/');
    if name.is_empty() || name.contains(['/', '?', ' ']) {
        return Err(
            "must name the master after the sentinels: redis+sentinel://host:port,…/master-name"
                .into(),
        );
    }
    let nodes: Vec<String> = hosts
        .split(',')
        .filter(|h| !h.is_empty())
        .map(|h| format!("redis://{h}"))
        .collect();
    if nodes.is_empty() {
        return Err(
            "must list at least one sentinel: redis+sentinel://host:port,…/master-name".into(),
        );
    }
    Ok((nodes, name.to_string()))
}
