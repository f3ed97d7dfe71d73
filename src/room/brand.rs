//! `[rooms.brand]`: a room's look without HTML — a title, a logo, three colours and a
//! short message — checked here once, at start-up and on every admin change, so the
//! page only ever sets CSS variables from values this module accepted.
//!
//! **Contrast (WCAG 2.x AA, 4.5:1).** Two pairs are checked, each naming the field that
//! would fix it: `text_color` on `background_color` (all body text), and `accent_color`
//! against `background_color`. The accent is drawn *on* the background (links, the big
//! place number, the progress bar) and the button's text is drawn *in* the background
//! colour on an accent button, so one ratio covers both uses. A colour left out is the
//! built-in light theme's (`#ffffff` card, `#1b1f24` text, `#1f5fbf` accent), and is
//! checked the same way. The muted text, the page's outer background and the state
//! colours (ok, warn, bad) are derived from these three by [`Palette::of`], which keeps
//! each at 4.5:1 too (tested below), so a brand that passes cannot produce unreadable
//! text anywhere on the built-in page.
//!
//! **Logo.** `https://…` (an absolute URL without credentials; its origin is added to the
//! page's `img-src`), or a path under this instance's own static files (`/static/…`,
//! plain characters, no `..`). Anything else — `javascript:`, `data:`, `http:`,
//! protocol-relative `//host`, a path climbing out — is refused naming `brand.logo_url`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The contrast every text colour keeps against its background (WCAG AA, normal text).
pub const MIN_CONTRAST: f64 = 4.5;
/// The longest `title` (characters).
pub const MAX_TITLE: usize = 120;
/// The longest `message`, per language (characters).
pub const MAX_MESSAGE: usize = 500;
/// The longest `logo_url` (bytes).
pub const MAX_LOGO_URL: usize = 2048;

/// The built-in light theme's colours (static/anteroom.css): what a colour left out is.
pub const DEFAULT_BACKGROUND: Rgb = Rgb(0xff, 0xff, 0xff);
pub const DEFAULT_TEXT: Rgb = Rgb(0x1b, 0x1f, 0x24);
pub const DEFAULT_ACCENT: Rgb = Rgb(0x1f, 0x5f, 0xbf);

/// `[rooms.brand]`. Every key may be left out; an empty table is no branding.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Brand {
    /// The page's heading above the card and its tab title, instead of "Waiting room ·
    /// <room name>" (at most 120 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The logo shown above the card: `https://…`, or a path under this instance's static
    /// files (`/static/…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logo_url: Option<String>,
    /// Links, the place number, the progress bar and the buttons: `#rgb` or `#rrggbb`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accent_color: Option<String>,
    /// The card's (and, slightly tinted, the page's) background: `#rgb` or `#rrggbb`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background_color: Option<String>,
    /// The text: `#rgb` or `#rrggbb`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_color: Option<String>,
    /// A short text shown on the page (at most 500 characters): one string, or a table
    /// by language code (`{ en = "…", de = "…" }`, the visitor's language, else `en`,
    /// else the first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<BrandMessage>,
}

/// `brand.message`: one text for every language, or one per language code.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(untagged)]
pub enum BrandMessage {
    Text(String),
    PerLanguage(BTreeMap<String, String>),
}

/// A colour as red, green, blue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rgb(pub u8, pub u8, pub u8);

impl Rgb {
    /// `#rgb` or `#rrggbb` (either case); nothing else.
    pub fn parse(s: &str) -> Option<Self> {
        let hex = s.strip_prefix('#')?;
        if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let d = |i: usize, n: usize| u8::from_str_radix(&hex[i..i + n], 16).ok();
        match hex.len() {
            3 => Some(Self(d(0, 1)? * 17, d(1, 1)? * 17, d(2, 1)? * 17)),
            6 => Some(Self(d(0, 2)?, d(2, 2)?, d(4, 2)?)),
            _ => None,
        }
    }

    /// `#rrggbb`, lowercase: the only form written into CSS.
    pub fn css(self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }

