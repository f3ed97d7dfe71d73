//! One delivery as the receiver sees it (the Standard Webhooks specification): the JSON
//! body `{"type", "timestamp", "data"}` and the headers `webhook-id`,
//! `webhook-timestamp` and `webhook-signature: v1,<base64 HMAC-SHA256>` over
//! `"{id}.{timestamp}.{body}"`. HTTP-free, so the signing is tested on its own.

use base64::Engine as _;
use hmac::{Hmac, Mac};
use serde_json::json;
use sha2::Sha256;

use crate::store::RoomEvent;

/// The delivery's `webhook-id`: stable per event (a retry carries the same one), unique
/// across rooms.
pub fn webhook_id(room: &str, event_id: &str) -> String {
    format!("msg_{room}_{event_id}")
}

/// The JSON body of an event's delivery; `timestamp` is when the event happened (its
/// stream id's milliseconds, the store's clock).
pub fn body(room: &str, e: &RoomEvent) -> String {
    let ms =
        e.id.split_once('-')
            .map_or(e.id.as_str(), |(ms, _)| ms)
            .parse()
            .unwrap_or(0);
    json!({
        "type": e.kind,
        "timestamp": rfc3339(ms),
        "data": {
            "room": room,
            "event_id": e.id,
            "visitor": e.visitor,
            "serial": e.serial,
        },
    })
    .to_string()
}

/// `v1,<base64 of HMAC-SHA256(key, "{id}.{timestamp}.{body}")>`.
pub fn signature(key: &[u8], id: &str, timestamp: u64, body: &str) -> String {
    // unwrap: HMAC takes a key of any length.
    let mut mac = Hmac::<Sha256>::new_from_slice(key).unwrap();
    mac.update(format!("{id}.{timestamp}.{body}").as_bytes());
    format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
    )
}

/// The headers of one attempt, sent at `timestamp` (unix seconds).
pub fn headers(key: &[u8], id: &str, timestamp: u64, body: &str) -> Vec<(&'static str, String)> {
    vec![
        ("content-type", "application/json".into()),
        ("webhook-id", id.to_string()),
        ("webhook-timestamp", timestamp.to_string()),
        ("webhook-signature", signature(key, id, timestamp, body)),
    ]
}

/// The wait before the next attempt after `attempts` failed ones: exponential backoff
/// with full jitter, a uniform draw in `[0, min(cap, base · 2^(attempts-1))]` ms (the
/// first retry within `base`).
pub fn retry_delay_ms(
    attempts: u32,
    base_ms: u64,
    cap_ms: u64,
    draw: impl FnOnce(u64) -> u64,
) -> u64 {
    let exp = attempts.saturating_sub(1).min(40);
    let ceiling = base_ms.saturating_mul(1u64 << exp).min(cap_ms);
    draw(ceiling).min(ceiling)
}

/// RFC 3339 in UTC with milliseconds, from ms since the epoch.
pub fn rfc3339(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Howard Hinnant's civil_from_days.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ms % 1000
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_standard_webhooks_example_signs_the_same() {
        // The example of the Standard Webhooks reference libraries.
        let key = base64::engine::general_purpose::STANDARD
            .decode("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
            .unwrap();
        assert_eq!(
            signature(
                &key,
                "msg_p5jXN8AQM9LWM0D4loKWxJek",
                1_614_265_330,
                r#"{"test": 2432232314}"#
            ),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn timestamps_are_rfc3339() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(1_614_265_330_123), "2021-02-25T15:02:10.123Z");
        assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn the_backoff_ceiling_doubles_up_to_the_cap() {
        let top = |n| retry_delay_ms(n, 5000, 60_000, |c| c);
        assert_eq!(
            [top(1), top(2), top(3), top(4), top(5)],
            [5000, 10_000, 20_000, 40_000, 60_000]
        );
        assert_eq!(retry_delay_ms(1, 5000, 60_000, |_| 0), 0);
        assert_eq!(top(90), 60_000);
    }
}
