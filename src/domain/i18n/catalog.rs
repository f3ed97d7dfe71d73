//! The languages this instance serves: the built-in Fluent resources (`i18n/*.ftl`,
//! embedded in the binary) with an operator's `i18n_dir` laid over them.
//!
//! Each language is checked against English when it is loaded: the same messages (none
//! missing, none English lacks) with the same variables. A built-in language that fails
//! this fails the unit tests; an operator's file fails start-up (or, on SIGHUP, is logged
//! and the languages already served are kept), naming the file and, for a syntax error,
//! the line.
//!
//! A loaded language is formatted twice over:
//! - its **bundle** formats a message with real arguments, for what the server renders
//!   (numbers written in the language's own digits: see [`digits`]);
//! - its **tables** ([`Strings`], [`DropStrings`], [`ToldStrings`]) are every message
//!   formatted once with each variable left as `{name}`, for the templates and for the
//!   page's script, which fills the live figures in; a message that selects a plural
//!   form is also handed over as one text per CLDR plural category ([`Language::plurals`]),
//!   so `queue.js` picks the form with `Intl.PluralRules`, one server-side truth.
//!
//! A catalog lives as long as the process: pages borrow its strings as `&'static str`
//! (the templates and the tables were built that way, and a page being rendered during a
//! SIGHUP keeps the strings it started with). A reload that changes nothing keeps the
//! catalog it has; one that changes a file leaks the old catalog, about 0.5 MB for the
//! fifteen built-in languages, once per such SIGHUP.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use fluent_bundle::concurrent::FluentBundle;
use fluent_bundle::{FluentArgs, FluentResource, FluentValue};
use fluent_syntax::ast;
use intl_memoizer::Memoizable;
use intl_pluralrules::{PluralCategory, PluralRuleType, PluralRules};
use serde::de::value::{BorrowedStrDeserializer, MapDeserializer};
use serde::Deserialize;
use unic_langid::LanguageIdentifier;

use super::drops::DropStrings;
use super::told::ToldStrings;
use super::Strings;

/// The languages built into the binary: code and Fluent source. English first: it is
/// the reference every other language is checked against, and the last fallback.
pub const BUILT_IN: &[(&str, &str)] = &[
    ("en", include_str!("../../../i18n/en.ftl")),
    ("zh-CN", include_str!("../../../i18n/zh-CN.ftl")),
    ("zh-TW", include_str!("../../../i18n/zh-TW.ftl")),
    ("es", include_str!("../../../i18n/es.ftl")),
    ("fr", include_str!("../../../i18n/fr.ftl")),
    ("de", include_str!("../../../i18n/de.ftl")),
    ("ar", include_str!("../../../i18n/ar.ftl")),
    ("it", include_str!("../../../i18n/it.ftl")),
    ("pt-BR", include_str!("../../../i18n/pt-BR.ftl")),
    ("ja", include_str!("../../../i18n/ja.ftl")),
    ("ko", include_str!("../../../i18n/ko.ftl")),
    ("nl", include_str!("../../../i18n/nl.ftl")),
    ("id", include_str!("../../../i18n/id.ftl")),
    ("tr", include_str!("../../../i18n/tr.ftl")),
    ("pl", include_str!("../../../i18n/pl.ftl")),
];

/// Why a set of `.ftl` files cannot be served.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum I18nError {
    #[error("i18n_dir: cannot read {path}: {message}")]
    Read { path: String, message: String },
    #[error("i18n: {file} line {line}: {message}")]
    Syntax {
        file: String,
        line: usize,
        message: String,
    },
    #[error("i18n: {file}: {message}")]
    Invalid { file: String, message: String },
}

/// A text direction: `dir` on `<html>` and in `GET /api/languages`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Ltr,
    Rtl,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Ltr => "ltr",
            Direction::Rtl => "rtl",
        }
    }
}

