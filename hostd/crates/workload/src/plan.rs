//! A plan: for each target, the steps (one file operation each) to run, split
//! into an unmeasured `prepare` part and the measured part. Pure data: the
//! same profile, targets, seed and capacities give the same plan.

use crate::profile::{align_up, ALIGN};
use crate::sizes::SizeGenerator;
use crate::step::{Capacity, Goal, IoJob, Rw, Step};
use crate::target::{TargetMode, TargetSpec};
use hostd_records::profile::{Kind, Pattern, PhaseKind, Profile};
use hostd_records::units::human_bytes;
use serde::Serialize;
use std::fmt::Write as _;

/// The plan of one target.
#[derive(Debug, Clone, Serialize)]
pub struct TargetPlan {
    /// The target.
    pub spec: TargetSpec,
    /// Unmeasured steps run before all targets start together.
    pub prepare: Vec<Step>,
    /// Measured steps.
    pub measured: Vec<Step>,
    /// Largest size of each file (index = file number).
    pub file_sizes: Vec<u64>,
    /// An adaptive workload (cache recovery, paced sweep, duration cycles):
    /// the runner asks it for each next step instead of running `measured`,
    /// which then holds only its first steps (for buffers and `--dry-run`).
    pub program: Option<crate::program::ProgramSpec>,
}

impl TargetPlan {
    /// Bytes the target's files occupy at most.
    pub fn footprint(&self) -> u64 {
        self.file_sizes.iter().sum()
    }
    /// Bytes moved by all steps.
    pub fn bytes_moved(&self) -> u64 {
        self.prepare
            .iter()
            .chain(&self.measured)
            .map(|s| s.job.bytes)
            .sum()
    }
    /// What ends this target's work (the live view's bar and ETA).
    pub fn goal(&self) -> Goal {
        match &self.program {
            Some(p) => p.goal(),
            None => Goal::Bytes(self.bytes_moved()),
        }
    }
    /// Bytes moved by measured steps.
    pub fn measured_bytes(&self) -> u64 {
        self.measured.iter().map(|s| s.job.bytes).sum()
    }
}

/// The whole plan.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    /// Profile name.
    pub profile: String,
    /// Seed of sizes and offsets.
    pub seed: u64,
    /// One entry per target, in command-line order.
    pub targets: Vec<TargetPlan>,
    /// A `fill` that ends at steady state (`[steady_state]`, checked by the profile).
    #[serde(skip)]
    pub steady: Option<crate::steady::SteadySpec>,
}

impl Plan {
    /// Builds the plan. `capacity[i]` is the storage of target `i`.
    pub fn build(
        profile: &Profile,
        targets: &[TargetSpec],
        seed: u64,
        capacity: &[Capacity],
    ) -> Plan {
        let targets = targets
            .iter()
            .enumerate()
            .map(|(i, spec)| plan_target(profile, spec, seed, i as u64, capacity.get(i).copied()))
            .collect();
        let steady = match (&profile.steady_state, profile.kind) {
            (Some(s), Kind::Fill) => {
                Some(crate::steady::SteadySpec::new(s, None).expect("the profile check passed it"))
            }
            _ => None,
        };
        Plan {
            profile: profile.name.clone(),
            seed,
            targets,
            steady,
        }
    }

    /// Total bytes moved by the whole plan.
    pub fn total_bytes(&self) -> u64 {
        self.targets.iter().map(|t| t.bytes_moved()).sum()
    }

    /// Human-readable plan for `--dry-run`.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "plan: profile {} seed {}", self.profile, self.seed);
        for t in &self.targets {
            let _ = writeln!(
                s,
                "target {} ({}): {} files, footprint {}, {} steps ({} prepare), {} moved",
                t.spec.label,
                t.spec.mode.as_str(),
                t.file_sizes.len(),
                human_bytes(t.footprint()),
                t.prepare.len() + t.measured.len(),
                t.prepare.len(),
                human_bytes(t.bytes_moved())
            );
            for step in t.prepare.iter().chain(&t.measured) {
                let _ = writeln!(
                    s,
                    "  {:<18} #{:<4} f{:05}.dat {:>10} bytes  {:?} bs {} qd {}",
                    step.phase,
                    step.index,
                    step.file,
                    step.job.bytes,
                    step.job.rw,
                    step.job.block_size,
                    step.job.queue_depth
                );
            }
        }
        let _ = writeln!(s, "total: {} moved", human_bytes(self.total_bytes()));
        s
    }
}

