//! The plan of a `fill-states` profile: for each fill level, fill the target up to it
//! (files of `file_size`, phase `fill-L%`), read that fill back and verify it
//! (`verify-L%`), then the measured write (`write-L%`: `write` bytes in files of
//! `file_size`), which stays and counts towards the next level. The runner's cleanup
//! removes every file at the end (only the run's own test directory).

use crate::profile::{align_up, ALIGN};
use crate::step::{Capacity, IoJob, Rw, Step};
use hostd_records::profile::FillStatesSpec;
use hostd_records::units::ByteSize;

/// Fewest files in a level's measured write: the analysis needs a series to find a drop in.
pub const MIN_WRITE_FILES: u64 = 8;

/// Checks a `[fill_states]` section; the error names the key and the value.
pub fn validate(f: &FillStatesSpec, block: ByteSize) -> Result<(), String> {
    if f.levels.is_empty() {
        return Err("[fill_states] levels is empty: give e.g. [0, 25, 50, 75]".into());
    }
    for (i, &l) in f.levels.iter().enumerate() {
        if !l.is_finite() || l < 0.0 {
            return Err(format!(
                "[fill_states] levels: {l} must be a percentage from 0"
            ));
        }
        if l >= 100.0 {
            return Err(format!(
                "[fill_states] levels: {l} % is 100 % or more: a full target leaves no room for the measured write"
            ));
        }
        if i > 0 && l <= f.levels[i - 1] {
            return Err(format!(
                "[fill_states] levels must rise: {l} comes after {}",
                f.levels[i - 1]
            ));
        }
    }
    if f.file_size.0 < ALIGN || f.file_size.0 < block.0 {
        return Err(format!(
            "[fill_states] file_size {} is below 4 KiB or the block size {block}",
            f.file_size
        ));
    }
    if f.write.0 / f.file_size.0 < MIN_WRITE_FILES {
        return Err(format!(
            "[fill_states] write {} is fewer than {MIN_WRITE_FILES} files of {}: too few to find a rate drop in",
            f.write, f.file_size
        ));
    }
    Ok(())
}

/// The phase of level `level` (percent): `fill-25%`, `verify-25%`, `write-25%`.
pub fn phase(what: &str, level: f64) -> String {
    format!("{what}-{}%", level_text(level))
}

/// A level as written in phase names: `25`, `12.5`.
pub fn level_text(level: f64) -> String {
    format!("{level}")
}

/// The steps and file sizes of a target with capacity `cap`; `seq` makes a sequential
/// job (rw, size, file seed).
pub fn steps(
    f: &FillStatesSpec,
    cap: Option<Capacity>,
    file_seed: u64,
    seq: impl Fn(Rw, u64, u64) -> IoJob,
) -> (Vec<u64>, Vec<Step>) {
    let cap = cap.unwrap_or(Capacity {
        total: 0,
        available: 0,
    });
    let used = cap.total.saturating_sub(cap.available);
    let chunk = align_up(f.file_size.0);
    let mut sizes: Vec<u64> = Vec::new();
    let mut steps = Vec::new();
    let mut ours = 0u64;
    for &level in &f.levels {
        let goal = (cap.total as f64 * level / 100.0) as u64;
        let need = align_up(goal.saturating_sub(used + ours));
        let first = sizes.len();
        let mut left = need;
        while left > 0 {
            let s = left.min(chunk);
            sizes.push(s);
            left -= s;
        }
        let fill = phase("fill", level);
        for (i, &size) in sizes.iter().enumerate().skip(first) {
            steps.push(step(&fill, i, seq(Rw::Write, size, file_seed + i as u64)));
        }
        let verify = phase("verify", level);
        for (i, &size) in sizes.iter().enumerate().skip(first) {
            let mut job = seq(Rw::Read, size, file_seed + i as u64);
            job.verify = true;
            steps.push(step(&verify, i, job));
        }
        ours += need;
        let write = phase("write", level);
        for _ in 0..(f.write.0 / chunk).max(1) {
            let i = sizes.len();
            sizes.push(chunk);
            steps.push(step(&write, i, seq(Rw::Write, chunk, file_seed + i as u64)));
            ours += chunk;
        }
    }
    (sizes, steps)
}

fn step(phase: &str, i: usize, job: IoJob) -> Step {
    Step {
        phase: phase.to_string(),
        index: i as u32,
        file: i as u32,
        job,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::ProfileExt;
    use hostd_records::profile::Profile;

    fn spec(levels: &[f64]) -> FillStatesSpec {
        FillStatesSpec {
            levels: levels.to_vec(),
            write: ByteSize(64 << 20),
            file_size: ByteSize(8 << 20),
        }
    }

    #[test]
    fn each_level_fills_up_to_it_verifies_the_fill_then_writes() {
        let cap = Capacity {
            total: 1 << 30,
            available: (1 << 30) - (100 << 20),
        };
        let job = |rw, size, seed| IoJob {
            rw,
            file_size: size,
            bytes: size,
            block_size: 1 << 20,
            queue_depth: 4,
            verify: false,
            pace_ns: None,
            seed,
        };
        let (sizes, steps) = steps(&spec(&[0.0, 25.0, 50.0]), Some(cap), 7, job);
        let bytes = |p: &str| -> u64 {
            steps
                .iter()
                .filter(|s| s.phase == p)
                .map(|s| s.job.bytes)
                .sum()
        };
        // 0 %: nothing to fill (100 MB used already); 64 MB measured.
        assert_eq!(bytes("fill-0%"), 0);
        assert_eq!(bytes("write-0%"), 64 << 20);
        // 25 % of 1 GiB = 256 MiB, less the 100 MiB used and the 64 MiB written.
        assert_eq!(bytes("fill-25%"), (256 - 164) << 20);
        assert_eq!(bytes("verify-25%"), bytes("fill-25%"));
        assert!(steps
            .iter()
            .filter(|s| s.phase == "verify-25%")
            .all(|s| s.job.verify && s.job.rw == Rw::Read));
        assert_eq!(bytes("fill-50%"), (512 - 256 - 64) << 20);
        assert_eq!(sizes.iter().sum::<u64>(), (512 + 64 - 100) << 20);
        // Every file written once, with its own seed.
        let written: Vec<u32> = steps
            .iter()
            .filter(|s| s.job.rw == Rw::Write)
            .map(|s| s.file)
            .collect();
        assert_eq!(written, (0..sizes.len() as u32).collect::<Vec<_>>());
    }

    #[test]
    fn a_level_of_100_percent_or_more_is_refused_naming_it() {
        let e = validate(&spec(&[0.0, 100.0]), ByteSize(1 << 20)).unwrap_err();
        assert!(e.contains("levels: 100 % is 100 % or more"), "{e}");
        let e = validate(&spec(&[50.0, 25.0]), ByteSize(1 << 20)).unwrap_err();
        assert!(e.contains("must rise"), "{e}");
        let toml = "name = \"f\"\nkind = \"fill-states\"\n[fill_states]\nlevels = [0, 120]\nwrite = \"64MiB\"\nfile_size = \"8MiB\"\n[io]\nblock_size = \"1MiB\"\nqueue_depth = 4\nphases = [\"write\"]\n";
        let e = Profile::parse(toml, "f.toml").unwrap_err().to_string();
        assert!(
            e.contains("f.toml is invalid") && e.contains("120 %"),
            "{e}"
        );
        Profile::load("fill-states").unwrap();
    }
}
