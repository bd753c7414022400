//! What a `hostd run` is, read and checked before anything is written ([`Setup::read`]),
//! and its targets opened with their plan ([`Targets::open`]).

use super::{backends, certify, random_seed, run_id, RunArgs};
use anyhow::bail;
use hostd_records::conditions::{Conditions, WaitMode};
use hostd_records::profile::{Kind, Profile};
use hostd_workload::backend::{BackendOptions, TargetBackend};
use hostd_workload::block::DataPool;
use hostd_workload::fault::FaultPlan;
use hostd_workload::runner;
use hostd_workload::step::Capacity;
use hostd_workload::{Plan, ProfileExt, TargetSpec};
use std::path::PathBuf;

/// What this run is: its arguments, and what follows from them (and, for `--resume`, from
/// the run it continues).
pub struct Setup {
    /// The arguments, with a resumed run's targets.
    pub args: RunArgs,
    /// The certify run this session continues, if any.
    pub resume: Option<certify::Resume>,
    /// The profile.
    pub profile: Profile,
    /// The notes, tags, wait mode (and, once prepared, the starting state) of the run.
    pub conditions: Conditions,
    /// Whether the engines' waits poll before they sleep.
    pub poll: bool,
    /// A certify profile's run (journal, verdict, `--resume`).
    pub is_certify: bool,
    /// The targets, parsed.
    pub specs: Vec<TargetSpec>,
    /// The seed of the sizes, offsets and data.
    pub seed: u64,
    /// This session's run id.
    pub run_id: String,
    /// The faults injected for tests (`HOSTD_FAULT_*`).
    pub fault: FaultPlan,
    /// The run directory.
    pub out_dir: PathBuf,
    /// The directory of the certify journal (the first session's).
    pub journal_root: PathBuf,
    /// Whether the test files are kept after the run.
    pub keep: bool,
}

impl Setup {
    /// Reads the run's profile, conditions, targets, seed and run id from `args` (and a
    /// resumed run's directory), refusing what cannot run before anything is written.
    /// Simulated drives played N× faster set the run's clock here, before any target opens.
    pub fn read(args: RunArgs) -> anyhow::Result<Setup> {
        // Everything a resume needs is read and checked before anything is written.
        let resume = match &args.resume {
            Some(dir) => Some(certify::Resume::load(dir, &args.targets)?),
            None => None,
        };
        let profile = match (&resume, &args.profile) {
            (Some(r), _) => r.profile.clone(),
            (None, Some(p)) => Profile::load(p)?,
            (None, None) => bail!("--profile is required"),
        };
        let conditions = run_conditions(&args, resume.as_ref(), &profile)?;
        let poll = args.poll || profile.io.poll;
        let mut args = args;
        if let Some(r) = &resume {
            args.targets = r.targets.clone();
        }
        let is_certify = profile.kind == Kind::Certify;
        let registry = backends();
        let schemes = registry.schemes();
        let specs: Vec<TargetSpec> = args
            .targets
            .iter()
            .map(|t| TargetSpec::parse(t, &schemes).map_err(anyhow::Error::msg))
            .collect::<anyhow::Result<_>>()?;
        if args.raw_device && profile.kind != Kind::Fill && !is_certify {
            bail!(
                "--raw-device works only with fill and certify profiles (e.g. fill-90); profile {} is {:?}",
                profile.name,
                profile.kind
            );
        }
        // Simulated drives played N× faster: the run's records play N× faster too (one
        // clock, the modelled drive's), from before the targets open. Refused when it
        // cannot be one.
        if let Some(factor) = hostd_scenario::backend::playback_factor(&args.targets)? {
            hostd_records::clock::play_faster(factor).map_err(anyhow::Error::msg)?;
        }
        let seed = match &resume {
            Some(r) => r.seed,
            None => args.seed.unwrap_or_else(random_seed),
        };
        let run_id = match &resume {
            Some(r) => format!("{}-resume-{}", r.run_id, r.session),
            None => run_id(),
        };
        let out_dir = match &resume {
            Some(r) => r.root.join(format!("resume-{}", r.session)),
            None => args
                .out
                .clone()
                .unwrap_or_else(|| PathBuf::from("runs").join(&run_id)),
        };
        // The journal lives in the first session's directory.
        let journal_root = resume.as_ref().map_or(out_dir.clone(), |r| r.root.clone());
        let keep = resume.as_ref().map_or(args.keep, |r| r.keep || args.keep);
        Ok(Setup {
            args,
            resume,
            profile,
            conditions,
            poll,
            is_certify,
            specs,
            seed,
            run_id,
            fault: FaultPlan::from_env(),
            out_dir,
            journal_root,
            keep,
        })
    }