fn phase_name(p: PhaseKind) -> &'static str {
    match p {
        PhaseKind::Write => "write",
        PhaseKind::Read => "read",
    }
}

fn plan_target(
    profile: &Profile,
    spec: &TargetSpec,
    seed: u64,
    stream: u64,
    cap: Option<Capacity>,
) -> TargetPlan {
    let io = &profile.io;
    let file_seed = seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let seq = |rw: Rw, size: u64, bs: usize, qd: usize, sseed: u64| IoJob {
        rw,
        file_size: size,
        bytes: size,
        block_size: bs,
        queue_depth: qd,
        verify: io.verify,
        pace_ns: None,
        seed: sseed,
    };
    let bs = io.block_size.0 as usize;
    let qd = io.queue_depth;
    let mut prepare = Vec::new();
    let mut measured = Vec::new();
    let mut file_sizes: Vec<u64>;
    match profile.kind {
        Kind::Files | Kind::Fill | Kind::Video => {
            let mut frame_pace = None;
            let mut write_bs = bs;
            let mut write_qd = qd;
            file_sizes = match profile.kind {
                Kind::Files => {
                    let f = profile.files.as_ref().expect("validated");
                    let mut g = SizeGenerator::new(seed, stream, f.min_size.0, f.max_size.0);
                    match (f.count, f.total) {
                        (Some(n), _) => g.take(n),
                        (None, Some(t)) => g.until_total(t.0),
                        // A duration run sizes its cycles from the free space.
                        (None, None) => Vec::new(),
                    }
                }
                Kind::Fill => {
                    let f = profile.fill.as_ref().expect("validated");
                    let cap = cap.unwrap_or(Capacity {
                        total: 0,
                        available: 0,
                    });
                    let used = cap.total.saturating_sub(cap.available);
                    let goal = (cap.total as f64 * f.fraction) as u64;
                    let need = align_up(goal.saturating_sub(used));
                    let fs = align_up(f.file_size.0);
                    let mut sizes = vec![fs; (need / fs) as usize];
                    if !need.is_multiple_of(fs) {
                        sizes.push(need % fs);
                    }
                    sizes
                }
                Kind::Video => {
                    let v = profile.video.as_ref().expect("validated");
                    let frame = align_up(v.frame_size.0);
                    let frames = (v.seconds * v.fps).ceil() as u64;
                    frame_pace = Some((1e9 / v.fps) as u64);
                    write_bs = frame as usize;
                    write_qd = 1;
                    vec![frame * frames; v.clips as usize]
                }
                Kind::Diskmark
                | Kind::CacheRecovery
                | Kind::PacedSweep
                | Kind::Certify
                | Kind::FillStates => {
                    unreachable!()
                }
            };
            let write_step = |i: usize, size: u64, phase: &str| Step {
                phase: phase.to_string(),
                index: i as u32,
                file: i as u32,
                job: IoJob {
                    pace_ns: frame_pace,
                    ..seq(Rw::Write, size, write_bs, write_qd, file_seed + i as u64)
                },
            };
            let read_step = |i: usize, size: u64| Step {
                phase: "read".to_string(),
                index: i as u32,
                file: i as u32,
                job: seq(Rw::Read, size, bs, qd, file_seed + i as u64),
            };
            let wants = |p: PhaseKind| io.phases.contains(&p);
            match spec.mode {
                TargetMode::Read => {
                    for (i, &s) in file_sizes.iter().enumerate() {
                        prepare.push(write_step(i, s, "prepare"));
                        measured.push(read_step(i, s));
                    }
                }
                TargetMode::Write => {
                    for (i, &s) in file_sizes.iter().enumerate() {
                        measured.push(write_step(i, s, "write"));
                    }
                }
                TargetMode::Rw => {
                    for p in &io.phases {
                        for (i, &s) in file_sizes.iter().enumerate() {
                            match p {
                                PhaseKind::Write => measured.push(write_step(i, s, phase_name(*p))),
                                PhaseKind::Read => {
                                    if !wants(PhaseKind::Write) {
                                        prepare.push(write_step(i, s, "prepare"));
                                    }
                                    measured.push(read_step(i, s))
                                }
                            }
                        }
                    }
                }
            }
        }
        Kind::CacheRecovery | Kind::PacedSweep => file_sizes = Vec::new(),
        Kind::FillStates => {
            let f = profile.fill_states.as_ref().expect("validated");
            let (sizes, steps) =
                crate::plan_fill_states::steps(f, cap, file_seed, |rw, size, s| {
                    seq(rw, size, bs, qd, s)
                });
            file_sizes = sizes;
            measured = steps;
        }
        Kind::Certify => {
            let (sizes, steps) = certify_steps(profile, cap, file_seed);
            file_sizes = sizes;
            measured = steps;
        }
        Kind::Diskmark => {
            let d = profile.diskmark.as_ref().expect("validated");
            let size = align_up(d.file_size.0);
            file_sizes = vec![size];
            prepare.push(Step {
                phase: "prepare".into(),
                index: 0,
                file: 0,
                job: seq(Rw::Write, size, 1 << 20, 8, file_seed),
            });
            let (do_read, do_write) = match spec.mode {
                TargetMode::Read => (true, false),
                TargetMode::Write => (false, true),
                TargetMode::Rw => (
                    io.phases.contains(&PhaseKind::Read),
                    io.phases.contains(&PhaseKind::Write),
                ),
            };
            for t in &d.tests {
                // One file's job of this test: its bytes (aligned, at most the file) in
                // its block size and queue depth, seeded per repetition.
                let step = |phase: String, rw: Rw, rep| {
                    let bytes = t.bytes.map(|b| align_up(b.0)).unwrap_or(size).min(size);
                    Step {
                        phase,
                        index: rep,
                        file: 0,
                        job: IoJob {
                            rw,
                            file_size: size,
                            bytes: bytes / t.block_size.0 * t.block_size.0,
                            block_size: t.block_size.0 as usize,
                            queue_depth: t.queue_depth,
                            verify: io.verify,
                            pace_ns: None,
                            seed: file_seed.wrapping_add(rep as u64 * 7919),
                        },
                    }
                };
                if let Some(read_percent) = t.read_percent {
                    // Mixed: one job per repetition reads and writes (rw targets only).
                    if spec.mode != TargetMode::Rw {
                        continue;
                    }
                    let rw = Rw::Mixed {
                        read_percent,
                        random: t.pattern == Pattern::Random,
                    };
                    for rep in 0..d.repetitions {
                        measured.push(step(format!("{}-mix", t.name), rw, rep));
                    }
                    continue;
                }
                for p in &io.phases {
                    let (on, rw) = match (p, t.pattern) {
                        (PhaseKind::Read, Pattern::Sequential) => (do_read, Rw::Read),
                        (PhaseKind::Read, Pattern::Random) => (do_read, Rw::RandRead),
                        (PhaseKind::Write, Pattern::Sequential) => (do_write, Rw::Write),
                        (PhaseKind::Write, Pattern::Random) => (do_write, Rw::RandWrite),
                    };
                    if !on {
                        continue;
                    }
                    for rep in 0..d.repetitions {
                        measured.push(step(format!("{}-{}", t.name, phase_name(*p)), rw, rep));
                    }
                }
            }
        }
    }
    let program = crate::program::ProgramSpec::for_target(profile, spec, file_seed, cap);
    if let Some(p) = &program {
        // The adaptive program replaces the static steps; it keeps its files
        // within `file_sizes` (the free-space check) and lists its first steps.
        measured = p.first_steps();
        file_sizes = p.file_sizes();
        prepare.clear();
    }
    TargetPlan {
        spec: spec.clone(),
        prepare,
        measured,
        file_sizes,
        program,
    }
}