/// One served language.
pub struct Language {
    /// The code it is served under (`zh-CN`), as `?lang=` and `lang=""` write it.
    pub code: &'static str,
    pub langid: LanguageIdentifier,
    /// Its own name for itself (`language-name`): what the language switch shows.
    pub name: &'static str,
    pub dir: Direction,
    /// The Unicode numbering system its numbers are written in (`latn`, `arab`): the
    /// server's digits and `Intl.NumberFormat`'s in the page's script.
    pub numbering: &'static str,
    bundle: FluentBundle<Arc<FluentResource>>,
    pub strings: Strings,
    pub drops: DropStrings,
    pub told: ToldStrings,
    /// For each message (by its table key, `ahead_many`) that selects a plural form: one
    /// text per CLDR category of this language (`one`, `few`, `other`…), `{name}` left
    /// for each variable.
    pub plurals: BTreeMap<String, BTreeMap<&'static str, &'static str>>,
}

impl std::fmt::Debug for Language {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Language")
            .field("code", &self.code)
            .finish()
    }
}

/// An argument of a message formatted on the server.
#[derive(Clone, Debug)]
pub enum Arg<'a> {
    Num(u64),
    Text(&'a str),
}

impl Language {
    /// A message formatted with real arguments (plural forms chosen, digits localised).
    /// A message this language lacks is formatted in English (never the case for a
    /// loaded catalog: every language has every key), and an unknown id is returned as is.
    pub fn format(&self, id: &str, args: &[(&str, Arg)]) -> String {
        let Some(pattern) = self.bundle.get_message(id).and_then(|m| m.value()) else {
            return id.to_string();
        };
        let mut fa = FluentArgs::new();
        for (k, v) in args {
            match v {
                Arg::Num(n) => fa.set(*k, FluentValue::from(*n)),
                Arg::Text(s) => fa.set(*k, FluentValue::from(*s)),
            }
        }
        let mut errors = Vec::new();
        self.bundle
            .format_pattern(pattern, Some(&fa), &mut errors)
            .into_owned()
    }

    /// A whole number in this language's digits.
    pub fn number(&self, n: u64) -> String {
        localise_digits(&n.to_string(), self.numbering)
    }
}

/// A language's parsed files, in order (file name, resource): a later one overrides.
type Resources = Vec<(String, Arc<FluentResource>)>;

/// The served languages, English first.
#[derive(Debug)]
pub struct Catalog {
    languages: Vec<&'static Language>,
    /// The Fluent sources it was built from (file name, text), to tell a reload that
    /// changes nothing.
    sources: Vec<(String, String)>,
}

impl Catalog {
    /// The built-in languages with `dir`'s `.ftl` files laid over them: `xx.ftl` adds the
    /// language `xx` (it must then have every message) or overrides some of the messages
    /// of a built-in one.
    pub fn load(dir: Option<&Path>) -> Result<Catalog, I18nError> {
        let mut sources: Vec<(String, String, String)> = BUILT_IN
            .iter()
            .map(|(code, text)| {
                (
                    code.to_string(),
                    format!("i18n/{code}.ftl (built in)"),
                    text.to_string(),
                )
            })
            .collect();
        if let Some(dir) = dir {
            sources.extend(read_dir(dir)?);
        }
        Catalog::build(sources)
    }

