//! Visitor identity: 128 random bits, carried as a signed token
//! `<32 hex id>.<base64url HMAC-SHA256(id)>` in the `anteroom_vid` cookie or, for API and
//! iframe clients, as `visitor_token`. A token whose tag does not match is rejected, so a
//! visitor cannot claim someone else's place by guessing or editing an id.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

/// How long a queue page's grant lets its socket skip the per-visitor request limit.
pub const PAGE_GRANT_MS: u64 = 15_000;

/// The visitor cookie's name.
pub const VISITOR_COOKIE: &str = "anteroom_vid";

/// A visitor id: 32 lowercase hex characters.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct VisitorId(String);

impl VisitorId {
    pub fn random() -> Self {
        let mut b = [0u8; 16];
        rand::thread_rng().fill_bytes(&mut b);
        Self(crate::hex::lower(&b))
    }

    /// Accepts only the exact shape `random()` produces.
    pub fn parse(s: &str) -> Option<Self> {
        (s.len() == 32 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
            .then(|| Self(s.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The short code a visitor reads out to support, e.g. `K7QX-M2PD`: the id's first
    /// 40 bits in Crockford base32. Not a credential (it cannot claim the place); an
    /// admin finds the visitor by it ([`SupportCode`]).
    pub fn support_code(&self) -> String {
        // unwrap: the id is 32 hex characters, so its first 10 are a 40-bit number.
        let bits = u64::from_str_radix(&self.0[..SupportCode::HEX_LEN], 16).unwrap();
        let chars: String = (0..8)
            .rev()
            .map(|i| CROCKFORD[((bits >> (i * 5)) & 31) as usize] as char)
            .collect();
        format!("{}-{}", &chars[..4], &chars[4..])
    }
}

const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// A support code as typed by an admin: the hex prefix of the visitor ids it names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SupportCode(String);

impl SupportCode {
    /// Hex characters of the visitor id a code carries.
    pub const HEX_LEN: usize = 10;

    /// Accepts `K7QX-M2PD`, `k7qxm2pd`, spaces or dashes anywhere, and the usual misreads
    /// (O for 0, I and L for 1).
    pub fn parse(s: &str) -> Option<Self> {
        let mut bits: u64 = 0;
        let mut n = 0;
        for c in s.chars().filter(|c| !matches!(c, '-' | ' ')) {
            let c = match c.to_ascii_uppercase() {
                'O' => '0',
                'I' | 'L' => '1',
                c => c,
            };
            let v = CROCKFORD.iter().position(|&b| b as char == c)?;
            bits = (bits << 5) | v as u64;
            n += 1;
            if n > 8 {
                return None;
            }
        }
        (n == 8).then(|| Self(format!("{bits:010x}")))
    }

    /// The hex prefix every visitor id with this code starts with.
    pub fn id_prefix(&self) -> &str {
        &self.0
    }

    pub fn matches(&self, id: &str) -> bool {
        id.starts_with(&self.0)
    }
}

/// Where the constant-time comparison lived first; it sits in [`crate::hex`] now, below
/// both this module and [`crate::domain::pow`].
pub use crate::hex::constant_time_eq;

/// Signs and checks visitor tokens.
/// What a place receipt says ([`VisitorSigner::place_receipt`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlaceReceipt {
    pub ticket: u64,
    pub joined_at_ms: u64,
    pub iat_s: u64,
    pub exp_s: u64,
}

/// Why a place receipt was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReceiptError {
    #[error("the place receipt is not valid")]
    Invalid,
    #[error("the place receipt has expired (it lasts the room's heartbeat timeout)")]
    Expired,
    #[error("the place receipt is for another visitor or another room")]
    Foreign,
}

impl ReceiptError {
    /// The error code clients see.
    pub fn code(self) -> &'static str {
        match self {
            Self::Invalid => "receipt_invalid",
            Self::Expired => "receipt_expired",
            Self::Foreign => "receipt_foreign",
        }
    }
}

#[derive(Clone)]
pub struct VisitorSigner {
    key: Vec<u8>,
    /// The HMAC already keyed with `key` (its inner and outer pads hashed once), cloned
    /// for each tag instead of hashing the key again: every status verifies a token and
    /// every join writes a receipt (two HMACs), each saving two SHA-256 blocks.
    keyed: Hmac<Sha256>,
}

impl VisitorSigner {
    pub fn new(key: &[u8]) -> Self {
        Self {
            key: key.to_vec(),
            // unwrap: HMAC accepts keys of any length.
            keyed: Hmac::<Sha256>::new_from_slice(key).unwrap(),
        }
    }

