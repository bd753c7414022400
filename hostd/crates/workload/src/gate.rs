//! A hold before measured steps: the runner asks a [`StepGate`] before each measured step
//! and idles the target while the gate waits (a temperature gate: `hostd run`'s
//! `[temperature_gate]`). The gate decides which steps it holds and records its waits.

use crate::step::Step;
use std::sync::atomic::AtomicBool;

/// Decides whether a measured step waits, and waits.
pub trait StepGate: Send + Sync {
    /// True when target `target_index` must wait before `step` (the runner then idles the
    /// target and calls [`StepGate::wait`]).
    fn holds(&self, target_index: usize, step: &Step) -> bool;
    /// Returns when `step` of `target_index` may start, or as soon as `stop` is set.
    fn wait(&self, target_index: usize, step: &Step, stop: &AtomicBool);
}