    /// Builds from (code, file name, Fluent text), in order: a later file for a code
    /// overrides the messages it names.
    fn build(sources: Vec<(String, String, String)>) -> Result<Catalog, I18nError> {
        // (code, [(file, resource)]), in first-seen order.
        let mut by_code: Vec<(String, Resources)> = Vec::new();
        for (code, file, text) in &sources {
            let res = parse(file, text)?;
            match by_code
                .iter_mut()
                .find(|(c, _)| c.eq_ignore_ascii_case(code))
            {
                Some((_, list)) => list.push((file.clone(), res)),
                None => by_code.push((code.clone(), vec![(file.clone(), res)])),
            }
        }
        let en = by_code
            .iter()
            .find(|(c, _)| c == "en")
            .map(|(_, r)| effective(r))
            .ok_or_else(|| I18nError::Invalid {
                file: "i18n/en.ftl".into(),
                message: "English, the reference language, is missing".into(),
            })?;
        let mut languages = Vec::new();
        for (code, resources) in &by_code {
            let last_file = resources.last().map(|r| r.0.clone()).unwrap_or_default();
            let lang =
                build_language(code, resources, &en).map_err(|message| I18nError::Invalid {
                    file: last_file.clone(),
                    message,
                })?;
            // unwrap-free leak: see the module doc (pages borrow the strings for 'static).
            languages.push(&*Box::leak(Box::new(lang)));
        }
        Ok(Catalog {
            languages,
            sources: sources.into_iter().map(|(_, f, t)| (f, t)).collect(),
        })
    }

    pub fn languages(&self) -> &[&'static Language] {
        &self.languages
    }

    pub fn english(&self) -> &'static Language {
        self.languages[0]
    }

    /// The language served under `code` (case-insensitive), if any.
    pub fn get(&self, code: &str) -> Option<&'static Language> {
        self.languages
            .iter()
            .copied()
            .find(|l| l.code.eq_ignore_ascii_case(code))
    }

    /// The served language a tag asks for: the exact code, else the same language with
    /// another or no region (`zh` → `zh-CN`, `zh-HK` → `zh-TW`, `pt` → `pt-BR`,
    /// `en-US` → `en`).
    pub fn lookup(&self, tag: &str) -> Option<&'static Language> {
        let tag = tag.trim();
        if tag.is_empty() || tag == "*" {
            return None;
        }
        if let Some(l) = self.get(tag) {
            return Some(l);
        }
        let id: LanguageIdentifier = tag.parse().ok()?;
        let lang = id.language.as_str();
        // Traditional Chinese is asked for by script or by region.
        if lang == "zh" {
            let traditional = id.script.is_some_and(|s| s.as_str() == "Hant")
                || id
                    .region
                    .is_some_and(|r| ["TW", "HK", "MO"].contains(&r.as_str()));
            let want = if traditional { "zh-TW" } else { "zh-CN" };
            if let Some(l) = self.get(want) {
                return Some(l);
            }
        }
        self.languages
            .iter()
            .copied()
            .find(|l| l.langid.language == id.language)
    }
}

/// The catalog pages are served from: the built-in one until [`install`] puts another.
static CURRENT: RwLock<Option<&'static Catalog>> = RwLock::new(None);

/// The catalog in force.
pub fn current() -> &'static Catalog {
    if let Some(c) = *CURRENT.read().unwrap_or_else(|e| e.into_inner()) {
        return c;
    }
    let mut w = CURRENT.write().unwrap_or_else(|e| e.into_inner());
    match *w {
        Some(c) => c,
        None => {
            // unwrap: the built-in languages are checked by this module's tests.
            let c: &'static Catalog =
                Box::leak(Box::new(Catalog::load(None).expect("built-in languages")));
            *w = Some(c);
            c
        }
    }
}

/// Serves `catalog` from now on (start-up with `i18n_dir`, or a SIGHUP).
pub fn install(catalog: Catalog) {
    *CURRENT.write().unwrap_or_else(|e| e.into_inner()) = Some(Box::leak(Box::new(catalog)));
}

/// SIGHUP: reads `dir` again. On an error the languages in force are kept and the error
/// returned (for the log); a reload that changes no file keeps the catalog as it is.
pub fn reload(dir: &Path) -> Result<bool, I18nError> {
    let mut sources: Vec<(String, String)> = BUILT_IN
        .iter()
        .map(|(c, t)| (format!("i18n/{c}.ftl (built in)"), t.to_string()))
        .collect();
    sources.extend(read_dir(dir)?.into_iter().map(|(_, f, t)| (f, t)));
    if current().sources == sources {
        return Ok(false);
    }
    install(Catalog::load(Some(dir))?);
    Ok(true)
}