    /// Relative luminance (WCAG 2.x).
    pub fn luminance(self) -> f64 {
        let lin = |c: u8| {
            let c = c as f64 / 255.0;
            if c <= 0.04045 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * lin(self.0) + 0.7152 * lin(self.1) + 0.0722 * lin(self.2)
    }

    /// `self` moved `part` (0–1) of the way towards `other`, per channel.
    pub fn mix(self, other: Rgb, part: f64) -> Rgb {
        let m = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * part).round() as u8;
        Rgb(m(self.0, other.0), m(self.1, other.1), m(self.2, other.2))
    }
}

/// The contrast ratio of two colours (1 to 21).
pub fn contrast(a: Rgb, b: Rgb) -> f64 {
    let (x, y) = (a.luminance(), b.luminance());
    let (hi, lo) = if x > y { (x, y) } else { (y, x) };
    (hi + 0.05) / (lo + 0.05)
}

/// Every colour the built-in page uses, derived from a brand's three.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Palette {
    /// The card (where the text is).
    pub card: Rgb,
    /// The page around the card: the card tinted 5 % towards the text.
    pub page: Rgb,
    pub text: Rgb,
    /// Secondary text: as far towards the background as keeps 4.5:1 on page and card.
    pub muted: Rgb,
    /// Borders and the progress track (decorative).
    pub line: Rgb,
    pub accent: Rgb,
    /// Text on an accent button: the background colour.
    pub accent_ink: Rgb,
    /// The state colours (admitted, paused, closed), from the light or the dark theme,
    /// whichever reads on this background, else the text colour.
    pub ok: Rgb,
    pub warn: Rgb,
    pub bad: Rgb,
    /// The background is dark (the page says `color-scheme: dark`).
    pub dark: bool,
}

impl Palette {
    pub fn of(b: &Brand) -> Self {
        let pick = |v: &Option<String>, d: Rgb| v.as_deref().and_then(Rgb::parse).unwrap_or(d);
        let card = pick(&b.background_color, DEFAULT_BACKGROUND);
        let text = pick(&b.text_color, DEFAULT_TEXT);
        let accent = pick(&b.accent_color, DEFAULT_ACCENT);
        let page = card.mix(text, 0.05);
        let reads = |c: Rgb| contrast(c, card) >= MIN_CONTRAST && contrast(c, page) >= MIN_CONTRAST;
        // From 40 % of the way to the background down to none: the first that reads.
        let muted = (0..=8)
            .map(|i| text.mix(card, 0.40 - i as f64 * 0.05))
            .find(|c| reads(*c))
            .unwrap_or(text);
        let state = |light: Rgb, dark: Rgb| {
            [light, dark]
                .into_iter()
                .filter(|c| reads(*c))
                .max_by(|a, b| contrast(*a, card).total_cmp(&contrast(*b, card)))
                .unwrap_or(text)
        };
        Self {
            card,
            page,
            text,
            muted,
            line: card.mix(text, 0.15),
            accent,
            accent_ink: card,
            ok: state(Rgb(0x1c, 0x7c, 0x3c), Rgb(0x56, 0xc2, 0x7a)),
            warn: state(Rgb(0x9a, 0x5b, 0x00), Rgb(0xe0, 0xa0, 0x40)),
            bad: state(Rgb(0xa1, 0x1d, 0x2b), Rgb(0xff, 0x7b, 0x86)),
            dark: card.luminance() < 0.2,
        }
    }

    /// The stylesheet that sets the page's variables (`GET /r/{room}/brand.css`): only
    /// `#rrggbb` values this module wrote.
    pub fn css(&self) -> String {
        format!(
            ":root{{--bg:{};--card:{};--ink:{};--muted:{};--line:{};--accent:{};--accent-ink:{};--ok:{};--warn:{};--bad:{};--ok-ink:{};--warn-ink:{};--bad-ink:{};color-scheme:{}}}\n",
            self.page.css(),
            self.card.css(),
            self.text.css(),
            self.muted.css(),
            self.line.css(),
            self.accent.css(),
            self.accent_ink.css(),
            self.ok.css(),
            self.warn.css(),
            self.bad.css(),
            self.ok.css(),
            self.warn.css(),
            self.bad.css(),
            if self.dark { "dark" } else { "light" },
        )
    }
}

