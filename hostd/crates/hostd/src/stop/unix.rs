//! Unix: SIGINT and SIGTERM through signal-hook.

use anyhow::Context;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Sets `stop` on SIGINT or SIGTERM; a second signal while stopping exits with 130.
pub fn on_interrupt(stop: &Arc<AtomicBool>) -> anyhow::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    for sig in [SIGINT, SIGTERM] {
        // A second signal while stopping terminates at once.
        signal_hook::flag::register_conditional_shutdown(sig, 130, stop.clone())
            .context("cannot install signal handler")?;
        signal_hook::flag::register(sig, stop.clone()).context("cannot install signal handler")?;
    }
    Ok(())
}