/// Reads `dir` again on every SIGHUP until `cancel` (Unix only; elsewhere it waits).
pub async fn reload_on_sighup(dir: PathBuf, cancel: tokio_util::sync::CancellationToken) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut hup = match signal(SignalKind::hangup()) {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for SIGHUP: languages reload only on restart");
                return cancel.cancelled().await;
            }
        };
        loop {
            tokio::select! {
                _ = cancel.cancelled() => return,
                got = hup.recv() => if got.is_none() { return },
            }
            match reload(&dir) {
                Ok(true) => tracing::info!(
                    languages = current().languages().len(),
                    "SIGHUP: languages reloaded from i18n_dir"
                ),
                Ok(false) => tracing::info!("SIGHUP: i18n_dir unchanged, languages kept"),
                Err(e) => tracing::error!(
                    error = %e,
                    "SIGHUP: i18n_dir not reloaded, the languages in force are kept"
                ),
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        cancel.cancelled().await
    }
}

/// The `.ftl` files of `dir`, by name: (code, path, text).
fn read_dir(dir: &Path) -> Result<Vec<(String, String, String)>, I18nError> {
    let read_err = |p: &Path, e: std::io::Error| I18nError::Read {
        path: p.display().to_string(),
        message: e.to_string(),
    };
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| read_err(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "ftl"))
        .collect();
    paths.sort();
    let mut out = Vec::new();
    for p in paths {
        let file = p.display().to_string();
        let code = p
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_string();
        if code.parse::<LanguageIdentifier>().is_err() || code.contains('_') {
            return Err(I18nError::Invalid {
                file,
                message: format!(
                    "`{code}` is not a language tag: name the file after the language (de.ftl, pt-BR.ftl)"
                ),
            });
        }
        let text = std::fs::read_to_string(&p).map_err(|e| read_err(&p, e))?;
        out.push((code, file, text));
    }
    Ok(out)
}

/// Parses one file; a syntax error names its line.
fn parse(file: &str, text: &str) -> Result<Arc<FluentResource>, I18nError> {
    match FluentResource::try_new(text.to_string()) {
        Ok(r) => Ok(Arc::new(r)),
        Err((_, errors)) => {
            let e = &errors[0];
            let line = text[..e.pos.start.min(text.len())].matches('\n').count() + 1;
            Err(I18nError::Syntax {
                file: file.to_string(),
                line,
                message: e.kind.to_string(),
            })
        }
    }
}

/// Each message id of a language's resources with its variables, the later file's
/// message winning.
fn effective(resources: &[(String, Arc<FluentResource>)]) -> BTreeMap<String, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    for (_, res) in resources {
        for entry in res.entries() {
            if let ast::Entry::Message(m) = entry {
                if let Some(p) = &m.value {
                    let mut vars = BTreeSet::new();
                    pattern_vars(p, &mut vars);
                    out.insert(m.id.name.to_string(), vars);
                }
            }
        }
    }
    out
}

fn pattern_vars(p: &ast::Pattern<&str>, out: &mut BTreeSet<String>) {
    for el in &p.elements {
        if let ast::PatternElement::Placeable { expression } = el {
            expression_vars(expression, out);
        }
    }
}

fn expression_vars(e: &ast::Expression<&str>, out: &mut BTreeSet<String>) {
    match e {
        ast::Expression::Select { selector, variants } => {
            inline_vars(selector, out);
            for v in variants {
                pattern_vars(&v.value, out);
            }
        }
        ast::Expression::Inline(i) => inline_vars(i, out),
    }
}

fn inline_vars(e: &ast::InlineExpression<&str>, out: &mut BTreeSet<String>) {
    match e {
        ast::InlineExpression::VariableReference { id } => {
            out.insert(id.name.to_string());
        }
        ast::InlineExpression::FunctionReference { arguments, .. } => {
            for a in &arguments.positional {
                inline_vars(a, out);
            }
        }
        ast::InlineExpression::Placeable { expression } => expression_vars(expression, out),
        _ => {}
    }
}