impl Brand {
    /// No key set: the built-in look.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// Any colour set: the page links the brand's stylesheet.
    pub fn has_colors(&self) -> bool {
        self.accent_color.is_some() || self.background_color.is_some() || self.text_color.is_some()
    }

    /// The message in `lang` (a code like `de` or `zh-CN`; its first part also matches),
    /// else English, else the first one given.
    pub fn message_in(&self, lang: &str) -> Option<&str> {
        match self.message.as_ref()? {
            BrandMessage::Text(s) => Some(s),
            BrandMessage::PerLanguage(m) => {
                let base = lang.split('-').next().unwrap_or(lang);
                m.get(lang)
                    .or_else(|| {
                        m.iter()
                            .find(|(k, _)| k.eq_ignore_ascii_case(lang))
                            .map(|(_, v)| v)
                    })
                    .or_else(|| m.get(base))
                    .or_else(|| m.get("en"))
                    .or_else(|| m.values().next())
                    .map(|s| s.as_str())
            }
        }
    }

    /// The origin a `https://` logo comes from (for the page's `img-src`).
    pub fn logo_origin(&self) -> Option<String> {
        let u = url::Url::parse(self.logo_url.as_deref()?).ok()?;
        (u.scheme() == "https").then(|| u.origin().ascii_serialization())
    }

    /// Checks every key; `(field, message)` for the first problem.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if let Some(t) = &self.title {
            if t.trim().is_empty() || t.chars().count() > MAX_TITLE {
                return Err((
                    "brand.title",
                    format!("must be 1 to {MAX_TITLE} characters"),
                ));
            }
        }
        if let Some(u) = &self.logo_url {
            check_logo(u).map_err(|m| ("brand.logo_url", m))?;
        }
        let colour = |field: &'static str, v: &Option<String>| match v {
            Some(s) if Rgb::parse(s).is_none() => Err((
                field,
                format!("must be a hex colour like #1f5fbf or #fff (got {s:?})"),
            )),
            _ => Ok(()),
        };
        colour("brand.accent_color", &self.accent_color)?;
        colour("brand.background_color", &self.background_color)?;
        colour("brand.text_color", &self.text_color)?;
        let p = Palette::of(self);
        let ratio = contrast(p.text, p.card);
        if ratio < MIN_CONTRAST {
            // Name the key the operator set (the other one is the default).
            let field = if self.text_color.is_some() {
                "brand.text_color"
            } else {
                "brand.background_color"
            };
            return Err((
                field,
                format!(
                    "text {} on background {} has a contrast of {ratio:.2}:1, below WCAG AA's 4.5:1",
                    p.text.css(),
                    p.card.css()
                ),
            ));
        }
        let ratio = contrast(p.accent, p.card);
        if ratio < MIN_CONTRAST {
            let field = if self.accent_color.is_some() {
                "brand.accent_color"
            } else {
                "brand.background_color"
            };
            return Err((
                field,
                format!(
                    "accent {} against background {} has a contrast of {ratio:.2}:1, below WCAG AA's 4.5:1 (links and the place number are drawn in the accent on the background, button text in the background on the accent)",
                    p.accent.css(),
                    p.card.css()
                ),
            ));
        }
        match &self.message {
            Some(BrandMessage::Text(s)) => check_message(s)?,
            Some(BrandMessage::PerLanguage(m)) => {
                if m.is_empty() {
                    return Err(("brand.message", "names no language".into()));
                }
                for (code, s) in m {
                    let ok = !code.is_empty()
                        && code.len() <= 16
                        && code.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
                    if !ok {
                        return Err((
                            "brand.message",
                            format!("has {code:?}, which is not a language code like en or zh-CN"),
                        ));
                    }
                    check_message(s)?;
                }
            }
            None => {}
        }
        Ok(())
    }
}

