//! `kind = "certify"` in `hostd run`: the journal observer, `--resume`, the
//! gates' verdict and what is printed and kept of it.
//!
//! A certify run keeps its test files until every step has run (a stopped or
//! killed run can be resumed); the journal `certify.jsonl` in the run
//! directory holds every completed step, flushed as it completes. A resumed
//! session runs in `RUN_DIR/resume-N/` (a run directory of its own) and
//! appends to the same journal; the verdict `certify.json` covers all sessions.

use anyhow::{bail, Context};
use hostd_records::certify::{GateStatus, Journal, JournalEntry, Verdict};
use hostd_records::profile::Profile;
use hostd_records::Summary;
use hostd_records::{RunEvent, TargetInfo};
use hostd_workload::certify;
use hostd_workload::certify::Observed;
use hostd_workload::plan::Plan;
use hostd_workload::step::Capacity;
use hostd_workload::ProfileExt;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Appends every completed file step to the journal, and keeps the journal's entries in
/// memory for the verdict (the run does not read back what it appended).
pub struct JournalObserver {
    journal: Journal,
    session: u32,
    failed: AtomicBool,
    /// The earlier sessions' entries, then this one's as appended.
    entries: Mutex<Vec<JournalEntry>>,
}

impl JournalObserver {
    /// Opens `run_dir/certify.jsonl` for session `session`; `earlier` are the entries the
    /// journal holds already (a resumed run's, read before it started).
    pub fn open(
        run_dir: &Path,
        session: u32,
        earlier: Vec<JournalEntry>,
    ) -> anyhow::Result<JournalObserver> {
        let journal = Journal::open(run_dir).with_context(|| {
            format!(
                "cannot open {}",
                run_dir
                    .join(hostd_records::certify::JOURNAL_FILE_NAME)
                    .display()
            )
        })?;
        Ok(JournalObserver {
            journal,
            session,
            failed: AtomicBool::new(false),
            entries: Mutex::new(earlier),
        })
    }