/// The variable a message's plural choice is made on, if it makes one.
fn plural_selector(p: &ast::Pattern<&str>) -> Option<String> {
    p.elements.iter().find_map(|el| match el {
        ast::PatternElement::Placeable {
            expression: ast::Expression::Select { selector, .. },
        } => match selector {
            ast::InlineExpression::VariableReference { id } => Some(id.name.to_string()),
            ast::InlineExpression::FunctionReference { arguments, .. } => {
                arguments.positional.iter().find_map(|a| match a {
                    ast::InlineExpression::VariableReference { id } => Some(id.name.to_string()),
                    _ => None,
                })
            }
            _ => None,
        },
        _ => None,
    })
}

/// Checks a language against English and builds it.
fn build_language(
    code: &str,
    resources: &[(String, Arc<FluentResource>)],
    en: &BTreeMap<String, BTreeSet<String>>,
) -> Result<Language, String> {
    let langid: LanguageIdentifier = code
        .parse()
        .map_err(|_| format!("`{code}` is not a language tag"))?;
    let mine = effective(resources);
    let missing: Vec<&String> = en.keys().filter(|k| !mine.contains_key(*k)).collect();
    if !missing.is_empty() {
        return Err(format!(
            "language `{code}` lacks the message(s) {missing:?}"
        ));
    }
    let extra: Vec<&String> = mine.keys().filter(|k| !en.contains_key(*k)).collect();
    if !extra.is_empty() {
        return Err(format!(
            "language `{code}` has message(s) English does not: {extra:?}"
        ));
    }
    for (id, vars) in &mine {
        if en[id] != *vars {
            return Err(format!(
                "message `{id}` of `{code}` uses the variables {vars:?}, English uses {:?}",
                en[id]
            ));
        }
    }

    let real = bundle(&langid, resources, digits_formatter)?;
    let template = bundle(&langid, resources, marked_number_formatter)?;
    let text = |id: &str| -> String {
        let Some(pattern) = template.get_message(id).and_then(|m| m.value()) else {
            return String::new();
        };
        let mut args = FluentArgs::new();
        for v in &mine[id] {
            args.set(v.as_str(), FluentValue::from(format!("{{{v}}}")));
        }
        let mut errors = Vec::new();
        template
            .format_pattern(pattern, Some(&args), &mut errors)
            .into_owned()
    };
    let name = text("language-name");
    let dir = match text("language-direction").trim() {
        "ltr" => Direction::Ltr,
        "rtl" => Direction::Rtl,
        other => {
            return Err(format!(
                "language-direction of `{code}` is `{other}`: write ltr or rtl"
            ))
        }
    };
    let numbering = numbering_of(&langid);

    // Every message as its table key (`drop-fair-result` → drops' `fair_result`).
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    let code: &'static str = leak(code.to_string());
    let mut plain: Vec<(&'static str, &'static str)> = Vec::new();
    let mut drops = Vec::new();
    let mut told = Vec::new();
    for id in mine
        .keys()
        .filter(|k| !["language-name", "language-direction"].contains(&k.as_str()))
    {
        let value = leak(text(id));
        let (table, key) = if let Some(k) = id.strip_prefix("drop-") {
            (&mut drops, k)
        } else if let Some(k) = id.strip_prefix("told-") {
            (&mut told, k)
        } else {
            (&mut plain, id.as_str())
        };
        table.push((leak(key.replace('-', "_")), value));
    }
    plain.push(("html_lang", code));
    plain.push(("dir", dir.as_str()));
    let strings = from_pairs::<Strings>(plain).map_err(|e| format!("`{code}`: {e}"))?;
    let drops = from_pairs::<DropStrings>(drops).map_err(|e| format!("`{code}`: {e}"))?;
    let told = from_pairs::<ToldStrings>(told).map_err(|e| format!("`{code}`: {e}"))?;

    let mut plurals = BTreeMap::new();
    for (id, _) in mine.iter() {
        let Some(var) = template
            .get_message(id)
            .and_then(|m| m.value())
            .and_then(plural_selector)
        else {
            continue;
        };
        let mut forms = BTreeMap::new();
        for (category, sample) in plural_samples(&langid) {
            let pattern = template.get_message(id).and_then(|m| m.value());
            let Some(pattern) = pattern else { continue };
            let mut args = FluentArgs::new();
            for v in &mine[id] {
                if *v == var {
                    args.set(v.as_str(), FluentValue::from(sample));
                } else {
                    args.set(v.as_str(), FluentValue::from(format!("{{{v}}}")));
                }
            }
            let mut errors = Vec::new();
            let s = template.format_pattern(pattern, Some(&args), &mut errors);
            let s = s
                .replace(&format!("{MARK}{sample}{MARK}"), &format!("{{{var}}}"))
                .replace(MARK, "");
            forms.insert(category, leak(s));
        }
        let key = id
            .strip_prefix("drop-")
            .or_else(|| id.strip_prefix("told-"))
            .unwrap_or(id)
            .replace('-', "_");
        plurals.insert(key, forms);
    }

    Ok(Language {
        code,
        langid,
        name: leak(name),
        dir,
        numbering,
        bundle: real,
        strings,
        drops,
        told,
        plurals,
    })
}

