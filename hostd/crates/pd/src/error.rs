//! What can go wrong between a session file and its messages.

/// An error of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The C decoder was not compiled for this target (build.rs says why).
    #[error("this hostd was built without the USB PD decoder: {0}")]
    NotBuilt(&'static str),
    /// The decoder refuses the clock: it needs at least 1 MHz to tell BMC's half bits apart.
    #[error("a sample rate of {tick_hz} Hz is too slow to decode USB PD (at least 1 MHz)")]
    ClockTooSlow {
        /// The sample rate asked for.
        tick_hz: u64,
    },
    /// The decoder's C type has an alignment the Rust side does not provide.
    #[error("the C decoder's alignment ({0} bytes) is not supported")]
    Alignment(usize),
    /// The session file could not be read.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The session file is not a zip archive, or a member of it is damaged.
    #[error("not a readable sigrok session (zip)")]
    Zip(#[from] zip::result::ZipError),
    /// The session's `metadata` lacks what is needed, or says it in a form not understood.
    #[error("sigrok session metadata: {0}")]
    Metadata(String),
    /// `--channel` names no logic channel of the session.
    #[error("no channel {spec} in the session; its logic channels: {available}")]
    NoSuchChannel {
        /// What was asked for.
        spec: String,
        /// The session's channels, as `name (probe N)`.
        available: String,
    },
}