/// Certify: files of `file_size` covering `fraction` of the free space (of the
/// device when raw), then per pass `passN-write` of every file followed by
/// `passN-read` (verified) of every file. The target's mode is not used.
fn certify_steps(
    profile: &Profile,
    cap: Option<Capacity>,
    file_seed: u64,
) -> (Vec<u64>, Vec<Step>) {
    let c = profile.certify.as_ref().expect("validated");
    let io = &profile.io;
    let available = cap.map_or(0, |c| c.available);
    let need = ((available as f64 * c.fraction) as u64) / ALIGN * ALIGN;
    let fs = align_up(c.file_size.0);
    let mut sizes = vec![fs; (need / fs) as usize];
    if need % fs >= ALIGN {
        sizes.push(need % fs);
    }
    let mut steps = Vec::with_capacity(sizes.len() * 2 * c.passes as usize);
    for pass in 1..=c.passes {
        for (rw, dir) in [(Rw::Write, "write"), (Rw::Read, "read")] {
            for (i, &size) in sizes.iter().enumerate() {
                steps.push(Step {
                    phase: format!("pass{pass}-{dir}"),
                    index: i as u32,
                    file: i as u32,
                    job: IoJob {
                        rw,
                        file_size: size,
                        bytes: size,
                        block_size: io.block_size.0 as usize,
                        queue_depth: io.queue_depth,
                        verify: true,
                        pace_ns: None,
                        seed: file_seed + i as u64,
                    },
                });
            }
        }
    }
    (sizes, steps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::ProfileExt;

    fn quick() -> Profile {
        Profile::load("quick").unwrap()
    }

    #[test]
    fn certify_plan_writes_then_verifies_every_file_each_pass() {
        let t = TargetSpec::parse("/tmp/x", &[]).unwrap();
        let cap = Capacity {
            total: 100 << 20,
            available: 10 << 20,
        };
        let p = Plan::build(&Profile::load("certify").unwrap(), &[t], 1, &[cap]);
        let tp = &p.targets[0];
        // Half of 10 MiB in 1 GiB files: one 5 MiB file.
        assert_eq!(tp.file_sizes, vec![5 << 20]);
        let phases: Vec<&str> = tp.measured.iter().map(|s| s.phase.as_str()).collect();
        assert_eq!(
            phases,
            ["pass1-write", "pass1-read", "pass2-write", "pass2-read"]
        );
        assert!(tp.measured.iter().all(|s| s.job.verify));
        assert!(tp.prepare.is_empty());
    }

    #[test]
    fn quick_plan_writes_then_reads_each_file() {
        let t = TargetSpec::parse("/tmp/x", &[]).unwrap();
        let p = Plan::build(&quick(), &[t], 42, &[]);
        let tp = &p.targets[0];
        assert_eq!(tp.file_sizes.len(), 12);
        assert!(tp.prepare.is_empty());
        assert_eq!(tp.measured.len(), 24);
        assert!(tp.measured[..12].iter().all(|s| s.phase == "write"));
        assert!(tp.measured[12..].iter().all(|s| s.phase == "read"));
        assert_eq!(p.total_bytes(), 2 * tp.footprint());
        assert_eq!(
            Plan::build(&quick(), std::slice::from_ref(&tp.spec), 42, &[]).targets[0].file_sizes,
            tp.file_sizes
        );
    }

    #[test]
    fn read_target_prepares_its_files_unmeasured() {
        let t = TargetSpec::parse("/tmp/x:read", &[]).unwrap();
        let p = Plan::build(&quick(), &[t], 1, &[]);
        assert_eq!(p.targets[0].prepare.len(), 12);
        assert!(p.targets[0].measured.iter().all(|s| s.phase == "read"));
    }

    #[test]
    fn fill_plan_stops_at_the_fraction() {
        let t = TargetSpec::parse("/tmp/x:write", &[]).unwrap();
        let prof = Profile::load("fill-90").unwrap();
        let cap = Capacity {
            total: 100 << 30,
            available: 60 << 30,
        };
        let p = Plan::build(&prof, &[t], 1, &[cap]);
        // 90 GiB goal, 40 GiB used: 50 GiB to write.
        assert_eq!(p.targets[0].footprint(), 50 << 30);
    }

    #[test]
    fn diskmark_plan_has_every_test_and_repetition() {
        let t = TargetSpec::parse("/tmp/x", &[]).unwrap();
        let p = Plan::build(&Profile::load("diskmark").unwrap(), &[t], 1, &[]);
        assert_eq!(p.targets[0].measured.len(), 4 * 2 * 5);
        assert!(p.targets[0]
            .measured
            .iter()
            .any(|s| s.phase == "RND4K-QD64-read" && s.job.queue_depth == 64));
    }
}