fn bundle(
    langid: &LanguageIdentifier,
    resources: &[(String, Arc<FluentResource>)],
    formatter: fn(&FluentValue, &intl_memoizer::concurrent::IntlLangMemoizer) -> Option<String>,
) -> Result<FluentBundle<Arc<FluentResource>>, String> {
    let mut b = FluentBundle::new_concurrent(vec![langid.clone()]);
    // No Unicode isolation marks around placeables: the pages set `dir`, and the
    // script's `{name}` filling must find the names as written.
    b.set_use_isolating(false);
    b.set_formatter(Some(formatter));
    for (i, (file, res)) in resources.iter().enumerate() {
        if i == 0 {
            b.add_resource(res.clone())
                .map_err(|e| format!("{file}: {e:?}"))?;
        } else {
            b.add_resource_overriding(res.clone());
        }
    }
    Ok(b)
}

/// Builds a table struct from its (field, text) pairs: a missing field is an error.
fn from_pairs<T: Deserialize<'static>>(
    pairs: Vec<(&'static str, &'static str)>,
) -> Result<T, serde::de::value::Error> {
    let de = MapDeserializer::new(pairs.into_iter().map(|(k, v)| {
        (
            BorrowedStrDeserializer::<serde::de::value::Error>::new(k),
            BorrowedStrDeserializer::<serde::de::value::Error>::new(v),
        )
    }));
    T::deserialize(de)
}

/// Marks a number in a template text, so the sample can be swapped for `{name}`.
const MARK: &str = "\u{2063}";

fn marked_number_formatter(
    v: &FluentValue,
    _: &intl_memoizer::concurrent::IntlLangMemoizer,
) -> Option<String> {
    match v {
        FluentValue::Number(n) => Some(format!("{MARK}{}{MARK}", n.as_string())),
        _ => None,
    }
}

/// The digits a language writes numbers in, by language (CLDR's default numbering system
/// for it): memoised per bundle so the formatter (a plain `fn`) finds it.
struct Digits(&'static str);

impl Memoizable for Digits {
    type Args = ();
    type Error = ();
    fn construct(lang: LanguageIdentifier, _: ()) -> Result<Self, ()> {
        Ok(Digits(numbering_of(&lang)))
    }
}

fn digits_formatter(
    v: &FluentValue,
    intls: &intl_memoizer::concurrent::IntlLangMemoizer,
) -> Option<String> {
    let FluentValue::Number(n) = v else {
        return None;
    };
    use fluent_bundle::memoizer::MemoizerKind;
    let numbering = intls
        .with_try_get_threadsafe::<Digits, _, _>((), |d| d.0)
        .unwrap_or("latn");
    (numbering != "latn").then(|| localise_digits(&n.as_string(), numbering))
}

/// CLDR's default numbering system of a language: Arabic is written with Arabic-Indic
/// digits (as `Intl.NumberFormat('ar')` writes them), Persian with Extended Arabic-Indic.
pub fn numbering_of(lang: &LanguageIdentifier) -> &'static str {
    match lang.language.as_str() {
        "ar" => "arab",
        "fa" => "arabext",
        _ => "latn",
    }
}

