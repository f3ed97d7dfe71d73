//! Where an admitted visitor is sent: the room's target, or a `?return=` on its origin,
//! with the pass in the query for cross-site deployments.

/// Resolves `?return=` against the room's target: a path (`/…`, not `//…`), or an
/// absolute URL (what the gateway sends), that stays on the target's origin is accepted;
/// anything else is ignored, so the queue can never be used as an open redirect.
pub fn resolve_return(target: &str, ret: Option<&str>) -> Option<String> {
    let ret = ret?;
    if ret.contains('\\') {
        return None;
    }
    let base = url::Url::parse(target).ok()?;
    let joined = if ret.starts_with("http://") || ret.starts_with("https://") {
        url::Url::parse(ret).ok()?
    } else if ret.starts_with('/') && !ret.starts_with("//") {
        base.join(ret).ok()?
    } else {
        return None;
    };
    (joined.origin() == base.origin()).then(|| joined.to_string())
}

/// Adds `anteroom_pass=<pass>` to the target URL (for cross-site deployments): the
/// target as `url` normalises it, the pair appended to its query as `form_urlencoded`
/// does (`?`, or `&` after a query), before any fragment. A target that is not a URL is
/// returned as it is.
///
/// A pass is base64url and dots, which that encoding leaves as they are, so the pass is
/// copied in, and the parsed target is kept per thread (a room's one target serves every
/// admission): parsing it (IDNA included) and encoding the pass byte by byte on every
/// admission were ~3 % of an admitted join's CPU (issue 35, docs/benchmarks.md).
pub fn redirect_with_pass(target: &str, pass: &str) -> String {
    /// The target split where the pair goes: before it, the separator, after it.
    type Split = Option<(String, &'static str, String)>;
    thread_local! {
        static LAST: std::cell::RefCell<(String, Split)> =
            const { std::cell::RefCell::new((String::new(), None)) };
    }
    let plain = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'*');
    if target.is_empty() || !pass.bytes().all(plain) {
        return redirect_with_pass_encoded(target, pass);
    }
    LAST.with_borrow_mut(|(last, split)| {
        if last != target {
            *split = url::Url::parse(target).ok().map(|u| {
                let s = u.as_str();
                let end = u.fragment().map_or(s.len(), |f| s.len() - f.len() - 1);
                let sep = match u.query() {
                    None => "?",
                    Some("") => "",
                    Some(_) => "&",
                };
                (s[..end].to_string(), sep, s[end..].to_string())
            });
            target.clone_into(last);
        }
        match split {
            Some((head, sep, tail)) => {
                let mut out = String::with_capacity(head.len() + 15 + pass.len() + tail.len());
                out.push_str(head);
                out.push_str(sep);
                out.push_str("anteroom_pass=");
                out.push_str(pass);
                out.push_str(tail);
                out
            }
            None => target.to_string(),
        }
    })
}

/// [`redirect_with_pass`] by the `url` crate alone, for any pass.
fn redirect_with_pass_encoded(target: &str, pass: &str) -> String {
    match url::Url::parse(target) {
        Ok(mut u) => {
            u.query_pairs_mut().append_pair("anteroom_pass", pass);
            u.to_string()
        }
        Err(_) => target.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_redirect_with_the_pass_is_what_the_url_crate_writes() {
        let targets = [
            "https://shop.example/sale/",
            "https://shop.example",
            "http://127.0.0.1:8080/x?a=1",
            "https://shop.example/?",
            "https://shop.example/p?a=1&",
            "https://shop.example/p#top",
            "https://shop.example/p?a=b#frag?x",
            "https://BÜCHER.example/ä?q=ü",
            "not a url",
            "",
        ];
        let passes = ["eyJ0eXAi.eyJpc3Mi.c2ln-_", "a b&c=d", "ü", ""];
        // Twice each, and alternating: the per-thread target must not leak between them.
        for _ in 0..2 {
            for t in targets {
                for p in passes {
                    assert_eq!(
                        redirect_with_pass(t, p),
                        redirect_with_pass_encoded(t, p),
                        "{t} {p}"
                    );
                }
            }
        }
        assert_eq!(
            redirect_with_pass("https://shop.example/p?a=1#f", "x.y"),
            "https://shop.example/p?a=1&anteroom_pass=x.y#f"
        );
    }

    #[test]
    fn return_paths_stay_on_the_target_origin() {
        let t = "https://shop.example/sale/";
        assert_eq!(
            resolve_return(t, Some("/sale/item/5?x=1")).as_deref(),
            Some("https://shop.example/sale/item/5?x=1")
        );
        // The gateway's absolute return URL, on the target's origin.
        assert_eq!(
            resolve_return(t, Some("https://shop.example/cart?a=1")).as_deref(),
            Some("https://shop.example/cart?a=1")
        );
        for bad in [
            "//evil.example/x",
            "https://evil.example/",
            "http://shop.example/",
            "https://shop.example.evil.example/",
            "https://shop.example@evil.example/",
            "javascript:alert(1)",
            "/\\evil",
            "relative",
        ] {
            assert_eq!(resolve_return(t, Some(bad)), None, "{bad}");
        }
        assert_eq!(resolve_return(t, None), None);
    }
}