    /// The certify session's number (0 for the first run).
    pub fn session(&self) -> u32 {
        self.resume.as_ref().map_or(0, |r| r.session)
    }
}

/// The run's notes and tags (a resumed session carries the run's, so its InfluxDB points
/// keep them) and how the engines wait (it goes with the figures: manifest, summary,
/// report). A bad note or tag is refused, naming the key and the value.
fn run_conditions(
    args: &RunArgs,
    resume: Option<&certify::Resume>,
    profile: &Profile,
) -> anyhow::Result<Conditions> {
    let given = Conditions::from_args(&args.notes, &args.tags).map_err(anyhow::Error::msg)?;
    let mut conditions = match resume {
        Some(r) => Conditions::resumed(&r.conditions, given)
            .map_err(|e| anyhow::anyhow!("cannot resume: {e}"))?,
        None => given,
    };
    conditions.wait = Some(if args.poll || profile.io.poll {
        WaitMode::Poll
    } else {
        WaitMode::Sleep
    });
    Ok(conditions)
}

/// The run's targets, open, with the plan made for the space they have.
pub struct Targets {
    /// One backend per target, in the order given.
    pub backends: Vec<Box<dyn TargetBackend>>,
    /// The plan (a resumed run's without the steps done).
    pub plan: Plan,
    /// Steps the plan had before a resume left the done ones out.
    pub planned_steps: usize,
    /// Whether the targets have the space the plan needs: the lines that say so, or why not.
    pub space: Result<Vec<String>, String>,
}

impl Targets {
    /// Opens every target of `setup` and plans the run on them: from the space each has, or
    /// for a resume from the space the first session found (the same plan), its done steps
    /// left out.
    pub fn open(setup: &Setup) -> anyhow::Result<Targets> {
        let registry = backends();
        let opts = BackendOptions {
            // A resume adopts the test directories named by the original run id.
            run_id: setup
                .resume
                .as_ref()
                .map_or(setup.run_id.clone(), |r| r.run_id.clone()),
            seed: setup.seed,
            engine: setup.args.engine,
            poll: setup.poll,
            allow_cached: setup.args.allow_cached,
            raw_device: setup.args.raw_device,
            destroy_data: setup.args.destroy_data,
            fault: setup.fault.clone(),
            pool: DataPool::new(setup.seed),
            resume: setup.resume.is_some(),
        };
        let backends: Vec<Box<dyn TargetBackend>> = setup
            .specs
            .iter()
            .enumerate()
            .map(|(i, s)| registry.open(s, i, &opts))
            .collect::<anyhow::Result<_>>()?;
        let capacity: Vec<Capacity> = match &setup.resume {
            // The same plan as the first session: built from the space it found.
            Some(r) => {
                let now: Vec<_> = backends.iter().map(|b| b.info()).collect();
                r.check_devices(&now)?;
                r.capacity.clone()
            }
            None => backends
                .iter()
                .map(|b| {
                    b.capacity().unwrap_or(Capacity {
                        total: 0,
                        available: 0,
                    })
                })
                .collect(),
        };
        let mut plan = Plan::build(&setup.profile, &setup.specs, setup.seed, &capacity);
        let planned_steps: usize = plan.targets.iter().map(|t| t.measured.len()).sum();
        let space = match &setup.resume {
            Some(r) => {
                // The files are on the target already: rewriting them needs no more space.
                r.skip_done(&mut plan);
                if plan.targets.iter().all(|t| t.measured.is_empty()) {
                    bail!(
                        "cannot resume {}: all {planned_steps} steps are done already ({} holds the verdict)",
                        r.root.display(),
                        r.root.join(hostd_records::certify::VERDICT_FILE_NAME).display()
                    );
                }
                Ok(Vec::new())
            }
            None => runner::check_space(&plan, &backends),
        };
        Ok(Targets {
            backends,
            plan,
            planned_steps,
            space,
        })
    }

    /// Takes back what opening the targets created (their test directories): for a run
    /// refused before any I/O.
    pub fn take_back(&mut self) {
        for b in self.backends.iter_mut() {
            let _ = b.cleanup(false);
        }
    }
}
