//! The drive's SMART state, read through `smartctl --json`: how smartctl is asked
//! ([`smartctl`]), what one answer says ([`parse`], the one parser), how each drive is found
//! to answer ([`detect`]), and the one poller that reads every target's drive through the
//! run and hands each reading to the run's drive feeds ([`poll`]). Where the tool is
//! missing, the target has no block device, or a USB bridge hides SMART, the poller says so
//! once and the run goes on.

pub mod detect;
pub mod parse;
pub mod poll;
pub mod smartctl;

pub use poll::{DrivePoller, PollResult, PollerConfig};