    /// A fresh HMAC under the server's key.
    fn keyed(&self) -> Hmac<Sha256> {
        self.keyed.clone()
    }

    fn mac(&self, id: &str) -> Hmac<Sha256> {
        let mut m = self.keyed();
        m.update(b"anteroom-visitor-v1:");
        m.update(id.as_bytes());
        m
    }

    /// A tag over `data` in its own domain (admin sessions, CSRF tokens), so tags made
    /// for one purpose are never valid for another.
    pub fn tag(&self, domain: &str, data: &str) -> String {
        let mut m = self.keyed();
        m.update(b"anteroom-");
        m.update(domain.as_bytes());
        m.update(b":");
        m.update(data.as_bytes());
        URL_SAFE_NO_PAD.encode(m.finalize().into_bytes())
    }

    /// Checks a tag made by [`VisitorSigner::tag`], in constant time.
    pub fn check_tag(&self, domain: &str, data: &str, tag: &str) -> bool {
        constant_time_eq(self.tag(domain, data).as_bytes(), tag.as_bytes())
    }

    /// A place receipt: the visitor's place in `room` (its ticket and join time), signed,
    /// issued at `iat_s` and good until `exp_s` (seconds since the epoch):
    /// `<room>.<visitor>.<ticket>.<joined_ms>.<iat_s>.<exp_s>.<tag>`. Presented after the
    /// store lost its data, it puts the place back ([`crate::store::Store::restore_place`]).
    ///
    /// The ticket is written masked (`x<hex>`, XORed with a key only the server has, per
    /// room and visitor): in `random` mode the ticket is the visitor's draw, and nothing a
    /// visitor receives may tell it before admission (a script cycling identities would
    /// keep the best draws). Receipts with a plain ticket (before masking) are still read.
    pub fn place_receipt(&self, room: &str, id: &VisitorId, p: &PlaceReceipt) -> String {
        let data = format!(
            "{room}.{}.x{:x}.{}.{}.{}",
            id.as_str(),
            p.ticket ^ self.ticket_mask(room, id),
            p.joined_at_ms,
            p.iat_s,
            p.exp_s
        );
        let tag = self.tag("place-receipt", &data);
        format!("{data}.{tag}")
    }

    /// The mask a receipt's ticket is written under: 64 bits of an HMAC of the room and
    /// the visitor under the server's key.
    fn ticket_mask(&self, room: &str, id: &VisitorId) -> u64 {
        let mut m = self.keyed();
        m.update(b"anteroom-receipt-ticket:");
        m.update(room.as_bytes());
        m.update(b":");
        m.update(id.as_str().as_bytes());
        let d = m.finalize().into_bytes();
        // unwrap: a SHA-256 HMAC has 32 bytes.
        u64::from_be_bytes(d[..8].try_into().unwrap())
    }

    /// Checks a place receipt for `room` and visitor `id` at `now_s`.
    pub fn check_place_receipt(
        &self,
        receipt: &str,
        room: &str,
        id: &VisitorId,
        now_s: u64,
    ) -> Result<PlaceReceipt, ReceiptError> {
        if receipt.len() > 400 {
            return Err(ReceiptError::Invalid);
        }
        let (data, tag) = receipt.rsplit_once('.').ok_or(ReceiptError::Invalid)?;
        if !self.check_tag("place-receipt", data, tag) {
            return Err(ReceiptError::Invalid);
        }
        let parts: Vec<&str> = data.split('.').collect();
        let [r, v, ticket, joined, iat, exp] = parts[..] else {
            return Err(ReceiptError::Invalid);
        };
        if r != room || v != id.as_str() {
            return Err(ReceiptError::Foreign);
        }
        let n = |s: &str| s.parse::<u64>().map_err(|_| ReceiptError::Invalid);
        let ticket = match ticket.strip_prefix('x') {
            Some(hex) => {
                u64::from_str_radix(hex, 16).map_err(|_| ReceiptError::Invalid)?
                    ^ self.ticket_mask(room, id)
            }
            None => n(ticket)?,
        };
        let p = PlaceReceipt {
            ticket,
            joined_at_ms: n(joined)?,
            iat_s: n(iat)?,
            exp_s: n(exp)?,
        };
        if p.exp_s < now_s {
            return Err(ReceiptError::Expired);
        }
        Ok(p)
    }

