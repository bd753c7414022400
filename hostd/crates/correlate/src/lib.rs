//! hostd-correlate: joins the probe's aligned samples with the workload's
//! file records.
//!
//! - [`timeline`]: the compact probe record correlation reads.
//! - [`correlate`]: per-file energy, J/GB, power, temperature; per-phase
//!   power profile; the energy balance.

pub mod correlate;
pub mod timeline;

pub use correlate::{correlate, Correlation, EnergyBalance, FileEnergy, FileSpan, PhasePower};
pub use timeline::Timeline;
