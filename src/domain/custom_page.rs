//! A room's own queue page (`template = "…"`): a minijinja template read from inside
//! `template_dir`, parsed at start-up (and on the admin change that names it), rendered
//! with the variables docs/visitor-page.md#custom-templates lists.
//!
//! **What a template can do.** Only what the engine's sandbox allows: expressions,
//! filters, loops and macros over the variables it is handed. The environment has no
//! loader, so `{% include %}`, `{% extends %}` and `{% import %}` find no other template
//! and no file is read beyond the one the room names; output is HTML-escaped whatever the
//! file's name (`|safe` is the author's own choice, on their own text); each render has
//! a fuel budget ([`FUEL`]), so a runaway loop ends in an error, not a stuck worker.
//!
//! **Where from.** A room's `template` is a relative path without `..`; it is joined to
//! `template_dir` and the result, symlinks resolved, must still be inside that folder. A
//! room with a template on an instance without `template_dir` fails its check, so an
//! admin change can never make an instance read a file it was not given.
//!
//! **When read.** A compiled template is kept per file and compiled again when the
//! file's modification time or length changes, so an operator's edit shows on the next
//! page; a file that no longer parses then renders the built-in page (logged), as a
//! missing file does.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::SystemTime;

use minijinja::{AutoEscape, Environment};

use crate::config::Settings;
use crate::room::RoomConfig;

/// The most a template file may weigh (bytes).
pub const MAX_TEMPLATE_BYTES: u64 = 256 * 1024;
/// The work one render may do (minijinja fuel: about one unit per instruction).
pub const FUEL: u64 = 200_000;

/// A compiled template and the file state it was compiled from.
struct Compiled {
    modified: Option<SystemTime>,
    len: u64,
    env: Arc<Environment<'static>>,
}

/// Compiled templates by their resolved path. A plain mutex: it is held for a map look-up
/// or an insert, never while a template renders or a file is read.
static CACHE: LazyLock<Mutex<HashMap<PathBuf, Arc<Compiled>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// The template's name inside its environment (it is the only one there).
const NAME: &str = "page";

/// The file a room's template names, resolved inside `template_dir`.
pub fn resolve(settings: &Settings, template: &str) -> Result<PathBuf, String> {
    crate::room::template_path(template)?;
    let Some(dir) = &settings.template_dir else {
        return Err("needs `template_dir` set (the folder templates are read from)".into());
    };
    let dir = dir
        .canonicalize()
        .map_err(|e| format!("template_dir {}: {e}", dir.display()))?;
    let path = dir.join(template);
    let real = path
        .canonicalize()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if !real.starts_with(&dir) {
        return Err(format!(
            "{} leads outside template_dir {}",
            path.display(),
            dir.display()
        ));
    }
    Ok(real)
}

/// Reads and parses a room's template, when it has one: `Err` names the file (and the
/// line of a syntax error).
pub fn check_room(settings: &Settings, room: &RoomConfig) -> Result<(), String> {
    let Some(t) = &room.template else {
        return Ok(());
    };
    let path = resolve(settings, t)?;
    compiled(&path).map(|_| ())
}

/// The compiled template at `path`, compiled now if the file changed.
fn compiled(path: &Path) -> Result<Arc<Compiled>, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let modified = meta.modified().ok();
    if let Some(c) = CACHE.lock().unwrap_or_else(|e| e.into_inner()).get(path) {
        if c.modified == modified && c.len == meta.len() {
            return Ok(c.clone());
        }
    }
    if meta.len() > MAX_TEMPLATE_BYTES {
        return Err(format!(
            "{} is larger than {MAX_TEMPLATE_BYTES} bytes",
            path.display()
        ));
    }
    let source = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let env = environment(source).map_err(|e| describe(path, &e))?;
    let c = Arc::new(Compiled {
        modified,
        len: meta.len(),
        env: Arc::new(env),
    });
    CACHE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(path.to_path_buf(), c.clone());
    Ok(c)
}

