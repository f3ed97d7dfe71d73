//! Tracing set-up: `ANTEROOM_LOG` (or `RUST_LOG`) filters, default `info`.

use tracing_subscriber::EnvFilter;

pub fn init() {
    let filter = std::env::var("ANTEROOM_LOG")
        .ok()
        .map(EnvFilter::new)
        .or_else(|| EnvFilter::try_from_default_env().ok())
        .unwrap_or_else(|| EnvFilter::new("info,anteroom::http=warn"));
    // Colours only on a terminal: log files and collectors get plain text.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stdout()))
        .try_init();
}