pub(crate) fn localise_digits(s: &str, numbering: &str) -> String {
    let zero = match numbering {
        "arab" => '\u{0660}',
        "arabext" => '\u{06F0}',
        _ => return s.to_string(),
    };
    s.chars()
        .map(|c| match c.to_digit(10) {
            // unwrap: zero + 0..=9 is within the digit block.
            Some(d) if c.is_ascii_digit() => char::from_u32(zero as u32 + d).unwrap_or(c),
            _ => c,
        })
        .collect()
}

/// One whole-number sample for each plural category the language has (the categories
/// whole numbers reach: what `Intl.PluralRules().select` returns for a count).
fn plural_samples(lang: &LanguageIdentifier) -> Vec<(&'static str, u64)> {
    let en: LanguageIdentifier = "en".parse().unwrap_or_default();
    let available = PluralRules::get_locales(PluralRuleType::CARDINAL);
    let chosen = fluent_langneg::negotiate_languages(
        &[lang],
        &available.iter().collect::<Vec<_>>(),
        Some(&&en),
        fluent_langneg::NegotiationStrategy::Lookup,
    )
    .first()
    .map(|l| (**l).clone())
    .unwrap_or(en);
    let Ok(rules) = PluralRules::create(chosen, PluralRuleType::CARDINAL) else {
        return vec![("other", 5)];
    };
    let mut out: Vec<(&'static str, u64)> = Vec::new();
    for n in (0..=200u64).chain([1_000, 1_000_000]) {
        let Ok(c) = rules.select(n) else { continue };
        let name = match c {
            PluralCategory::ZERO => "zero",
            PluralCategory::ONE => "one",
            PluralCategory::TWO => "two",
            PluralCategory::FEW => "few",
            PluralCategory::MANY => "many",
            PluralCategory::OTHER => "other",
        };
        if !out.iter().any(|(k, _)| *k == name) {
            out.push((name, n));
        }
    }
    if !out.iter().any(|(k, _)| *k == "other") {
        out.push(("other", 5));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn built_in() -> Catalog {
        Catalog::load(None).unwrap()
    }

    /// Every built-in language has every English message, no other, and the same
    /// variables (the check `Catalog::load` makes, run over the shipped files).
    #[test]
    fn every_built_in_language_has_englishs_messages_and_variables() {
        let c = built_in();
        assert_eq!(c.languages().len(), BUILT_IN.len());
        for l in c.languages() {
            assert!(!l.name.is_empty(), "{}", l.code);
        }
    }

    #[test]
    fn a_language_missing_a_message_is_refused_naming_it() {
        let src = |code: &str, text: &str| (code.into(), format!("{code}.ftl"), text.into());
        let err = Catalog::build(vec![
            src("en", BUILT_IN[0].1),
            src("xx", "language-name = X\nlanguage-direction = ltr\n"),
        ])
        .unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("xx.ftl") && msg.contains("lacks"), "{msg}");
        assert!(msg.contains("title-queued"), "{msg}");
    }

    #[test]
    fn an_unused_message_or_a_changed_variable_is_refused() {
        let src = |code: &str, text: String| (code.into(), format!("{code}.ftl"), text);
        let extra = format!("{}\nnot-in-english = x\n", BUILT_IN[1].1);
        let err = Catalog::build(vec![src("en", BUILT_IN[0].1.into()), src("zh-CN", extra)])
            .unwrap_err()
            .to_string();
        assert!(err.contains("not-in-english"), "{err}");
        let renamed = BUILT_IN[1].1.replace("{ $room }", "{ $rooom }");
        let err = Catalog::build(vec![src("en", BUILT_IN[0].1.into()), src("zh-CN", renamed)])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("rooom") && err.contains("notify-body"),
            "{err}"
        );
    }

    #[test]
    fn a_syntax_error_names_the_file_and_line() {
        let err = Catalog::build(vec![(
            "en".into(),
            "en.ftl".into(),
            "a = b\n= c\nd = e\n".into(),
        )])
        .unwrap_err();
        match err {
            I18nError::Syntax { file, line, .. } => {
                assert_eq!(file, "en.ftl");
                assert_eq!(line, 2);
            }
            e => panic!("{e}"),
        }
    }

    #[test]
    fn tags_find_the_served_language() {
        let c = built_in();
        assert_eq!(c.lookup("zh").unwrap().code, "zh-CN");
        assert_eq!(c.lookup("ZH-cn").unwrap().code, "zh-CN");
        assert_eq!(c.lookup("en-US").unwrap().code, "en");
        assert!(c.lookup("xx").is_none());
        assert!(c.lookup("*").is_none());
    }

    #[test]
    fn plural_forms_follow_the_language_and_tables_keep_names() {
        let en = built_in().get("en").unwrap();
        assert_eq!(en.strings.ahead_many, "{n} people ahead of you");
        assert_eq!(en.plurals["ahead_many"]["one"], "{n} person ahead of you");
        assert_eq!(en.plurals["ahead_many"]["other"], "{n} people ahead of you");
        assert_eq!(
            en.format("ahead-many", &[("n", Arg::Num(1))]),
            "1 person ahead of you"
        );
        assert_eq!(
            en.format("ahead-many", &[("n", Arg::Num(3))]),
            "3 people ahead of you"
        );
    }

    /// Arabic has six plural categories; the page gets a text for each, and the
    /// server writes the count in Arabic-Indic digits.
    #[test]
    fn arabic_counts_take_their_plural_form_and_arabic_digits() {
        let ar = built_in().get("ar").unwrap();
        assert_eq!(ar.dir, Direction::Rtl);
        assert_eq!(ar.numbering, "arab");
        let forms = &ar.plurals["ahead_many"];
        for c in ["zero", "one", "two", "few", "many", "other"] {
            assert!(forms.contains_key(c), "{c}");
        }
        assert_eq!(forms["few"], "{n} أشخاص أمامك");
        assert_eq!(
            ar.format("ahead-many", &[("n", Arg::Num(2))]),
            "شخصان أمامك"
        );
        assert_eq!(
            ar.format("ahead-many", &[("n", Arg::Num(4))]),
            "٤ أشخاص أمامك"
        );
        assert_eq!(
            ar.format("ahead-many", &[("n", Arg::Num(12))]),
            "١٢ شخصًا أمامك"
        );
        assert_eq!(ar.number(305), "٣٠٥");
    }

    /// Polish counts take one, few or many: 1 osoba, 2 osoby, 5 osób, 22 osoby.
    #[test]
    fn polish_counts_take_their_plural_form() {
        let pl = built_in().get("pl").unwrap();
        let ahead = |n| pl.format("ahead-many", &[("n", Arg::Num(n))]);
        assert_eq!(ahead(1), "1 osoba przed tobą");
        assert_eq!(ahead(2), "2 osoby przed tobą");
        assert_eq!(ahead(5), "5 osób przed tobą");
        assert_eq!(ahead(22), "22 osoby przed tobą");
        assert_eq!(pl.plurals["in_line"]["many"], "{n} osób w kolejce");
    }

    #[test]
    fn arabic_digits_are_written_as_arabic_writes_them() {
        assert_eq!(localise_digits("12 min", "arab"), "١٢ min");
        assert_eq!(localise_digits("12", "latn"), "12");
    }
}
