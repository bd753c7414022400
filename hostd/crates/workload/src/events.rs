//! Where the runner reports a run's events ([`RunEvent`]): one callback, called
//! synchronously from the target threads, so it must be quick. `hostd run` passes its
//! run pipeline's `on_event` (`hostd_store::pipeline`), tests a collector.

use hostd_records::RunEvent;

/// What the runner calls with every event, in order per target.
pub type OnEvent<'a> = dyn Fn(&RunEvent) + Sync + 'a;
