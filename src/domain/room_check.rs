//! A room's settings checked against this instance: first the room model's own checks
//! (`RoomConfig::check`: ranges and shapes), then what needs the domain: the languages
//! the instance serves and the enqueue-token key. Start-up checks every declared room
//! with it (`preflight`, keeping the parsed keys for the engine), the admin service every
//! change; the custom template's file is checked beside it where `template_dir` is known
//! (`custom_page::check_room`).

use crate::domain::entry::EntryKeys;
use crate::domain::i18n::catalog;
use crate::room::RoomConfig;

/// Checks `room`; `(field, message)` for the first problem.
pub(crate) fn check(room: &RoomConfig) -> Result<(), (&'static str, String)> {
    check_keeping(room, &EntryKeys::default())
}

/// [`check`], keeping the room's parsed entry key in `keys` (start-up's check hands them
/// to the engine, so a declared room's key is parsed once).
pub(crate) fn check_keeping(
    room: &RoomConfig,
    keys: &EntryKeys,
) -> Result<(), (&'static str, String)> {
    room.check()?;
    languages(room)?;
    if let Err(message) = keys.check_room(room) {
        return Err(("entry", message));
    }
    Ok(())
}

/// `languages` and `default_language` name languages the instance serves.
fn languages(room: &RoomConfig) -> Result<(), (&'static str, String)> {
    let served = catalog::current();
    let codes = || {
        served
            .languages()
            .iter()
            .map(|l| l.code)
            .collect::<Vec<_>>()
            .join(", ")
    };
    for code in &room.languages {
        if served.get(code).is_none() {
            return Err((
                "languages",
                format!(
                    "`{code}` is not a language this instance serves ({})",
                    codes()
                ),
            ));
        }
    }
    if let Some(code) = &room.default_language {
        if served.get(code).is_none() {
            return Err((
                "default_language",
                format!(
                    "`{code}` is not a language this instance serves ({})",
                    codes()
                ),
            ));
        }
        if !room.languages.is_empty()
            && !room.languages.iter().any(|c| c.eq_ignore_ascii_case(code))
        {
            return Err((
                "default_language",
                format!("`{code}` is not one of the room's `languages`"),
            ));
        }
    }
    Ok(())
}