fn check_message(s: &str) -> Result<(), (&'static str, String)> {
    if s.trim().is_empty() || s.chars().count() > MAX_MESSAGE {
        return Err((
            "brand.message",
            format!("must be 1 to {MAX_MESSAGE} characters"),
        ));
    }
    Ok(())
}

/// `https://` without credentials, or `/static/<plain path>`.
fn check_logo(u: &str) -> Result<(), String> {
    const WHY: &str =
        "must be an https:// URL or a path under this instance's static files (/static/…)";
    if u.len() > MAX_LOGO_URL {
        return Err(format!("is longer than {MAX_LOGO_URL} bytes"));
    }
    if u.starts_with('/') {
        let Some(rest) = u.strip_prefix("/static/") else {
            return Err(format!("{WHY}; {u:?} is outside /static/"));
        };
        let plain = !rest.is_empty()
            && rest
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'/'))
            && rest
                .split('/')
                .all(|seg| !seg.is_empty() && seg != "." && seg != "..");
        if !plain {
            return Err(format!(
                "{WHY}; {u:?} climbs out of /static/ or has characters other than letters, digits, . _ - /"
            ));
        }
        return Ok(());
    }
    // The URL parser forgives `https:///x` and `https:\\x`; the text itself must be
    // `https://host…`.
    let host_first = u
        .get(..8)
        .is_some_and(|p| p.eq_ignore_ascii_case("https://"))
        && !u[8..].starts_with(['/', '\\'])
        && !u.contains('\\');
    match url::Url::parse(u) {
        Ok(p) if p.scheme() == "https" && !host_first => Err(format!("{WHY}; {u:?} has no host")),
        Ok(p) if p.scheme() == "https" => {
            if p.host_str().is_none_or(|h| h.is_empty()) {
                return Err(format!("{WHY}; {u:?} has no host"));
            }
            if !p.username().is_empty() || p.password().is_some() {
                return Err(format!("{WHY}; {u:?} carries credentials"));
            }
            if u.chars().any(|c| c.is_whitespace() || c.is_control()) {
                return Err(format!("{WHY}; {u:?} has spaces or control characters"));
            }
            Ok(())
        }
        Ok(p) => Err(format!("{WHY}; the scheme {}: is not allowed", p.scheme())),
        Err(_) => Err(format!("{WHY}; {u:?} is neither")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brand(accent: &str, bg: &str, text: &str) -> Brand {
        Brand {
            accent_color: Some(accent.into()),
            background_color: Some(bg.into()),
            text_color: Some(text.into()),
            ..Default::default()
        }
    }

    #[test]
    fn colours_parse_as_hex_only() {
        assert_eq!(Rgb::parse("#fff"), Some(Rgb(255, 255, 255)));
        assert_eq!(Rgb::parse("#1F5fbf"), Some(Rgb(0x1f, 0x5f, 0xbf)));
        for bad in [
            "fff",
            "#ffff",
            "#ggg",
            "red",
            "#fff;}",
            "rgb(0,0,0)",
            "#ff ff ff",
            "",
        ] {
            assert_eq!(Rgb::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn contrast_matches_the_wcag_reference_values() {
        assert!((contrast(Rgb(0, 0, 0), Rgb(255, 255, 255)) - 21.0).abs() < 1e-9);
        assert!((contrast(Rgb(0x77, 0x77, 0x77), Rgb(255, 255, 255)) - 4.48).abs() < 0.01);
        assert_eq!(contrast(Rgb(9, 9, 9), Rgb(9, 9, 9)), 1.0);
    }

    #[test]
    fn a_bad_colour_is_refused_naming_its_field() {
        let mut b = brand("#1f5fbf", "#ffffff", "#111111");
        b.accent_color = Some("blue".into());
        let (field, msg) = b.check().unwrap_err();
        assert_eq!(field, "brand.accent_color");
        assert!(msg.contains("hex colour"), "{msg}");
        b.accent_color = Some("#1f5fbf;background:url(x)".into());
        assert_eq!(b.check().unwrap_err().0, "brand.accent_color");
    }

    #[test]
    fn low_contrast_text_or_accent_is_refused_naming_the_field() {
        let (field, msg) = brand("#1f5fbf", "#ffffff", "#aaaaaa").check().unwrap_err();
        assert_eq!(field, "brand.text_color");
        assert!(msg.contains("4.5:1") && msg.contains("#aaaaaa"), "{msg}");
        let (field, _) = brand("#ffcc00", "#ffffff", "#111111").check().unwrap_err();
        assert_eq!(field, "brand.accent_color");
        // Only a background given: the default text and accent are what fail on it.
        let dark_bg = Brand {
            background_color: Some("#101010".into()),
            ..Default::default()
        };
        assert_eq!(dark_bg.check().unwrap_err().0, "brand.background_color");
        brand("#ffcc00", "#101418", "#f5f5f5").check().unwrap();
    }

    #[test]
    fn every_derived_text_colour_keeps_aa_contrast() {
        for b in [
            brand("#1f5fbf", "#ffffff", "#1b1f24"),
            brand("#ffcc00", "#101418", "#f5f5f5"),
            brand("#7a1f5c", "#fdf6ec", "#2b1a10"),
            brand("#00ffcc", "#000000", "#ffffff"),
            brand("#595959", "#ffffff", "#595959"),
        ] {
            b.check().unwrap();
            let p = Palette::of(&b);
            for (what, c) in [
                ("text", p.text),
                ("muted", p.muted),
                ("ok", p.ok),
                ("warn", p.warn),
                ("bad", p.bad),
            ] {
                for (bg_name, bg) in [("card", p.card), ("page", p.page)] {
                    let r = contrast(c, bg);
                    assert!(
                        r >= MIN_CONTRAST - 0.05,
                        "{what} on {bg_name}: {r:.2} for {b:?}"
                    );
                }
            }
            assert!(contrast(p.accent, p.card) >= MIN_CONTRAST);
            assert!(contrast(p.accent_ink, p.accent) >= MIN_CONTRAST);
        }
    }

    #[test]
    fn unsafe_logo_urls_are_refused_naming_the_field() {
        for bad in [
            "javascript:alert(1)",
            "JAVASCRIPT:alert(1)",
            "data:image/svg+xml,<svg/>",
            "http://shop.example/logo.png",
            "//evil.example/logo.png",
            "/static/../admin",
            "/static/a/../../x",
            "/static/%2e%2e/x",
            "/admin/logo.png",
            "/static/",
            "https://user:pw@shop.example/logo.png",
            "https:///logo.png",
            "logo.png",
            "vbscript:x",
        ] {
            let b = Brand {
                logo_url: Some(bad.into()),
                ..Default::default()
            };
            let (field, _) = b.check().expect_err(bad);
            assert_eq!(field, "brand.logo_url", "{bad}");
        }
        for good in [
            "https://cdn.shop.example/logo.svg",
            "/static/favicon.svg",
            "/static/brand/logo-2.png",
        ] {
            let b = Brand {
                logo_url: Some(good.into()),
                ..Default::default()
            };
            b.check().unwrap();
        }
    }

    #[test]
    fn the_message_is_chosen_by_language_then_english_then_first() {
        let mut m = BTreeMap::new();
        m.insert("en".to_string(), "Hello".to_string());
        m.insert("de".to_string(), "Hallo".to_string());
        m.insert("zh-CN".to_string(), "你好".to_string());
        let b = Brand {
            message: Some(BrandMessage::PerLanguage(m)),
            ..Default::default()
        };
        assert_eq!(b.message_in("de"), Some("Hallo"));
        assert_eq!(b.message_in("de-AT"), Some("Hallo"));
        assert_eq!(b.message_in("zh-cn"), Some("你好"));
        assert_eq!(b.message_in("fr"), Some("Hello"));
        b.check().unwrap();
    }

    #[test]
    fn the_stylesheet_holds_only_written_hex_values() {
        let css = Palette::of(&brand("#F00", "#ffffff", "#000")).css();
        assert!(css.contains("--ink:#000000"), "{css}");
        assert!(!css.contains("F00"));
    }
}