    /// Every entry of the journal: the earlier sessions' and those this one appended.
    pub fn entries(&self) -> Vec<JournalEntry> {
        self.entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Records a finished file step (called from the target threads).
    pub fn on_event(&self, ev: &RunEvent) {
        if let RunEvent::FileEnd(rec) = ev {
            if let Some(entry) = certify::entry_from_record(self.session, rec) {
                // Held across the append: memory keeps the journal's order.
                let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
                if let Err(e) = self.journal.append(&entry) {
                    if !self.failed.swap(true, Ordering::Relaxed) {
                        tracing::error!(
                            "cannot append to {}: {e}; a resume would redo this step",
                            self.journal.path().display()
                        );
                    }
                } else {
                    entries.push(entry);
                }
            }
        }
    }
}

/// What `--resume RUN_DIR` takes from the interrupted run.
pub struct Resume {
    /// The original run directory (holds the journal).
    pub root: PathBuf,
    /// The original run id (names the test directories).
    pub run_id: String,
    /// The profile as recorded.
    pub profile: Profile,
    /// The seed as recorded.
    pub seed: u64,
    /// The `--target` values as recorded.
    pub targets: Vec<String>,
    /// Capacities as recorded at the start (the plan depends on them).
    pub capacity: Vec<Capacity>,
    /// Whether the run was to keep its files.
    pub keep: bool,
    /// This session's number (1 for the first resume).
    pub session: u32,
    /// Steps already done.
    pub done: BTreeSet<(usize, String, u32)>,
    /// The journal's entries when the resume started.
    pub entries: Vec<JournalEntry>,
    /// Mount source of each target at the start, to refuse another device.
    pub devices: Vec<Option<String>>,
    /// The run's notes and tags (`--note`, `--tag`), carried into every session.
    pub conditions: hostd_records::conditions::Conditions,
}

impl Resume {
    /// Reads and checks `run_dir/manifest.json` and the journal; writes nothing.
    /// `targets` are the `--target` values given with `--resume`, if any.
    pub fn load(run_dir: &Path, targets: &[String]) -> anyhow::Result<Resume> {
        let path = run_dir.join(hostd_records::manifest::FILE_NAME);
        let m = hostd_records::manifest::read(run_dir)
            .with_context(|| format!("cannot resume {}", run_dir.display()))?;
        let ours = env!("CARGO_PKG_VERSION");
        if m.hostd_version != ours {
            bail!(
                "cannot resume: {} key hostd_version = \"{}\", but this is hostd {ours}; resume with the hostd that started the run",
                path.display(),
                m.hostd_version
            );
        }
        let profile = m
            .readable_profile(&path)
            .context("cannot resume")?
            .cloned()
            .with_context(|| {
                format!(
                    "cannot resume: {} key profile is null; only certify runs can be resumed",
                    path.display()
                )
            })?;
        profile.check(&format!("{} key profile", path.display()))?;
        if profile.kind != hostd_records::profile::Kind::Certify {
            bail!(
                "cannot resume: {} key profile.kind = {:?}; only certify runs can be resumed",
                path.display(),
                profile.kind
            );
        }
        let labels: Vec<String> = m.targets.iter().map(|t| t.label.clone()).collect();
        if !targets.is_empty() && targets != labels.as_slice() {
            bail!(
                "cannot resume: --target {} is another target than {} key targets = {}",
                targets.join(" --target "),
                path.display(),
                labels.join(", ")
            );
        }
        let capacity = m
            .targets
            .iter()
            .map(|t| Capacity {
                total: t.capacity_bytes.unwrap_or(0),
                available: t.free_bytes.unwrap_or(0),
            })
            .collect();
        let devices = m.targets.iter().map(|t| t.device.clone()).collect();
        let entries = hostd_records::certify::read_journal(run_dir)?;
        let session = entries.iter().map(|e| e.session + 1).max().unwrap_or(1);
        let session = session.max(next_session(run_dir));
        Ok(Resume {
            root: run_dir.to_path_buf(),
            run_id: m.run_id,
            profile,
            seed: m.seed,
            targets: labels,
            capacity,
            keep: m.keep,
            session,
            done: certify::done(&entries),
            entries,
            devices,
            conditions: m.conditions,
        })
    }

    /// Refuses targets that are not the devices the run started on.
    pub fn check_devices(&self, now: &[TargetInfo]) -> anyhow::Result<()> {
        for ((was, t), label) in self.devices.iter().zip(now).zip(&self.targets) {
            if was.is_some() && *was != t.device {
                bail!(
                    "cannot resume: target {label} is now on {}, but {} key targets.device = {}; another target",
                    t.device.as_deref().unwrap_or("?"),
                    self.root.join("manifest.json").display(),
                    was.as_deref().unwrap_or("?")
                );
            }
        }
        Ok(())
    }