    /// A grant the queue page hands its own socket, so that a page load and the socket
    /// it opens count once against the visitor's request limit (`<ms>.<tag>`, good for
    /// [`PAGE_GRANT_MS`] and only for this visitor in this room).
    pub fn page_grant(&self, room: &str, id: &VisitorId, now_ms: u64) -> String {
        let tag = self.tag("page-grant", &format!("{room}:{}:{now_ms}", id.as_str()));
        format!("{now_ms}.{tag}")
    }

    /// Whether `grant` was made by [`Self::page_grant`] for this visitor and room less
    /// than [`PAGE_GRANT_MS`] before `now_ms`.
    pub fn check_page_grant(&self, grant: &str, room: &str, id: &VisitorId, now_ms: u64) -> bool {
        let Some((ms, tag)) = grant.split_once('.') else {
            return false;
        };
        let Ok(at) = ms.parse::<u64>() else {
            return false;
        };
        at <= now_ms
            && now_ms - at <= PAGE_GRANT_MS
            && self.check_tag("page-grant", &format!("{room}:{}:{at}", id.as_str()), tag)
    }

    /// The visitor id of a site's user in a room (an enqueue token's `sub`): the same
    /// for every browser, device and instance presenting that `sub`, so one person holds
    /// one place; another room, or another `secret_key`, gives another id.
    pub fn entry_id(&self, room: &str, sub: &str) -> VisitorId {
        let mut m = self.keyed();
        m.update(b"anteroom-entry-v1:");
        m.update(room.as_bytes());
        m.update(b"\0");
        m.update(sub.as_bytes());
        let b = m.finalize().into_bytes();
        VisitorId(crate::hex::lower(&b[..16]))
    }

    /// Keys for proof-of-work challenges, derived from the same secret.
    pub fn pow_keys(&self) -> crate::domain::pow::PowKeys {
        crate::domain::pow::PowKeys::new(&self.key)
    }

    pub fn token(&self, id: &VisitorId) -> String {
        let tag = self.mac(id.as_str()).finalize().into_bytes();
        format!("{}.{}", id.as_str(), URL_SAFE_NO_PAD.encode(tag))
    }

