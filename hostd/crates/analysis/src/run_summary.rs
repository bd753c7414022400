//! The per-phase figures and the all-active window as `summary.json` gives them: the
//! analysis' own ([`crate::analyze`]'s `phases` and `overlap`, computed once), with the
//! statistics of the unmeasured `prepare` writes, which the analysis leaves out, and without
//! the phases' energy, which the probe's section of the summary gives.

use crate::series::{phase_stats, Series, UNMEASURED_PHASE};
use hostd_records::events::{Analysis, PhaseStats};
use hostd_records::latency::RunLatency;
use hostd_records::summary::ActiveWindow;
use hostd_records::FileRecord;

/// The phases of `summary.json`: per target (in target order) and phase (in order of first
/// completed file), the statistics of the completed files; `files` are the run's file
/// records, `latency` their I/O latency, `analysis` the run's analysis.
pub fn phases(files: &[FileRecord], latency: &RunLatency, analysis: &Analysis) -> Vec<PhaseStats> {
    let ok: Vec<&FileRecord> = files.iter().filter(|f| f.status == "ok").collect();
    let mut keys: Vec<(usize, &str, &str)> = Vec::new();
    for f in &ok {
        let k = (f.target_index, f.target.as_str(), f.phase.as_str());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys.sort_by_key(|(t, ..)| *t);
    keys.into_iter()
        .filter_map(|(index, target, phase)| {
            if phase == UNMEASURED_PHASE {
                let mine = ok
                    .iter()
                    .filter(|f| f.target_index == index && f.phase == phase)
                    .map(|f| (*f).clone())
                    .collect();
                return Some(phase_stats(
                    &Series::new(target.to_string(), phase.to_string(), mine),
                    None,
                    latency,
                ));
            }
            let mut p = analysis
                .phases
                .iter()
                .find(|p| p.target == target && p.phase == phase)?
                .clone();
            (p.energy_j, p.j_per_gb, p.mean_power_w) = (None, None, None);
            Some(p)
        })
        .collect()
}

/// The window in which every target was in its measured steps, in MB/s (the analysis'
/// overlap); None with fewer than two targets or no common time.
pub fn window(analysis: &Analysis) -> Option<ActiveWindow> {
    ActiveWindow::of(&analysis.overlap)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(
        target_index: usize,
        phase: &str,
        index: u32,
        block_size: usize,
        bytes: u64,
    ) -> FileRecord {
        let start = 1_000_000_000 + u64::from(index) * 2_000_000_000;
        let mut f = FileRecord::new(
            &format!("/mnt/t{target_index}"),
            phase,
            index,
            start,
            start + 2_000_000_000,
            bytes,
        );
        f.target_index = target_index;
        f.block_size = block_size;
        f.queue_depth = 64;
        f
    }

    /// The summary's phases are the analysis' (the same values, energy left out), in
    /// target order, with the unmeasured `prepare` writes, which the analysis leaves out.
    #[test]
    fn the_summary_takes_the_analysis_phases_and_adds_the_prepare_writes() {
        let files = vec![
            rec(1, "prepare", 0, 1 << 20, 1 << 30),
            rec(1, "read", 1, 1 << 20, 1 << 30),
            rec(0, "RND4K-QD64-read", 0, 4096, 4096 * 300_000),
            rec(0, "RND4K-QD64-read", 1, 4096, 4096 * 100_000),
        ];
        let run = hostd_records::RunData {
            files: files.clone(),
            ..Default::default()
        };
        let a = crate::analyze(&run, &crate::Options::default());
        assert_eq!(a.phases.len(), 2);
        let p = phases(&files, &RunLatency::default(), &a);
        let names: Vec<(&str, &str)> = p
            .iter()
            .map(|p| (p.target.as_str(), p.phase.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("/mnt/t0", "RND4K-QD64-read"),
                ("/mnt/t1", "prepare"),
                ("/mnt/t1", "read")
            ]
        );
        assert_eq!(
            &p[0],
            a.phases.iter().find(|q| q.target == "/mnt/t0").unwrap()
        );
        // Small-block phases get their IOPS: 400 000 I/Os in 4 s.
        assert_eq!((p[0].block_size, p[0].queue_depth), (Some(4096), Some(64)));
        assert!(
            (p[0].iops.unwrap() - 100_000.0).abs() < 1e-6,
            "{:?}",
            p[0].iops
        );
        assert_eq!((p[1].files, p[1].bytes), (1, 1 << 30));
        assert!(window(&a).is_some_and(|w| w.targets.len() == 2));
    }
}