    /// Drops the steps the journal says are done.
    pub fn skip_done(&self, plan: &mut Plan) {
        for (i, t) in plan.targets.iter_mut().enumerate() {
            t.measured
                .retain(|s| !self.done.contains(&(i, s.phase.clone(), s.index)));
        }
    }
}

/// The first `resume-N` not yet used in `run_dir`.
fn next_session(run_dir: &Path) -> u32 {
    (1..)
        .find(|n| !run_dir.join(format!("resume-{n}")).exists())
        .unwrap_or(1)
}

/// Highest enclosure (probe) or drive (SMART) temperature and the highest p99.9 I/O
/// latency in the summary.
pub fn observed(summary: &Summary) -> Observed {
    let mut best: Option<(f64, String)> = None;
    let mut consider = |t: Option<f64>, from: String| {
        if let Some(t) = t.filter(|t| t.is_finite()) {
            if best.as_ref().is_none_or(|(b, _)| t > *b) {
                best = Some((t, from));
            }
        }
    };
    if let Some(probe) = summary.extra.get("probe") {
        for p in probe["phases"].as_array().into_iter().flatten() {
            consider(
                p["temp_max_c"].as_f64(),
                format!(
                    "enclosure (probe), {} {}",
                    p["target"].as_str().unwrap_or(""),
                    p["phase"].as_str().unwrap_or("")
                ),
            );
        }
    }
    // The drive's own readings around each phase: there with or without a probe.
    if let Some(drive) = summary.extra.get("drive") {
        for s in drive["smart"].as_array().into_iter().flatten() {
            consider(
                s["temperature_c"].as_f64(),
                format!("drive (SMART), {}", s["device"].as_str().unwrap_or("")),
            );
        }
    }
    // The slowest phase's p99.9 I/O latency (`phases[].latency.p99_9_ns`); None where no
    // I/O was timed (simulated targets), and the gate then says it could not be evaluated.
    let p999_latency = summary
        .phases
        .iter()
        .filter_map(|p| p.latency.as_ref().map(|l| l.p99_9_ns))
        .max()
        .map(std::time::Duration::from_nanos);
    Observed {
        temperature_c: best,
        p999_latency,
    }
}

/// Judges the whole journal (`entries`, from the [`JournalObserver`]), writes
/// `certify.json` to the run directory and the verdict into the summary; returns it.
pub fn conclude(
    profile: &Profile,
    root: &Path,
    planned: usize,
    entries: &[JournalEntry],
    summary: &mut Summary,
) -> anyhow::Result<Verdict> {
    let gates = profile.gates.clone().unwrap_or_default();
    let verdict = certify::evaluate(&gates, entries, planned, &observed(summary));
    hostd_records::certify::write_verdict(root, &verdict)?;
    summary.certify = Some(verdict.clone());
    Ok(verdict)
}

/// The verdict for the terminal: result, each gate, each corrupt block.
pub fn render(v: &Verdict, targets: &[TargetInfo]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "certify: {} ({} of {} steps, {} verified, {} corrupt bytes{})",
        v.result,
        v.steps_done,
        v.steps_planned,
        hostd_records::units::human_bytes(v.bytes_verified),
        v.corrupt_bytes,
        if v.sessions > 1 {
            format!(", {} sessions", v.sessions)
        } else {
            String::new()
        }
    );
    for g in &v.gates {
        let mark = match g.status {
            GateStatus::Pass => "pass",
            GateStatus::Fail => "FAIL",
            GateStatus::NotEvaluated => "FAIL (not evaluated)",
        };
        let _ = writeln!(
            s,
            "  gate {:<18} {:<20} measured {:<14} {mark}: {}",
            g.gate,
            g.limit,
            g.measured.as_deref().unwrap_or("—"),
            g.detail
        );
    }
    for c in &v.corrupt {
        let dir = targets
            .get(c.target_index)
            .and_then(|t| t.test_dir.clone().or(Some(t.path.clone())))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "  corrupt: {dir}/f{:05}.dat offset {} ({} bad bytes in the 4 KiB block at {}; {})",
            c.file, c.block.first_bad_byte, c.block.bad_bytes, c.block.offset, c.phase
        );
    }
    s
}

/// Removes the test files of a finished certify run (what the runner does
/// for other kinds; a certify run keeps them until it completes).
pub fn remove_test_files(targets: &[TargetInfo]) -> Vec<String> {
    let mut notes = Vec::new();
    for t in targets {
        let Some(dir) = t.test_dir.as_deref().map(Path::new) else {
            continue;
        };
        let mut removed = 0;
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let ours = name.starts_with('f') && name.ends_with(".dat");
            if ours && std::fs::remove_file(entry.path()).is_ok() {
                removed += 1;
            }
        }
        // remove_dir, not remove_dir_all: anything someone else put there stays.
        match std::fs::remove_dir(dir) {
            Ok(()) => notes.push(format!(
                "removed {removed} test files and {}",
                dir.display()
            )),
            Err(e) => notes.push(format!(
                "removed {removed} test files; {}: {e}",
                dir.display()
            )),
        }
    }
    notes
}
