//! How secrets are shown: never. Everything that leaves the process — the audit log (room
//! and global), the admin API and dashboard, the INFO line each admin change writes, the
//! access log — shows a secret as [`SET`] (`null` when unset), so one can see that a key
//! is there without learning it. A configuration sent back as it was read keeps the
//! secret (`web::admin::api`, `domain::admin`).
//!
//! URLs are shown with their credentials replaced: the userinfo (`https://[set]@host/`)
//! and the values of query parameters whose names say they are credentials
//! ([`is_secret_param`]); the host, path and other parameters stay readable.

use serde::Serializer;

/// What a secret is shown as.
pub const SET: &str = "[set]";

/// True when a query parameter named `name` carries a credential (compared without case,
/// after percent-decoding, as the handlers read it). Visitor credentials (`token`,
/// `visitor_token`, `grant`, passes, enqueue tokens, place receipts) and the usual names
/// for keys in a URL (`key`, `api_key`, `secret`, `password`, `sig`…).
pub fn is_secret_param(name: &str) -> bool {
    const NAMES: &[&str] = &[
        "token",
        "visitor_token",
        "grant",
        "pass",
        "anteroom_pass",
        "enqueue_token",
        "receipt",
        "place_receipt",
        "key",
        "api_key",
        "apikey",
        "access_token",
        "auth",
        "secret",
        "password",
        "passwd",
        "sig",
        "signature",
    ];
    let decoded: String = url::form_urlencoded::parse(format!("{name}=").as_bytes())
        .next()
        .map(|(k, _)| k.into_owned())
        .unwrap_or_default();
    NAMES.iter().any(|n| decoded.eq_ignore_ascii_case(n))
}

/// `query` (without `?`) with the values of [`is_secret_param`] parameters replaced by
/// [`SET`]; everything else as it was.
pub fn query(query: &str) -> String {
    query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((k, _)) if is_secret_param(k) => format!("{k}={SET}"),
            _ => pair.to_string(),
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// `u` with its userinfo and its credential parameters replaced by [`SET`]. Works on the
/// text as written (no normalisation), so the same URL always reads the same.
pub fn url(u: &str) -> String {
    let (before_fragment, fragment) = match u.split_once('#') {
        Some((b, f)) => (b, Some(f)),
        None => (u, None),
    };
    let (before_query, q) = match before_fragment.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (before_fragment, None),
    };
    let mut out = match before_query.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            match authority.rsplit_once('@') {
                Some((_, host)) => format!("{scheme}://{SET}@{host}{path}"),
                None => before_query.to_string(),
            }
        }
        None => before_query.to_string(),
    };
    if let Some(q) = q {
        out.push('?');
        out.push_str(&query(q));
    }
    if let Some(f) = fragment {
        out.push('#');
        out.push_str(f);
    }
    out
}

/// True when [`url`] hides something in `u`.
pub fn url_hides(u: &str) -> bool {
    url(u) != u
}

/// Serialises an optional URL through [`url`].
pub fn opt_url<S: Serializer>(v: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(u) => s.serialize_some(&url(u)),
        None => s.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_keeps_its_host_and_path_and_loses_its_credentials() {
        assert_eq!(
            url("https://user:hunter2@hooks.example:8443/in?room=a&token=abc#x"),
            "https://[set]@hooks.example:8443/in?room=a&token=[set]#x"
        );
        assert_eq!(
            url("https://ghp_abc@hooks.example/in"),
            "https://[set]@hooks.example/in"
        );
        // An `@` in the path or query is not userinfo.
        assert_eq!(
            url("https://hooks.example/a@b?to=x@y"),
            "https://hooks.example/a@b?to=x@y"
        );
        assert_eq!(
            url("https://hooks.example/in?Api%5FKey=k&sig=s"),
            "https://hooks.example/in?Api%5FKey=[set]&sig=[set]"
        );
        assert!(!url_hides("https://hooks.example/in"));
        assert!(url_hides("https://u:p@hooks.example/in"));
    }

    #[test]
    fn credential_parameters_are_found_however_they_are_spelled() {
        for name in [
            "enqueue_token",
            "ENQUEUE_TOKEN",
            "enqueue%5Ftoken",
            "anteroom_pass",
        ] {
            assert!(is_secret_param(name), "{name}");
        }
        for name in ["return", "lang", "room", "start"] {
            assert!(!is_secret_param(name), "{name}");
        }
    }
}
