use std::path::PathBuf;

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
            "--help" | "-h" => {
                println!("anteroom [--config FILE]\n\nSee README.md for settings (ANTEROOM_* variables override the file).");
                std::process::exit(0);
            }
            other => anyhow::bail!("unknown argument {other:?} (try --help)"),
        }
    }
    Ok(std::env::var_os("ANTEROOM_CONFIG").map(PathBuf::from))
}

#[actix_web::main]
async fn main() -> anyhow::Result<()> {
    anteroom::telemetry::init();
    let settings = Settings::load(config_path()?.as_deref())?;
    let app = Application::build(settings).await?;
    let shutdown = CancellationToken::new();
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