    /// The id inside a genuine token; `None` for anything forged, edited or malformed.
    pub fn verify(&self, token: &str) -> Option<VisitorId> {
        let (id, tag) = token.split_once('.')?;
        let id = VisitorId::parse(id)?;
        let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
        // verify_slice compares in constant time.
        self.mac(id.as_str()).verify_slice(&tag).ok()?;
        Some(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_grant_is_for_one_visitor_one_room_and_a_short_time() {
        let s = VisitorSigner::new(b"k");
        let id = VisitorId::random();
        let g = s.page_grant("r", &id, 1_000_000);
        assert!(s.check_page_grant(&g, "r", &id, 1_000_000));
        assert!(s.check_page_grant(&g, "r", &id, 1_000_000 + PAGE_GRANT_MS));
        assert!(!s.check_page_grant(&g, "r", &id, 1_000_001 + PAGE_GRANT_MS));
        assert!(!s.check_page_grant(&g, "r", &id, 999_999));
        assert!(!s.check_page_grant(&g, "other", &id, 1_000_000));
        assert!(!s.check_page_grant(&g, "r", &VisitorId::random(), 1_000_000));
        assert!(!VisitorSigner::new(b"other").check_page_grant(&g, "r", &id, 1_000_000));
        let forged = g.replacen("1000000", "1000001", 1);
        assert!(!s.check_page_grant(&forged, "r", &id, 1_000_001));
        for bad in ["", ".", "x.y", "1000000", "1000000."] {
            assert!(!s.check_page_grant(bad, "r", &id, 1_000_000), "{bad}");
        }
    }

    #[test]
    fn a_support_code_names_its_visitor_and_forgives_misreads() {
        let id = VisitorId::parse("0123456789abcdef0123456789abcdef").unwrap();
        let code = id.support_code();
        assert_eq!(code, "04HM-ASW9");
        let parsed = SupportCode::parse(&code).unwrap();
        assert_eq!(parsed.id_prefix(), "0123456789");
        assert!(parsed.matches(id.as_str()));
        assert_eq!(SupportCode::parse("o4hm asw9"), Some(parsed.clone()));
        assert_eq!(SupportCode::parse("04hmasw9"), Some(parsed));
        for bad in ["", "04HM-ASW", "04HM-ASW9X", "04HM-ASWU", "../../x"] {
            assert_eq!(SupportCode::parse(bad), None, "{bad}");
        }
        for _ in 0..100 {
            let id = VisitorId::random();
            assert!(SupportCode::parse(&id.support_code())
                .unwrap()
                .matches(id.as_str()));
        }
    }

    #[test]
    fn a_receipt_does_not_show_its_ticket_and_reads_it_back() {
        let s = VisitorSigner::new(b"k");
        let id = VisitorId::random();
        let ticket = 0x0000_8a3f_11c2_d4e5; // a random-mode draw
        let p = PlaceReceipt {
            ticket,
            joined_at_ms: 1_000,
            iat_s: 10,
            exp_s: 70,
        };
        let r = s.place_receipt("room", &id, &p);
        for shown in [ticket.to_string(), format!("{ticket:x}")] {
            assert!(!r.contains(&shown), "{r} shows the ticket {shown}");
        }
        assert_eq!(s.check_place_receipt(&r, "room", &id, 20), Ok(p.clone()));
        // Another visitor's mask differs: the same ticket reads differently.
        let other = VisitorId::random();
        let r2 = s.place_receipt("room", &other, &p);
        assert_ne!(r.split('.').nth(2), r2.split('.').nth(2));
        // Tampering with the masked ticket breaks the tag.
        let parts: Vec<&str> = r.split('.').collect();
        let forged = r.replacen(parts[2], "x1", 1);
        assert_eq!(
            s.check_place_receipt(&forged, "room", &id, 20),
            Err(ReceiptError::Invalid)
        );
    }

    #[test]
    fn a_token_and_a_tag_are_the_hmac_under_the_key_computed_afresh() {
        // The keyed HMAC is cloned, not rebuilt: the output must be the same bytes.
        let s = VisitorSigner::new(b"a key of some length");
        let id = VisitorId::parse("0123456789abcdef0123456789abcdef").unwrap();
        let fresh = |parts: &[&[u8]]| {
            let mut m = Hmac::<Sha256>::new_from_slice(b"a key of some length").unwrap();
            for p in parts {
                m.update(p);
            }
            URL_SAFE_NO_PAD.encode(m.finalize().into_bytes())
        };
        let token = s.token(&id);
        assert_eq!(
            token,
            format!(
                "{}.{}",
                id.as_str(),
                fresh(&[b"anteroom-visitor-v1:", id.as_str().as_bytes()])
            )
        );
        // Twice: a clone leaves the kept state as it was.
        assert_eq!(s.token(&id), token);
        assert_eq!(
            s.tag("csrf", "x"),
            fresh(&[b"anteroom-", b"csrf", b":", b"x"])
        );
    }

    #[test]
    fn round_trips() {
        let s = VisitorSigner::new(b"k");
        let id = VisitorId::random();
        assert_eq!(s.verify(&s.token(&id)), Some(id));
    }

    #[test]
    fn rejects_tampering_and_other_keys() {
        let s = VisitorSigner::new(b"k");
        let t = s.token(&VisitorId::random());
        let other = VisitorId::random();
        let swapped = format!("{}{}", other.as_str(), &t[32..]);
        assert_eq!(s.verify(&swapped), None);
        assert_eq!(VisitorSigner::new(b"other").verify(&t), None);
        assert_eq!(s.verify("garbage"), None);
        assert_eq!(s.verify(&t[..t.len() - 2]), None);
    }

    #[test]
    fn ids_are_128_bit_hex_and_distinct() {
        let a = VisitorId::random();
        assert_eq!(a.as_str().len(), 32);
        assert_ne!(a, VisitorId::random());
        assert!(VisitorId::parse("ABCDEF0123456789abcdef0123456789").is_none());
    }
}
