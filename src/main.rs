use std::path::PathBuf;

// Off with `--features heap-profile`, so heaptrack sees the allocations.
#[cfg(not(feature = "heap-profile"))]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use anteroom::config::Settings;
use anteroom::startup::Application;
use tokio_util::sync::CancellationToken;

/// `--config PATH` (or `ANTEROOM_CONFIG`) names the TOML file.
fn config_path() -> anyhow::Result<Option<PathBuf>> {
    let mut args = std::env::args().skip(1);
    if let Some(a) = args.next() {
        match a.as_str() {
            "--config" | "-c" => {
                let p = args
                    .next()
                    .ok_or_else(|| anyhow::anyhow!("--config needs a path"))?;
                return Ok(Some(p.into()));
            }
            "hash-password" => {
                hash_password()?;
                std::process::exit(0);
            }
            "--help" | "-h" => {
                println!("anteroom [--config FILE]\nanteroom hash-password   (reads a password on stdin, prints admin.password_hash)\n\nSettings: docs/configuration.md (ANTEROOM_* variables override the file).");
                std::process::exit(0);
            }
            other => anyhow::bail!("unknown argument {other:?} (try --help)"),
        }
    }
    Ok(std::env::var_os("ANTEROOM_CONFIG").map(PathBuf::from))
}

/// Prints an argon2id hash of the password read from stdin, for `admin.password_hash`.
fn hash_password() -> anyhow::Result<()> {
    use argon2::password_hash::{rand_core::OsRng, PasswordHasher, SaltString};
    let mut line = String::new();
    std::io::stdin().read_line(&mut line)?;
    let password = line.trim_end_matches(['\r', '\n']);
    anyhow::ensure!(!password.is_empty(), "no password on stdin");
    let salt = SaltString::generate(&mut OsRng);
    let hash = argon2::Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map_err(|e| anyhow::anyhow!("hashing failed: {e}"))?;
    println!("{hash}");
    Ok(())
}

#[actix_web::main]
async fn main() -> anyhow::Result<()> {
    // Arguments first: `hash-password` prints only the hash on stdout (a log line before
    // it would end up in a configuration file).
    let config = config_path()?;
    anteroom::telemetry::init();
    // Every queue socket is a descriptor: raise the soft limit to the hard one.
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(n) => tracing::info!(limit = n, "file descriptor limit"),
        Err(e) => tracing::warn!(error = %e, "could not raise the file descriptor limit"),
    }
    // The check's parsed values (proxies, bypass rules, certificates) go to start-up as
    // they are: nothing is parsed twice.
    let (settings, prepared) = Settings::load_prepared(config.as_deref())?;
    let app = Application::build_prepared(settings, prepared).await?;
    let shutdown = CancellationToken::new();
    // SIGHUP reads the TLS certificates again (open connections keep theirs).
    tokio::spawn(app.certificates().reload_on_sighup(shutdown.clone()));
    // …and the languages of `i18n_dir` (a bad file is logged, the old ones kept).
    tokio::spawn(app.reload_languages_on_sighup(shutdown.clone()));
    {
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            #[cfg(unix)]
            {
                let mut term =
                    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            #[cfg(not(unix))]
            let _ = tokio::signal::ctrl_c().await;
            tracing::info!("shutting down");
            shutdown.cancel();
            Ok::<_, std::io::Error>(())
        });
    }
    app.run_until_stopped(shutdown).await
}
