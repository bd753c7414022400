//! hostd-correlate: joins the probe's aligned samples with the workload's
//! file records, and runs the probe as a part of `hostd run`.
//!
//! - [`timeline`]: the compact probe record correlation reads.
//! - [`correlate`]: per-file energy, J/GB, power, temperature; per-phase
//!   power profile; the energy balance.
//! - [`stream`]: the same correlation as the run goes, in bounded memory (its energy
//!   shares swept as files settle, `share_sweep`).
//! - [`recorder`]: writes `probe/` (samples and levels) and `probe-link.jsonl`, and
//!   feeds the [`stream::Correlator`].
//! - [`file_figures`]: the probe's figures on each file record (`files-probe.csv`).
//! - [`monitor`]: `hostd monitor`, the probe alone until stopped.
//! - [`part`]: the probe's part of `hostd run` tying them together.

#![warn(missing_docs)]

pub mod correlate;
pub mod file_figures;
pub mod monitor;
pub mod part;
pub mod recorder;
mod share_sweep;
pub mod stream;
pub mod timeline;

pub use correlate::{correlate, Correlation, EnergyBalance, FileEnergy, PhasePower};
pub use part::{ProbeOptions, ProbePart};
pub use recorder::{ProbeRecorder, Recording};
pub use stream::Correlator;
pub use timeline::{PowerBin, Timeline};