/// The sandbox: one template, auto-escaped as HTML, strict about nothing else, with fuel.
fn environment(source: String) -> Result<Environment<'static>, minijinja::Error> {
    let mut env = Environment::new();
    env.set_auto_escape_callback(|_| AutoEscape::Html);
    env.set_fuel(Some(FUEL));
    env.set_recursion_limit(50);
    env.add_template_owned(NAME, source)?;
    Ok(env)
}

/// `path:line: what`, as an operator reads a compiler's message.
fn describe(path: &Path, e: &minijinja::Error) -> String {
    let what = e
        .detail()
        .map_or_else(|| e.kind().to_string(), |d| format!("{}: {d}", e.kind()));
    match e.line() {
        Some(line) => format!("{}:{line}: {what}", path.display()),
        None => format!("{}: {what}", path.display()),
    }
}

/// Renders a room's template with `ctx`; `Err` says why (file, line), for the log.
pub fn render(
    settings: &Settings,
    template: &str,
    ctx: minijinja::Value,
) -> Result<String, String> {
    let path = resolve(settings, template)?;
    let c = compiled(&path)?;
    let tpl = c.env.get_template(NAME).map_err(|e| describe(&path, &e))?;
    tpl.render(ctx).map_err(|e| describe(&path, &e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(dir: &Path) -> Settings {
        Settings {
            template_dir: Some(dir.to_path_buf()),
            ..Settings::default()
        }
    }

    fn room(t: &str) -> RoomConfig {
        RoomConfig {
            id: "shop".into(),
            template: Some(t.into()),
            ..RoomConfig::default()
        }
    }

    #[test]
    fn a_syntax_error_names_the_file_and_line() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("q.html"),
            "<p>\n{{ place }}\n{% if %}\n</p>\n",
        )
        .unwrap();
        let e = check_room(&settings(d.path()), &room("q.html")).unwrap_err();
        assert!(e.contains("q.html:3:"), "{e}");
        assert!(e.contains("syntax error"), "{e}");
    }

    #[test]
    fn paths_outside_the_folder_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let inner = d.path().join("t");
        std::fs::create_dir(&inner).unwrap();
        std::fs::write(d.path().join("secret.html"), "secret").unwrap();
        for bad in ["../secret.html", "/etc/passwd", "a/../../secret.html", ""] {
            assert!(check_room(&settings(&inner), &room(bad)).is_err(), "{bad}");
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(d.path().join("secret.html"), inner.join("link.html"))
                .unwrap();
            let e = check_room(&settings(&inner), &room("link.html")).unwrap_err();
            assert!(e.contains("outside template_dir"), "{e}");
        }
        let none = Settings::default();
        let e = check_room(&none, &room("q.html")).unwrap_err();
        assert!(e.contains("template_dir"), "{e}");
    }

    #[test]
    fn output_is_escaped_and_other_files_cannot_be_included() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("other.html"), "OTHER").unwrap();
        std::fs::write(d.path().join("q.txt"), "{{ name }}").unwrap();
        let s = settings(d.path());
        let out = render(
            &s,
            "q.txt",
            minijinja::context! { name => "<script>x</script>" },
        )
        .unwrap();
        assert_eq!(out, "&lt;script&gt;x&lt;&#x2f;script&gt;");
        std::fs::write(d.path().join("inc.html"), "{% include 'other.html' %}").unwrap();
        let e = render(&s, "inc.html", minijinja::context! {}).unwrap_err();
        assert!(e.contains("inc.html:1"), "{e}");
    }

    #[test]
    fn a_runaway_loop_runs_out_of_fuel() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("loop.html"),
            "{% for a in range(1000) %}{% for b in range(1000) %}x{% endfor %}{% endfor %}",
        )
        .unwrap();
        let e = render(&settings(d.path()), "loop.html", minijinja::context! {}).unwrap_err();
        assert!(e.contains("fuel"), "{e}");
    }

    #[test]
    fn an_edited_file_is_compiled_again() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("q.html");
        std::fs::write(&f, "one").unwrap();
        let s = settings(d.path());
        assert_eq!(render(&s, "q.html", minijinja::context! {}).unwrap(), "one");
        std::fs::write(&f, "two!").unwrap();
        assert_eq!(
            render(&s, "q.html", minijinja::context! {}).unwrap(),
            "two!"
        );
    }
}
